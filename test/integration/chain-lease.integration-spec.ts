import { randomUUID } from 'node:crypto';
import { withChainLease } from 'src/modules/payments/chain/chain-lease';
import { TestDb } from 'test/integration/integration-helpers';

/** A network of this test's own: the run's watcher specs lease ERC20 and TRC20 in the same database. */
const newNetwork = () => `TEST-${randomUUID()}`;

describe('withChainLease', () => {
  let db: TestDb;

  beforeAll(async () => {
    db = await TestDb.open();
  });

  afterAll(async () => {
    await db.close();
  });

  const leaseOf = async (network: string) => {
    const [row] = await db.dataSource.query<{ owner: string; expires_at: Date; expired: boolean }[]>(
      'SELECT owner, expires_at, expires_at <= clock_timestamp() AS expired FROM chain_watch_leases WHERE network = $1',
      [network],
    );
    return row ?? null;
  };

  /** By the database's clock, which the lease's expiry is on. */
  const isPast = async (time: Date) => {
    const [{ past }] = await db.dataSource.query<{ past: boolean }[]>(
      'SELECT clock_timestamp() > $1::timestamptz AS past',
      [time],
    );
    return past;
  };

  /** Runs `work` under the lease, and returns once it holds it (the run's promise, and `finish`). */
  async function holdLease(network: string, ttlMs?: number) {
    let finish!: () => void;
    let started!: () => void;
    const isHeld = new Promise<void>((resolve) => (started = resolve));
    const done = new Promise<void>((resolve) => (finish = resolve));
    const run = withChainLease(
      db.dataSource,
      network,
      async () => {
        started();
        await done;
        return 'first';
      },
      { ttlMs },
    );
    await Promise.race([isHeld, run]);
    return { run, finish };
  }

  it('should let one holder at a time run, and the next one once it released', async () => {
    const network = newNetwork();
    const first = await holdLease(network);

    const second = await withChainLease(db.dataSource, network, () => Promise.resolve('second'));
    expect(second).toBeNull();

    first.finish();
    expect(await first.run).toBe('first');
    expect(await leaseOf(network)).toBeNull();
    expect(await withChainLease(db.dataSource, network, () => Promise.resolve('second'))).toBe('second');
  });

  it('should release the lease when the work fails', async () => {
    const network = newNetwork();
    await expect(withChainLease(db.dataSource, network, () => Promise.reject(new Error('chain away')))).rejects.toThrow(
      'chain away',
    );
    expect(await withChainLease(db.dataSource, network, () => Promise.resolve('next'))).toBe('next');
  });

  it("should keep a dead holder's lease until it expires, then give it to the next", async () => {
    const network = newNetwork();
    // What a worker killed mid-run leaves: its row, with the expiry of its last renewal.
    await db.dataSource.query(
      `INSERT INTO chain_watch_leases (network, owner, expires_at) VALUES ($1, 'dead-worker', clock_timestamp() + interval '1 hour')`,
      [network],
    );
    expect(await withChainLease(db.dataSource, network, () => Promise.resolve('taken'))).toBeNull();

    await db.dataSource.query(
      `UPDATE chain_watch_leases SET expires_at = clock_timestamp() - interval '1 second' WHERE network = $1`,
      [network],
    );
    expect(await withChainLease(db.dataSource, network, () => Promise.resolve('taken'))).toBe('taken');
    expect(await leaseOf(network)).toBeNull();
  });

  it("should renew a live holder's lease, so that it outlasts its first expiry", async () => {
    const network = newNetwork();
    const first = await holdLease(network, 3_000);
    try {
      const taken = await leaseOf(network);
      // Past the expiry it was taken with: only a renewal keeps it from the next taker.
      await waitFor(() => isPast(taken.expires_at));
      const now = await leaseOf(network);
      expect(now).toMatchObject({ owner: taken.owner, expired: false });
      expect(
        await withChainLease(db.dataSource, network, () => Promise.resolve('second'), { ttlMs: 3_000 }),
      ).toBeNull();
    } finally {
      first.finish();
      await first.run;
    }
  });
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) {
      throw new Error('the condition did not come true in time');
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
