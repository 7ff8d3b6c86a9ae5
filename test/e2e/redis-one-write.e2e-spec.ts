import Redis from 'ioredis';
import { Socket } from 'node:net';
import { inOneWrite } from 'src/common/redis/one-write';

/**
 * The admission and usage-record path batches its Redis commands per event-loop turn. Against the
 * run's real Redis: what leaves in one write, what does not, and that every reply still reaches
 * its own caller.
 */
describe('Redis commands in one write per event-loop turn', () => {
  let redis: Redis;
  let socketWrites: number;

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
    const first = inOneWrite(redis, () => Promise.all([redis.set('one-write:a', '1'), redis.incrby('one-write:n', 2)]));
    const second = inOneWrite(redis, () => redis.incrby('one-write:n', 3));
    const third = inOneWrite(redis, () => redis.get('one-write:a'));

    await expect(Promise.all([first, second, third])).resolves.toEqual([['OK', 2], 5, '1']);
    expect(socketWrites).toBe(1);
  });

  it('sends a later turn its own write', async () => {
    await inOneWrite(redis, () => redis.set('one-write:b', 'x'));
    await nextTurn();
    await inOneWrite(redis, () => redis.get('one-write:b'));

    expect(socketWrites).toBe(2);
  });

  it('leaves the write to the turn it was called in: a lone call is answered before the next timer', async () => {
    let answered = false;
    void inOneWrite(redis, () => redis.ping()).then(() => (answered = true));
    const sentThisTurn = await new Promise<number>((resolve) => setImmediate(() => resolve(socketWrites)));

    expect(sentThisTurn).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(answered).toBe(true);
  });

  it('a command that fails rejects only its own caller', async () => {
    await redis.set('one-write:text', 'not a number');
    socketWrites = 0;
    const failing = inOneWrite(redis, () => redis.incr('one-write:text'));
    const fine = inOneWrite(redis, () => redis.incr('one-write:counter'));

    await expect(failing).rejects.toThrow(/not an integer/);
    await expect(fine).resolves.toBe(1);
    expect(socketWrites).toBe(1);
  });
});
