import { randomUUID } from 'node:crypto';
import { LedgerPosting, LedgerRepository } from 'src/modules/ledger/ledger.repository';
import { newReference, TestDb } from 'test/integration/integration-helpers';

describe(LedgerRepository.name, () => {
  let db: TestDb;
  let sut: LedgerRepository;

  beforeAll(async () => {
    db = await TestDb.open();
    sut = db.ledger;
  });

  afterAll(() => db.close());

  const usage = (accountId: string, amount: bigint): LedgerPosting => ({
    accountId,
    kind: 'usage',
    amount,
    reference: newReference('req'),
  });

  /** postMany in a transaction of its own, as settlement runs it. */
  const postMany = (postings: LedgerPosting[]) =>
    db.dataSource.transaction((manager) => sut.postMany(manager, postings));

  describe('postMany', () => {
    it('should re-arm a sent low-balance alert once an entry leaves the balance at or above its threshold', async () => {
      const account = await db.newAccount({ balance: 50n });
      await db.dataSource.query(
        'INSERT INTO balance_alerts (account_id, threshold, alert_sent) VALUES ($1, 100, true)',
        [account],
      );
      const alertSent = async () =>
        (await db.dataSource.query('SELECT alert_sent FROM balance_alerts WHERE account_id = $1', [account]))[0]
          .alert_sent;

      await postMany([usage(account, 49n)]);
      expect(await alertSent()).toBe(true);
      await postMany([usage(account, 1n)]);
      expect(await alertSent()).toBe(false);
    });

    it('should write each entry with the balance after it, in the order given, one version per entry', async () => {
      const [a, b] = [await db.newAccount({ balance: 1_000n }), await db.newAccount({ balance: 500n })];
      const [versionA, versionB] = [(await db.balanceOf(a)).version, (await db.balanceOf(b)).version];
      const postings = [usage(a, -100n), usage(b, -50n), usage(a, 30n), usage(a, -200n), usage(b, 5n)];

      const { balances, refused } = await postMany(postings);

      expect(refused.size).toBe(0);
      expect(balances).toEqual(
        new Map([
          [a, { balance: 730n, version: versionA + 3n }],
          [b, { balance: 455n, version: versionB + 2n }],
        ]),
      );
      expect(await db.balanceOf(a)).toEqual({ balance: 730n, version: versionA + 3n });
      const entries = await db.entriesOf(a);
      expect(entries.map(({ amount, balanceAfter, reference }) => ({ amount, balanceAfter, reference }))).toEqual([
        { amount: -100n, balanceAfter: 900n, reference: postings[0].reference },
        { amount: 30n, balanceAfter: 930n, reference: postings[2].reference },
        { amount: -200n, balanceAfter: 730n, reference: postings[3].reference },
      ]);
      expect((await db.entriesOf(b)).map((entry) => entry.balanceAfter)).toEqual([450n, 455n]);
      // created_at keeps the order too, to the microsecond (a JavaScript Date keeps milliseconds only).
      const byTime = await db.dataSource.query<{ reference: string }[]>(
        'SELECT reference FROM ledger_entries WHERE reference = ANY($1::text[]) ORDER BY created_at, seq DESC',
        [postings.map((posting) => posting.reference)],
      );
      expect(byTime.map((row) => row.reference)).toEqual(postings.map((posting) => posting.reference));
      expect(await db.unbalanced([a, b])).toEqual([]);
    });

    it('should leave out whole an account whose balance would go below zero at any entry, and apply the others', async () => {
      const [short, fine] = [await db.newAccount({ balance: 100n }), await db.newAccount({ balance: 100n })];
      const before = await db.balanceOf(short);
      // Ends at 50, but is at -50 after the first entry.
      const postings = [usage(short, -150n), usage(fine, -100n), usage(short, 100n)];

      const { balances, refused } = await postMany(postings);

      expect(refused).toEqual(
        new Map([
          [0, { outcome: 'insufficient_balance' }],
          [2, { outcome: 'insufficient_balance' }],
        ]),
      );
      expect([...balances.keys()]).toEqual([fine]);
      expect(await db.balanceOf(short)).toEqual(before);
      expect(await db.entriesOf(short)).toEqual([]);
      expect((await db.balanceOf(fine)).balance).toBe(0n);
    });

    it('should refuse the postings of an account that does not exist', async () => {
      const known = await db.newAccount({ balance: 10n });

      const { refused } = await postMany([usage(randomUUID(), -1n), usage(known, -1n)]);

      expect(refused).toEqual(new Map([[0, { outcome: 'account_not_found' }]]));
      expect((await db.balanceOf(known)).balance).toBe(9n);
    });

    it('should never take a balance below zero, however many batches debit it at once', async () => {
      const account = await db.newAccount({ balance: 1_000n });

      const results = await Promise.all(
        Array.from({ length: 12 }, () => postMany([usage(account, -100n), usage(account, -100n)])),
      );

      expect(results.filter(({ refused }) => refused.size === 0)).toHaveLength(5);
      expect(results.filter(({ refused }) => refused.size === 2)).toHaveLength(7);
      expect((await db.balanceOf(account)).balance).toBe(0n);
      const entries = await db.entriesOf(account);
      expect(entries).toHaveLength(10);
      expect(entries.map((entry) => entry.balanceAfter)).toEqual([
        900n,
        800n,
        700n,
        600n,
        500n,
        400n,
        300n,
        200n,
        100n,
        0n,
      ]);
      expect(await db.unbalanced([account])).toEqual([]);
    });

    it('should leave out a posting written before, with the first entry, and apply the rest after it', async () => {
      const account = await db.newAccount({ balance: 1_000n });
      const first = usage(account, -100n);
      await postMany([first]);
      const before = await db.balanceOf(account);

      const fresh = usage(account, -50n);
      const { balances, refused } = await postMany([{ ...first, amount: -999n }, fresh]);

      expect(refused.get(0)).toEqual({
        outcome: 'replayed',
        entry: expect.objectContaining({ reference: first.reference, amount: -100n, balanceAfter: 900n }),
      });
      expect(refused.size).toBe(1);
      expect(balances.get(account)).toEqual({ balance: 850n, version: before.version + 1n });
      expect((await db.entriesOf(account)).map((entry) => entry.balanceAfter)).toEqual([900n, 850n]);
    });

    it('should apply a posting once when batches race with it: the later ones fail on the unique index', async () => {
      const account = await db.newAccount({ balance: 1_000n });
      const posting = usage(account, -100n);

      const settled = await Promise.allSettled(Array.from({ length: 6 }, () => postMany([posting])));

      const applied = settled.filter((result) => result.status === 'fulfilled' && result.value.refused.size === 0);
      expect(applied).toHaveLength(1);
      for (const result of settled) {
        if (result.status === 'rejected') {
          expect((result.reason as { driverError?: { code?: string } }).driverError?.code).toBe('23505');
        } else if (result !== applied[0]) {
          expect(result.value.refused.get(0)?.outcome).toBe('replayed');
        }
      }
      expect((await db.balanceOf(account)).balance).toBe(900n);
    });

    it('should tell postings apart by kind and reference together', async () => {
      const [payer, referrer] = [await db.newAccount({ balance: 100n }), await db.newAccount()];
      const reference = newReference('req');

      const { refused } = await postMany([
        { accountId: payer, kind: 'usage', amount: -10n, reference },
        { accountId: referrer, kind: 'referral_credit', amount: 1n, reference },
      ]);

      expect(refused.size).toBe(0);
      expect((await db.balanceOf(referrer)).balance).toBe(1n);
    });
  });

  describe('post', () => {
    it('should apply once and then return the first entry, whatever the balance has become', async () => {
      const account = await db.newAccount({ balance: 100n });
      const posting: LedgerPosting = {
        accountId: account,
        kind: 'adjustment',
        amount: -60n,
        reference: newReference('adj'),
        description: 'operator debit',
      };

      const first = await sut.post(posting);
      const version = (await db.balanceOf(account)).version;
      const again = await sut.post(posting);

      expect(first).toEqual({
        outcome: 'applied',
        entry: expect.objectContaining({ amount: -60n, balanceAfter: 40n, description: 'operator debit' }),
        version,
      });
      // The balance (40) could not take the debit again: the replay is still told apart from that.
      expect(again).toEqual({ outcome: 'replayed', entry: first.outcome === 'applied' ? first.entry : null });
      expect(await db.balanceOf(account)).toEqual({ balance: 40n, version });
    });

    it('should apply a posting once when writers race with it', async () => {
      const account = await db.newAccount({ balance: 1_000n });
      const posting: LedgerPosting = { accountId: account, kind: 'adjustment', amount: 5n, reference: newReference() };

      const results = await Promise.all(Array.from({ length: 8 }, () => sut.post(posting)));

      expect(results.map((result) => result.outcome).sort()).toEqual(['applied', ...Array(7).fill('replayed')]);
      expect((await db.balanceOf(account)).balance).toBe(1_005n);
    });

    it('should refuse debits past the balance when many are posted at once', async () => {
      const account = await db.newAccount({ balance: 1_000n });

      const results = await Promise.all(
        Array.from({ length: 10 }, () =>
          sut.post({ accountId: account, kind: 'adjustment', amount: -300n, reference: newReference() }),
        ),
      );

      expect(results.filter((result) => result.outcome === 'applied')).toHaveLength(3);
      expect(results.filter((result) => result.outcome === 'insufficient_balance')).toHaveLength(7);
      expect((await db.balanceOf(account)).balance).toBe(100n);
      expect(await db.unbalanced([account])).toEqual([]);
    });

    it('should tell a missing account and a balance too large for its column', async () => {
      const account = await db.newAccount({ balance: 1n });
      const credit = (accountId: string, amount: bigint) =>
        sut.post({ accountId, kind: 'adjustment', amount, reference: newReference() });

      await expect(credit(randomUUID(), 1n)).resolves.toEqual({ outcome: 'account_not_found' });
      await expect(credit(account, 2n ** 63n - 1n)).resolves.toEqual({ outcome: 'out_of_range' });
      expect((await db.balanceOf(account)).balance).toBe(1n);
    });
  });

  describe('queries', () => {
    it('should lock and read the balances of the accounts that exist', async () => {
      const account = await db.newAccount({ balance: 70n });

      const snapshots = await db.dataSource.transaction((manager) =>
        sut.lockBalances(manager, [randomUUID(), account]),
      );

      expect(snapshots).toEqual(new Map([[account, await db.balanceOf(account)]]));
    });

    it("should page an account's entries newest first, in the order they were applied", async () => {
      const account = await db.newAccount({ balance: 100n });
      const postings = [usage(account, -1n), usage(account, -2n), usage(account, -3n)];
      await postMany(postings);
      const allDays = { from: null, to: null };

      const firstPage = await sut.entries(account, allDays, null, 2);
      const secondPage = await sut.entries(account, allDays, firstPage[1].seq, 2);
      const today = new Date().toISOString().slice(0, 10);

      expect(firstPage.map((entry) => entry.amount)).toEqual([-3n, -2n]);
      expect(secondPage.map((entry) => entry.amount)).toEqual([-1n, 100n]);
      expect(await sut.entries(account, { from: today, to: today }, null, 10)).toHaveLength(4);
      expect(await sut.entries(account, { from: '2000-01-01', to: '2000-01-31' }, null, 10)).toEqual([]);
    });

    it('should total the entries of one kind', async () => {
      const referrer = await db.newAccount({ balance: 5n });
      const credit = (amount: bigint): LedgerPosting => ({
        accountId: referrer,
        kind: 'referral_credit',
        amount,
        reference: newReference(),
      });
      await postMany([credit(7n), credit(11n)]);

      await expect(sut.total(referrer, 'referral_credit')).resolves.toBe(18n);
      await expect(sut.total(referrer, 'topup')).resolves.toBe(0n);
    });

    it('should find the balances adjusted recently, not those only settlement moved', async () => {
      const adjusted = await db.newAccount({ balance: 5n });
      const settledOnly = await db.newAccount();
      await postMany([{ accountId: settledOnly, kind: 'referral_credit', amount: 3n, reference: newReference() }]);

      const recent = await sut.recentlyAdjustedBalances(60, 1_000);

      expect(recent.get(adjusted)).toEqual(await db.balanceOf(adjusted));
      expect(recent.has(settledOnly)).toBe(false);
    });
  });
});
