import Redis from 'ioredis';
import { once } from 'node:events';
import { EncodedFunction, FunctionSource } from 'src/common/redis/encoded-function';
import { OwnRedis } from 'test/e2e/outage-helpers';

// A library whose state is the number of times it ran since Redis loaded it, and the run id it read.
const COUNTING: FunctionSource = {
  library: `local calls = 0
local serverRunId
local function runId()
  if not serverRunId then serverRunId = string.match(redis.call('INFO', 'server'), 'run_id:(%w+)') end
  return serverRunId
end`,
  body: `calls = calls + 1
return {calls, runId(), KEYS[1], ARGV[1]}`,
};
// The same work as a script: no state survives a call.
const COUNTING_SCRIPT = `local runId = string.match(redis.call('INFO', 'server'), 'run_id:(%w+)')
return {1, runId, KEYS[1], ARGV[1]}`;

type Reply = [number, string, string, string];

/** Three calls one after the other, with `call 1`, `call 2`, `call 3` as their argument. */
async function threeCallsIn(client: Redis, counting: EncodedFunction, key: string): Promise<Reply[]> {
  const replies: Reply[] = [];
  for (const n of [1, 2, 3]) {
    replies.push(await counting.run<Reply>(client, [1, key, `call ${n}`]));
  }
  return replies;
}

/**
 * The admission's way of running: a function where the server has them, the script where it does
 * not, against Redis servers of this file's own (their functions and statistics are this file's alone).
 */
describe(EncodedFunction.name, () => {
  let server: OwnRedis;
  let redis: Redis;

  beforeAll(async () => {
    server = await OwnRedis.start(['--save', '', '--appendonly', 'no']);
  });
  beforeEach(async () => {
    redis = new Redis(server.url, { maxRetriesPerRequest: 2 });
    await redis.function('FLUSH');
    await redis.config('RESETSTAT');
  });
  afterEach(() => redis.disconnect());
  afterAll(() => server.close());

  const runIdOf = async (client: Redis) => /run_id:(\w+)/.exec(await client.info('server'))?.[1];

  /** Calls of each command since the test began (a script's own commands included). */
  async function calls(client: Redis): Promise<Record<string, number>> {
    const stats = await client.info('commandstats');
    const count = (name: string) => Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
    return {
      fcall: count('fcall'),
      eval: count('eval') + count('evalsha'),
      info: count('info'),
      load: count('function\\|load'),
    };
  }

  it('should run as a function that keeps its state between calls, loaded once by its first call', async () => {
    const counting = EncodedFunction.define(redis, 'testCounting', COUNTING_SCRIPT, COUNTING);

    const replies = await threeCallsIn(redis, counting, 'gw:{a}:k');

    const runId = await runIdOf(redis);
    expect(replies).toEqual([
      [1, runId, 'gw:{a}:k', 'call 1'],
      [2, runId, 'gw:{a}:k', 'call 2'],
      [3, runId, 'gw:{a}:k', 'call 3'],
    ]);
    // The first FCALL found no library, loaded it and was sent again; the run id was read once (and
    // once more by this test, with INFO server).
    expect(await calls(redis)).toEqual({ fcall: 4, eval: 0, info: 2, load: 1 });
  });

  it('should load its library again, and read the new run id, after Redis restarted empty', async () => {
    const counting = EncodedFunction.define(redis, 'testCounting', COUNTING_SCRIPT, COUNTING);
    const before = await counting.run<Reply>(redis, [1, 'k', 'before']);

    await server.kill();
    await server.restart();
    await once(redis, 'ready');
    const after = await counting.run<Reply>(redis, [1, 'k', 'after']);

    expect(after[1]).not.toBe(before[1]);
    expect(after).toEqual([1, await runIdOf(redis), 'k', 'after']);
  });

  it('should load its library again when the functions were flushed under a live connection', async () => {
    const counting = EncodedFunction.define(redis, 'testCounting', COUNTING_SCRIPT, COUNTING);
    await counting.run(redis, [1, 'k', 'first']);

    await redis.function('FLUSH');
    const second = await counting.run<Reply>(redis, [1, 'k', 'second']);
    const third = await counting.run<Reply>(redis, [1, 'k', 'third']);

    expect([second[0], third[0]]).toEqual([1, 2]);
  });

  it('should load the library once for calls that all found it missing', async () => {
    const counting = EncodedFunction.define(redis, 'testCounting', COUNTING_SCRIPT, COUNTING);

    const replies = await Promise.all([1, 2, 3, 4, 5].map((n) => counting.run<Reply>(redis, [1, 'k', `${n}`])));

    expect(replies.map((reply) => reply[0]).sort()).toEqual([1, 2, 3, 4, 5]);
    expect((await calls(redis)).load).toBe(1);
  });

  it('should name its library after its source, so that two versions run side by side', async () => {
    const older = EncodedFunction.define(redis, 'testCounting', COUNTING_SCRIPT, COUNTING);
    const newer = EncodedFunction.define(redis, 'testCounting', COUNTING_SCRIPT, {
      ...COUNTING,
      body: COUNTING.body.replace('{calls,', '{-calls,'),
    });

    const replies = [await older.run<Reply>(redis, [1, 'k', 'a']), await newer.run<Reply>(redis, [1, 'k', 'b'])];
    replies.push(await older.run<Reply>(redis, [1, 'k', 'c']));

    expect(replies.map((reply) => reply[0])).toEqual([1, -1, 2]);
    expect(await redis.function('LIST')).toHaveLength(2);
  });

  it("should reject with the function's error, without the arguments it was given", async () => {
    const refusing = EncodedFunction.define(redis, 'testRefuse', `return redis.error_reply('refused')`, {
      library: '',
      body: `return redis.error_reply('refused: ' .. KEYS[1])`,
    });

    const failure = await refusing.run(redis, [1, 'gw:{a}:k', 'a usage payload']).catch((error: Error) => error);

    expect((failure as Error).message).toBe('refused: gw:{a}:k');
    expect(JSON.stringify(failure)).not.toContain('a usage payload');
  });

  describe('on a Redis without functions', () => {
    let old: OwnRedis;
    let client: Redis;

    beforeAll(async () => {
      // As Redis 6 answers: FUNCTION and FCALL are unknown commands.
      old = await OwnRedis.start(['--save', '', '--rename-command', 'FUNCTION', '', '--rename-command', 'FCALL', '']);
    });
    beforeEach(() => {
      client = new Redis(old.url, { maxRetriesPerRequest: 2 });
    });
    afterEach(() => client.disconnect());
    afterAll(() => old.close());

    it('should run the script instead, and not try the function again', async () => {
      const counting = EncodedFunction.define(client, 'testCounting', COUNTING_SCRIPT, COUNTING);

      const replies = await threeCallsIn(client, counting, 'k');

      const runId = await runIdOf(client);
      expect(replies).toEqual([1, 2, 3].map((n) => [1, runId, 'k', `call ${n}`]));
      const stats = await client.info('commandstats');
      expect(stats).toMatch(/cmdstat_eval:calls=1,/);
      expect(stats).toMatch(/cmdstat_evalsha:calls=2,/);
    });
  });

  describe('for a user whose ACL refuses functions', () => {
    it.each([
      ['loading and calling them', ['-function', '-fcall'], 0],
      ['calling them, not loading them', ['-fcall'], 1],
    ])('should run the script instead, refused %s, and load the library at most once', async (_, rules, loads) => {
      await redis.acl('SETUSER', 'nofunctions', 'reset', 'on', '>secret', '~*', '&*', '+@all', ...rules);
      const limited = new Redis(server.url.replace('redis://', 'redis://nofunctions:secret@'), {
        maxRetriesPerRequest: 2,
      });
      try {
        const counting = EncodedFunction.define(limited, 'testCounting', COUNTING_SCRIPT, COUNTING);

        const replies = [];
        for (const call of ['a', 'b', 'c']) {
          replies.push(await counting.run<Reply>(limited, [1, 'k', call]));
        }

        expect(replies.map((reply) => reply[0])).toEqual([1, 1, 1]);
        expect(await calls(redis)).toMatchObject({ eval: 3, load: loads });
      } finally {
        limited.disconnect();
      }
    });
  });
});
