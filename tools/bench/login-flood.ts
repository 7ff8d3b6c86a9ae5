import { randomUUID } from 'node:crypto';
import { percentiles, Percentiles, round } from 'tools/bench/load-result';

/** What a login flood got from the gateway while a scenario ran. */
export interface LoginFloodResult {
  clients: number;
  loginsPerSec: number;
  /** Every answer, by status: 401 (the password was checked), 503 (refused before hashing), 429 (throttled). */
  statusCodes: Record<string, number>;
  latencyMs: Percentiles | null;
}

export interface LoginFlood {
  stop(): Promise<LoginFloodResult>;
}

/**
 * `clients` loops, each sending the next login as soon as the last one is answered: unknown e-mails,
 * wrong passwords, the way a credential-stuffing run looks. Each login costs the gateway one scrypt
 * hash, so this measures what a flood of them does to the completions running beside it.
 */
export function startLoginFlood(origin: string, clients: number): LoginFlood {
  let running = true;
  const started = performance.now();
  const statusCodes: Record<string, number> = {};
  const latencies: number[] = [];
  const loop = async () => {
    while (running) {
      const sent = performance.now();
      const status = await fetch(`${origin}/console/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: `flood-${randomUUID()}@example.com`, password: 'not-the-password' }),
      }).then(
        async (response) => {
          await response.arrayBuffer();
          return String(response.status);
        },
        () => 'error',
      );
      latencies.push(performance.now() - sent);
      statusCodes[status] = (statusCodes[status] ?? 0) + 1;
    }
  };
  const loops = Array.from({ length: clients }, loop);
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
      const seconds = (performance.now() - started) / 1000;
      return {
        clients,
        loginsPerSec: round(latencies.length / seconds, 1),
        statusCodes,
        latencyMs: percentiles(latencies),
      };
    },
  };
}
