import { ChildProcess } from 'node:child_process';
import { eventually } from 'test/e2e/e2e-helpers';
import { Entrypoint, EntrypointProcess, spawnEntrypoint } from 'test/support/entrypoint-process';
import { freePort } from 'test/e2e/rate-limits-helpers';

const PASSWORD = 'redis-password-never-logged';

/** A real entrypoint in its own process, with REDIS_URL pointing at a port nobody listens on. */
function spawnWithRedis(entrypoint: Entrypoint, env: Record<string, string>): EntrypointProcess {
  return spawnEntrypoint(entrypoint, { NODE_ENV: 'test', LOG_LEVEL: 'info', ...env });
}

function redisErrorLines(output: EntrypointProcess): Record<string, any>[] {
  return output
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, any>)
    .filter((line) => line.msg === 'redis error');
}

const perClient = (lines: Record<string, any>[]) =>
  lines.reduce<Record<string, number>>(
    (counts, line) => ({ ...counts, [line.client]: (counts[line.client] ?? 0) + 1 }),
    {},
  );

/** Redis unreachable: every client says so in one log line, not a stack trace on stderr per attempt. */
describe('Redis connection errors', () => {
  const running: ChildProcess[] = [];
  let redisUrl: string;

  beforeAll(async () => {
    redisUrl = `redis://:${PASSWORD}@127.0.0.1:${await freePort()}/3`;
  });
  afterEach(() => {
    for (const child of running.splice(0)) {
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
        process.kill(child.pid, 'SIGKILL');
      }
    }
  });

  function expectQuietStderr(output: EntrypointProcess): void {
    expect(output.stderr()).not.toContain('Unhandled error event');
    expect(output.stderr()).not.toMatch(/^\s+at /m);
    expect(output.output()).not.toContain(PASSWORD);
  }

  it('should log one structured line per API client, rate-limited, with no stack and no password', async () => {
    const port = await freePort();
    const api = spawnWithRedis('main', { REDIS_URL: redisUrl, PORT: String(port) });
    running.push(api.child);
    const expected = ['commands', 'invalidation subscriber', 'queue billing'];
    await eventually(
      () => Promise.resolve(perClient(redisErrorLines(api))),
      (counts) => expected.every((client) => counts[client] >= 1) || api.child.exitCode !== null,
      40_000,
      200,
    );
    // Several seconds of reconnect attempts, each one an error event.
    await new Promise((resolve) => setTimeout(resolve, 3_000));

    expectQuietStderr(api);
    const lines = redisErrorLines(api);
    const counts = perClient(lines);
    for (const client of expected) {
      expect(counts[client]).toBe(1);
    }
    for (const line of lines) {
      expect(line).toMatchObject({ level: 50, code: 'ECONNREFUSED', err: expect.stringContaining('ECONNREFUSED') });
      expect(line).not.toHaveProperty('stack');
    }
  }, 60_000);

  it('should log the worker’s clients the same way, its BullMQ worker included', async () => {
    const worker = spawnWithRedis('worker', { REDIS_URL: redisUrl });
    running.push(worker.child);
    const expected = ['commands', 'queue billing', 'worker billing'];
    await eventually(
      () => Promise.resolve(perClient(redisErrorLines(worker))),
      (counts) => expected.every((client) => counts[client] >= 1) || worker.child.exitCode !== null,
      40_000,
      200,
    );
    await new Promise((resolve) => setTimeout(resolve, 1_000));

    expectQuietStderr(worker);
    const counts = perClient(redisErrorLines(worker));
    for (const client of expected) {
      expect(counts[client]).toBe(1);
    }
  }, 60_000);
});
