import { createHash, timingSafeEqual } from 'node:crypto';

const sha256 = (text: string) => createHash('sha256').update(text).digest();

/**
 * Who may read the API's /metrics: anyone when no METRICS_TOKEN is set (today's behaviour, for a
 * private network), otherwise only `Authorization: Bearer <token>`. Digests are compared in constant
 * time, so the answer's timing reveals nothing about the token, not even its length.
 */
export class MetricsToken {
  private readonly digest: Buffer | null;

  constructor(token: string | null) {
    this.digest = token === null ? null : sha256(token);
  }

  allows(authorization: string | undefined): boolean {
    if (this.digest === null) {
      return true;
    }
    const presented = authorization?.startsWith('Bearer ') ? authorization.slice(7) : '';
    return timingSafeEqual(sha256(presented), this.digest);
  }
}
