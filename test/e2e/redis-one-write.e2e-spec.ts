import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { Socket } from 'node:net';
import { inOneWrite, writeOfTurn, writesNow } from 'src/common/redis/one-write';

/**
 * The admission and usage-record path batches its Redis commands per event-loop turn. Against the
 * run's real Redis: what leaves in one write, what does not, and that every reply still reaches
 * its own caller.
 */
describe('Redis commands in one write per event-loop turn', () => {
  let redis: Redis;
  let socketWrites: number;
  // Fresh keys each run, so the counts below hold on a retry too.
  const runId = randomUUID();
  const key = (name: string) => `one-write:${runId}:${name}`;

  beforeAll(async () => {
    redis = new Redis(process.env.REDIS_URL as string);
    await redis.ping();
    // Each call of these is one send on the socket: several commands in one means one syscall.
    const socket = redis.stream as Socket & { _write: Socket['_write']; _writev: Socket['_writev'] };
    const write = socket._write.bind(socket);
    const writev = socket._writev?.bind(socket);
    socket._write = (...args) => {
      socketWrites += 1;
      write(...args);
    };
    socket._writev = (...args) => {
      socketWrites += 1;
      writev?.(...args);
    };
  });
  afterAll(async () => {
    await redis?.quit();
  });
  beforeEach(() => {
    socketWrites = 0;
  });

  const nextTurn = () => new Promise((resolve) => setTimeout(resolve, 0));

  it('sends the commands of every call in the same turn in one write, each reply to its caller', async () => {
    const first = inOneWrite(redis, () => Promise.all([redis.set(key('a'), '1'), redis.incrby(key('n'), 2)]));
    const second = inOneWrite(redis, () => redis.incrby(key('n'), 3));
    const third = inOneWrite(redis, () => redis.get(key('a')));

    await expect(Promise.all([first, second, third])).resolves.toEqual([['OK', 2], 5, '1']);
    expect(socketWrites).toBe(1);
  });

  it('sends a later turn its own write', async () => {
    await inOneWrite(redis, () => redis.set(key('b'), 'x'));
    await nextTurn();
    await inOneWrite(redis, () => redis.get(key('b')));

    expect(socketWrites).toBe(2);
  });

  it('sends a lone call within its own turn and answers it', async () => {
    const answer = inOneWrite(redis, () => redis.ping());
    const sentThisTurn = await new Promise<number>((resolve) => setImmediate(() => resolve(socketWrites)));

    expect(sentThisTurn).toBe(1);
    await expect(answer).resolves.toBe('PONG');
  });

  it('a command that fails rejects only its own caller', async () => {
    await redis.set(key('text'), 'not a number');
    socketWrites = 0;
    const failing = inOneWrite(redis, () => redis.incr(key('text')));
    const fine = inOneWrite(redis, () => redis.incr(key('counter')));

    await expect(failing).rejects.toThrow(/not an integer/);
    await expect(fine).resolves.toBe(1);
    expect(socketWrites).toBe(1);
  });

  it("tells when the turn's write has left the process, before any reply", async () => {
    let replied = false;
    const reply = inOneWrite(redis, () => redis.set(key('c'), '1')).then(() => (replied = true));
    expect(socketWrites).toBe(0);

    await writeOfTurn(redis);

    expect(socketWrites).toBe(1);
    expect(replied).toBe(false);
    await reply;
  });

  it('says whether a command issued now is written at once or would wait for a connection', async () => {
    const client = new Redis(process.env.REDIS_URL as string, { lazyConnect: true });
    expect(writesNow(client)).toBe(false);
    await client.connect();
    expect(writesNow(client)).toBe(true);
    client.disconnect();
    expect(writesNow(client)).toBe(false);
  });
});
