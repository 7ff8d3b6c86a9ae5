import { rawJsonOf } from 'src/common/http/json-body';

/**
 * A request's body for the life of its relay. Once a stream has reached its client there is no route
 * left to try, and the body is needed only to bill it should the upstream report no usage (the closer
 * bound, HeldTokens.closer). A long prompt is then kept once, as the bytes it arrived in (outside the
 * JavaScript heap), instead of as those bytes plus its parsed text for as long as the stream lasts:
 * a 32 KB prompt held a stream ~100 KB heavier (docs/performance.md, "Large bodies stay bytes").
 */
export class RelayedPrompt {
  private readonly bytes: Buffer | undefined;
  private dropped = false;

  /** `request` is what carries the parsed body (Fastify's request): dropping the body drops it there too. */
  constructor(private readonly request: { body: unknown }) {
    const body = request.body;
    this.bytes = typeof body === 'object' && body !== null ? rawJsonOf(body)?.bytes : undefined;
  }

  /** The parsed body: as received, or parsed again from its bytes once dropped. */
  get body(): Record<string, unknown> {
    const body: unknown = this.dropped ? JSON.parse((this.bytes as Buffer).toString('utf8')) : this.request.body;
    return body as Record<string, unknown>;
  }

  /**
   * Drops the parsed body when its bytes can stand for it; a body with no bytes (one the gateway built,
   * or text that was not valid UTF-8) stays. The caller must hold no other reference to the body.
   */
  dropParsed(): void {
    if (this.bytes) {
      this.request.body = undefined;
      this.dropped = true;
    }
  }
}
