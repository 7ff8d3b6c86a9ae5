import Redis from 'ioredis';
import { once } from 'node:events';
import { EncodedScript } from 'src/common/redis/encoded-script';
import { inOneWrite } from 'src/common/redis/one-write';
import { OwnRedis } from 'test/e2e/outage-helpers';

const ECHO = `return {#KEYS, KEYS[1], ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])}`;

/**
 * The request path's scripts, encoded by the gateway and answered through ioredis, against a Redis
 * of this file's own: its script cache and its command statistics are this file's alone.
 */
describe(EncodedScript.name, () => {
  let server: OwnRedis;
  let redis: Redis;

  beforeAll(async () => {
    server = await OwnRedis.start(['--save', '', '--appendonly', 'no']);
  });
  beforeEach(async () => {
    redis = new Redis(server.url, { maxRetriesPerRequest: 2 });
    await redis.config('RESETSTAT');
    await redis.script('FLUSH');
  });
  afterEach(() => redis.disconnect());
  afterAll(() => server.close());

  /** Calls and failed calls of EVAL and EVALSHA since the test began. */
  async function scriptCalls(): Promise<Record<string, number>> {
    const stats = await redis.info('commandstats');
    const count = (name: string, field: string) =>
      Number(new RegExp(`cmdstat_${name}:.*?\\b${field}=(\\d+)`).exec(stats)?.[1] ?? 0);
    return {
      eval: count('eval', 'calls'),
      evalsha: count('evalsha', 'calls'),
      refused: ['eval', 'evalsha'].reduce(
        (sum, name) => sum + count(name, 'failed_calls') + count(name, 'rejected_calls'),
        0,
      ),
    };
  }

  it('should pass every argument byte for byte and answer as a defined command does', async () => {
    const script = EncodedScript.define(redis, 'testEcho', ECHO);
    const args = [1, 'gw:{a}:k', 'naïve 文字 🎉', '', '{"a":"\r\n$3\r\n*2"}', 42];

    const reply = await script.run(redis, args);

    expect(reply).toEqual([1, 'gw:{a}:k', 'naïve 文字 🎉', '', '{"a":"\r\n$3\r\n*2"}', 42]);
    expect(reply).toEqual(await (redis as unknown as Record<string, (...a: unknown[]) => unknown>).testEcho(...args));
  });

  it("should send the script's text on a connection's first use and its hash after, refused by nothing", async () => {
    const script = EncodedScript.define(redis, 'testEcho', ECHO);

    const replies = await Promise.all([1, 2, 3].map((n) => script.run(redis, [1, 'k', 'a', 'b', 'c', n])));

    expect(replies.map((reply) => (reply as number[])[5])).toEqual([1, 2, 3]);
    // The RESETSTAT and SCRIPT FLUSH of beforeEach were this connection's first commands.
    expect(await scriptCalls()).toEqual({ eval: 1, evalsha: 2, refused: 0 });
  });

  it('should send the text again on a new connection to a Redis that restarted empty', async () => {
    const script = EncodedScript.define(redis, 'testEcho', ECHO);
    await script.run(redis, [1, 'k', 'before', '', '', 0]);

    await server.kill();
    await server.restart();
    await once(redis, 'ready');
    // Issued with others in one write, as the request path issues it: nothing may fail and be retried.
    const reply = await inOneWrite(redis, () => script.run(redis, [1, 'k', 'after', '', '', 1]));

    expect((reply as string[])[2]).toBe('after');
    expect(await scriptCalls()).toEqual({ eval: 1, evalsha: 0, refused: 0 });
  });

  it('should send the text again when the scripts were flushed under a live connection', async () => {
    const script = EncodedScript.define(redis, 'testEcho', ECHO);
    await script.run(redis, [1, 'k', 'first', '', '', 0]);

    await redis.script('FLUSH');
    const reply = await script.run(redis, [1, 'k', 'second', '', '', 1]);
    const after = await script.run(redis, [1, 'k', 'third', '', '', 2]);

    expect([(reply as string[])[2], (after as string[])[2]]).toEqual(['second', 'third']);
    // The first EVAL, the EVALSHA refused with NOSCRIPT, the text sent again, then the hash again.
    expect(await scriptCalls()).toEqual({ eval: 2, evalsha: 2, refused: 1 });
  });

  it("should reject with the script's error, without the arguments it was given", async () => {
    const script = EncodedScript.define(redis, 'testRefuse', `return redis.error_reply('refused: ' .. KEYS[1])`);

    const failure = await script.run(redis, [1, 'gw:{a}:k', 'a usage payload']).catch((error: Error) => error);

    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toBe('refused: gw:{a}:k');
    expect(JSON.stringify(failure)).not.toContain('a usage payload');
  });
});
