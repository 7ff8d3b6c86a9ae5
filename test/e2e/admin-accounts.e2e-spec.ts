import { randomUUID } from 'node:crypto';
import { expectError, ISO_DATE_TIME, register, Registered, useGatewayWorld, UUID } from 'test/e2e/e2e-helpers';
import { HttpResult } from 'test/support/gateway';

describe('admin API: accounts and balance adjustments', () => {
  const world = useGatewayWorld();

  const adjust = (accountId: string, body: unknown, idempotencyKey?: string): Promise<HttpResult> =>
    world.gateway.call('POST', `/admin/accounts/${accountId}/adjustments`, {
      token: world.gateway.adminToken,
      body,
      headers: idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey },
    });
  const consoleBalance = async (owner: Registered): Promise<string> => {
    const response = await world.gateway.call('GET', '/console/account', { token: owner.token });
    expect(response.status).toBe(200);
    return response.body.balance;
  };
  /** The stored balance and the sum of the account's ledger, both as exact integer strings of nano-dollars. */
  const storedBalance = async (accountId: string): Promise<{ balance: string; ledgerSum: string; entries: number }> => {
    const { rows } = await world.db.query<{ balance: string; ledger_sum: string; entries: string }>(
      `SELECT a.balance::text AS balance,
              COALESCE((SELECT SUM(amount) FROM ledger_entries WHERE account_id = a.id), 0)::text AS ledger_sum,
              (SELECT COUNT(*) FROM ledger_entries WHERE account_id = a.id)::text AS entries
         FROM accounts a WHERE a.id = $1`,
      [accountId],
    );
    expect(rows).toHaveLength(1);
    return { balance: rows[0].balance, ledgerSum: rows[0].ledger_sum, entries: Number(rows[0].entries) };
  };

  describe('adjustments', () => {
    it('should credit and debit exact decimal amounts through the ledger', async () => {
      const owner = await register(world.gateway);
      const id = owner.account.id;

      const tiny = await adjust(id, { amount: '0.000000001', reason: 'smallest unit' });
      expect(tiny.status).toBe(201);
      expect(tiny.body).toEqual({
        entry: {
          id: expect.stringMatching(UUID),
          kind: 'adjustment',
          amount: '0.000000001',
          balanceAfter: '0.000000001',
          createdAt: expect.stringMatching(ISO_DATE_TIME),
          reference: expect.any(String),
        },
        balance: '0.000000001',
      });

      const credit = await adjust(id, { amount: '12.5', reason: 'goodwill' });
      expect(credit.status).toBe(201);
      expect(credit.body.entry).toMatchObject({ kind: 'adjustment', amount: '12.5', balanceAfter: '12.500000001' });
      expect(credit.body.balance).toBe('12.500000001');

      const debit = await adjust(id, { amount: '-2.5', reason: 'correction' });
      expect(debit.status).toBe(201);
      expect(debit.body.entry).toMatchObject({ kind: 'adjustment', amount: '-2.5', balanceAfter: '10.000000001' });
      expect(debit.body.balance).toBe('10.000000001');

      expect(new Set([tiny.body.entry.id, credit.body.entry.id, debit.body.entry.id]).size).toBe(3);
      expect(await consoleBalance(owner)).toBe('10.000000001');
      expect(await storedBalance(id)).toEqual({ balance: '10000000001', ledgerSum: '10000000001', entries: 3 });
    });

    it('should keep amounts exact where floating point would not (0.1 + 0.2)', async () => {
      const owner = await register(world.gateway);
      expect((await adjust(owner.account.id, { amount: '0.1', reason: 'a' })).status).toBe(201);
      const second = await adjust(owner.account.id, { amount: '0.2', reason: 'b' });
      expect(second.body.balance).toBe('0.3');
      expect(await consoleBalance(owner)).toBe('0.3');
    });

    it('should debit the whole balance down to exactly zero', async () => {
      const owner = await register(world.gateway);
      expect((await adjust(owner.account.id, { amount: '7.25', reason: 'credit' })).status).toBe(201);
      const debit = await adjust(owner.account.id, { amount: '-7.25', reason: 'close out' });
      expect(debit.status).toBe(201);
      expect(debit.body).toMatchObject({ entry: { amount: '-7.25', balanceAfter: '0' }, balance: '0' });
      expect(await consoleBalance(owner)).toBe('0');
    });

    it('should answer 400 to a debit larger than the balance and leave the balance unchanged', async () => {
      const owner = await register(world.gateway);
      expect((await adjust(owner.account.id, { amount: '10.000000001', reason: 'credit' })).status).toBe(201);

      const response = await adjust(owner.account.id, { amount: '-10.000000002', reason: 'too much' });
      expectError(response, 400, { param: 'amount' });

      expect(await consoleBalance(owner)).toBe('10.000000001');
      expect(await storedBalance(owner.account.id)).toEqual({
        balance: '10000000001',
        ledgerSum: '10000000001',
        entries: 1,
      });
    });

    it('should answer 400 to any debit of an empty account', async () => {
      const owner = await register(world.gateway);
      expectError(await adjust(owner.account.id, { amount: '-0.000000001', reason: 'nothing there' }), 400, {
        param: 'amount',
      });
      expect(await consoleBalance(owner)).toBe('0');
      expect((await storedBalance(owner.account.id)).entries).toBe(0);
    });

    it.each([
      ['an exponent', '1e3'],
      ['ten decimals', '1.0000000001'],
      ['letters', 'abc'],
      ['an empty string', ''],
      ['zero', '0'],
      ['negative zero', '-0'],
      ['zero with decimals', '0.000000000'],
      ['a JSON number', 25],
      ['a leading plus', '+5'],
      ['surrounding spaces', ' 5 '],
      ['a trailing dot', '5.'],
      ['a leading dot', '.5'],
      ['a comma', '5,5'],
      ['hexadecimal', '0x10'],
      ['null', null],
      ['a boolean', true],
    ])('should answer 400 naming amount for %s, and change nothing', async (_case, amount) => {
      const owner = await register(world.gateway);
      expect((await adjust(owner.account.id, { amount: '1', reason: 'start' })).status).toBe(201);

      expectError(await adjust(owner.account.id, { amount, reason: 'bad amount' }), 400, { param: 'amount' });

      expect(await consoleBalance(owner)).toBe('1');
      expect((await storedBalance(owner.account.id)).entries).toBe(1);
    });

    it('should answer 400 naming amount when it is missing', async () => {
      const owner = await register(world.gateway);
      expectError(await adjust(owner.account.id, { reason: 'no amount' }), 400, { param: 'amount' });
    });

    it.each([
      ['a missing reason', { amount: '1' }, 'reason'],
      ['an empty reason', { amount: '1', reason: '' }, 'reason'],
      ['a non-string reason', { amount: '1', reason: 5 }, 'reason'],
      ['an unknown extra field', { amount: '1', reason: 'x', currency: 'USD' }, 'currency'],
    ])('should answer 400 naming the field for %s', async (_case, body, param) => {
      const owner = await register(world.gateway);
      expectError(await adjust(owner.account.id, body), 400, { param });
      expect(await consoleBalance(owner)).toBe('0');
    });

    it('should store a huge credit exactly or refuse it with 400, never answer 500', async () => {
      const owner = await register(world.gateway);
      const response = await adjust(owner.account.id, { amount: '999999999999.999999999', reason: 'huge' });
      if (response.status === 201) {
        expect(response.body.balance).toBe('999999999999.999999999');
        expect(await consoleBalance(owner)).toBe('999999999999.999999999');
      } else {
        expectError(response, 400, { param: 'amount' });
        expect(await consoleBalance(owner)).toBe('0');
      }
    });

    it('should refuse with 400, never 500, credits that would push the balance past what can be stored', async () => {
      const owner = await register(world.gateway);
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++) {
        const response = await adjust(owner.account.id, { amount: '999999999', reason: 'repeated large credit' });
        statuses.push(response.status);
        if (response.status !== 201) {
          expectError(response, 400, { param: 'amount' });
        }
      }
      expect(statuses.every((status) => status === 201 || status === 400)).toBe(true);
      const credited = BigInt(statuses.filter((status) => status === 201).length) * 999_999_999n;
      expect(await consoleBalance(owner)).toBe(credited.toString());
      const stored = await storedBalance(owner.account.id);
      expect(stored.balance).toBe(stored.ledgerSum);
    });

    it('should answer 404 for an unknown account', async () => {
      const missing = randomUUID();
      expectError(await adjust(missing, { amount: '5', reason: 'nobody' }), 404);
      const { rows } = await world.db.query('SELECT 1 FROM ledger_entries WHERE account_id = $1', [missing]);
      expect(rows).toHaveLength(0);
    });

    it.each([['not-a-uuid'], ['12345'], ['3ed793d5-3e35-4f0a-bee9-34ba99435400x']])(
      'should answer 400 naming accountId for the account id %p',
      async (badId) => {
        expectError(await adjust(badId, { amount: '5', reason: 'bad id' }), 400, { param: 'accountId' });
      },
    );

    it('should apply a replayed Idempotency-Key once and answer with the same entry', async () => {
      const owner = await register(world.gateway);
      const key = `retry-${randomUUID()}`;

      const first = await adjust(owner.account.id, { amount: '3.5', reason: 'refund' }, key);
      const second = await adjust(owner.account.id, { amount: '3.5', reason: 'refund' }, key);

      expect(first.status).toBe(201);
      expect(second.status).toBe(201);
      expect(second.body.entry).toEqual(first.body.entry);
      expect(second.body.balance).toBe('3.5');
      expect(await consoleBalance(owner)).toBe('3.5');
      expect(await storedBalance(owner.account.id)).toEqual({
        balance: '3500000000',
        ledgerSum: '3500000000',
        entries: 1,
      });

      // A different key is a different adjustment.
      const third = await adjust(owner.account.id, { amount: '3.5', reason: 'refund' }, `retry-${randomUUID()}`);
      expect(third.status).toBe(201);
      expect(third.body.entry.id).not.toBe(first.body.entry.id);
      expect(await consoleBalance(owner)).toBe('7');
    });

    it('should apply concurrent retries with one Idempotency-Key exactly once', async () => {
      const owner = await register(world.gateway);
      const key = `burst-${randomUUID()}`;
      const responses = await Promise.all(
        Array.from({ length: 10 }, () => adjust(owner.account.id, { amount: '2', reason: 'burst' }, key)),
      );
      expect(responses.map((response) => response.status)).toEqual(Array(10).fill(201));
      expect(new Set(responses.map((response) => response.body.entry.id)).size).toBe(1);
      expect(await consoleBalance(owner)).toBe('2');
      expect((await storedBalance(owner.account.id)).entries).toBe(1);
    });

    it("should not answer 201 for one account with another account's entry when an Idempotency-Key is reused", async () => {
      const first = await register(world.gateway);
      const second = await register(world.gateway);
      const key = `shared-${randomUUID()}`;
      const applied = await adjust(first.account.id, { amount: '1', reason: 'first account' }, key);
      expect(applied.status).toBe(201);

      const reused = await adjust(second.account.id, { amount: '1', reason: 'second account' }, key);
      if (reused.status === 201) {
        // Success must mean the second account was credited, with its own entry.
        expect(reused.body.entry.id).not.toBe(applied.body.entry.id);
        expect(await consoleBalance(second)).toBe('1');
      } else {
        expect(reused.status).toBeGreaterThanOrEqual(400);
        expect(reused.status).toBeLessThan(500);
        expectError(reused, reused.status);
        expect(await consoleBalance(second)).toBe('0');
      }
      expect(await consoleBalance(first)).toBe('1');
    });

    it('should refuse an Idempotency-Key reused for a different amount, and apply nothing more', async () => {
      const owner = await register(world.gateway);
      const key = `changed-${randomUUID()}`;
      expect((await adjust(owner.account.id, { amount: '2', reason: 'first' }, key)).status).toBe(201);

      const changed = await adjust(owner.account.id, { amount: '20', reason: 'first' }, key);
      expectError(changed, 409, { param: 'Idempotency-Key' });
      expect(await consoleBalance(owner)).toBe('2');
      expect((await storedBalance(owner.account.id)).entries).toBe(1);
    });

    it('should answer 400 naming Idempotency-Key when the key is unusable', async () => {
      const owner = await register(world.gateway);
      expectError(await adjust(owner.account.id, { amount: '1', reason: 'x' }, 'x'.repeat(201)), 400, {
        param: 'Idempotency-Key',
      });
      expect(await consoleBalance(owner)).toBe('0');
    });

    it('should let exactly as many concurrent debits succeed as the balance covers, never going negative', async () => {
      const owner = await register(world.gateway);
      expect((await adjust(owner.account.id, { amount: '5', reason: 'credit' })).status).toBe(201);

      const responses = await Promise.all(
        Array.from({ length: 20 }, () => adjust(owner.account.id, { amount: '-1', reason: 'concurrent debit' })),
      );
      const statuses = responses.map((response) => response.status);
      expect(statuses.filter((status) => status === 201)).toHaveLength(5);
      expect(statuses.filter((status) => status === 400)).toHaveLength(15);
      for (const response of responses.filter((r) => r.status === 400)) {
        expectError(response, 400, { param: 'amount' });
      }
      const balancesAfter = responses
        .filter((response) => response.status === 201)
        .map((response) => response.body.entry.balanceAfter)
        .sort();
      expect(balancesAfter).toEqual(['0', '1', '2', '3', '4']);

      expect(await consoleBalance(owner)).toBe('0');
      expect(await storedBalance(owner.account.id)).toEqual({ balance: '0', ledgerSum: '0', entries: 6 });
    });

    it('should keep balance equal to the sum of the ledger through mixed concurrent credits and debits', async () => {
      const owner = await register(world.gateway);
      const amounts = ['1.5', '-0.5', '2.25', '-1', '0.000000001', '-0.25', '3', '-2'];
      await Promise.all(amounts.map((amount) => adjust(owner.account.id, { amount, reason: 'mixed' })));
      const stored = await storedBalance(owner.account.id);
      expect(stored.balance).toBe(stored.ledgerSum);
      expect(BigInt(stored.balance)).toBeGreaterThanOrEqual(0n);
      const { rows } = await world.db.query<{ bad: string }>(
        `SELECT COUNT(*)::text AS bad FROM ledger_entries WHERE account_id = $1 AND balance_after < 0`,
        [owner.account.id],
      );
      expect(rows[0].bad).toBe('0');
    });
  });

  describe('search', () => {
    it('should find an account by an e-mail fragment, case-insensitively', async () => {
      const tag = randomUUID().slice(0, 13);
      const owner = await register(world.gateway, `Search-${tag}@Example.com`);

      for (const fragment of [tag, tag.toUpperCase(), `search-${tag}@example`, `SEARCH-${tag}@EXAMPLE.COM`]) {
        const response = await world.gateway.admin('GET', `/admin/accounts?email=${encodeURIComponent(fragment)}`);
        expect(response.status).toBe(200);
        expect(response.body).toEqual({ data: [owner.account] });
      }
    });

    it('should show the current balance in search results', async () => {
      const tag = randomUUID();
      const owner = await register(world.gateway, `balance-${tag}@example.com`);
      expect((await adjust(owner.account.id, { amount: '4.2', reason: 'credit' })).status).toBe(201);
      const response = await world.gateway.admin('GET', `/admin/accounts?email=${tag}`);
      expect(response.body).toEqual({ data: [{ ...owner.account, balance: '4.2' }] });
    });

    it('should find every account that matches', async () => {
      const tag = randomUUID().slice(0, 13);
      const first = await register(world.gateway, `one-${tag}@example.com`);
      const second = await register(world.gateway, `two-${tag}@example.com`);
      const response = await world.gateway.admin('GET', `/admin/accounts?email=${tag}`);
      expect(response.status).toBe(200);
      expect(response.body.data).toHaveLength(2);
      expect(response.body.data).toEqual(expect.arrayContaining([first.account, second.account]));
    });

    it('should answer an empty list when nothing matches', async () => {
      const response = await world.gateway.admin('GET', `/admin/accounts?email=nobody-${randomUUID()}`);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ data: [] });
    });

    it('should treat % and _ in the fragment as plain characters', async () => {
      const tag = randomUUID().slice(0, 13);
      const underscore = await register(world.gateway, `a_b-${tag}@example.com`);
      await register(world.gateway, `axb-${tag}@example.com`);

      const byUnderscore = await world.gateway.admin(
        'GET',
        `/admin/accounts?email=${encodeURIComponent(`a_b-${tag}`)}`,
      );
      expect(byUnderscore.body).toEqual({ data: [underscore.account] });

      const byPercent = await world.gateway.admin('GET', `/admin/accounts?email=${encodeURIComponent(`a%b-${tag}`)}`);
      expect(byPercent.body).toEqual({ data: [] });
    });

    it('should never include password hashes in search results', async () => {
      const tag = randomUUID();
      await register(world.gateway, `hash-${tag}@example.com`);
      const response = await world.gateway.admin('GET', `/admin/accounts?email=${tag}`);
      expect(response.body.data).toHaveLength(1);
      expect(response.text).not.toMatch(/scrypt|password/i);
    });

    it('should answer 400 naming the parameter for an over-long fragment or an unknown parameter', async () => {
      expectError(await world.gateway.admin('GET', `/admin/accounts?email=${'a'.repeat(321)}`), 400, {
        param: 'email',
      });
      expectError(await world.gateway.admin('GET', '/admin/accounts?mail=x'), 400, { param: 'mail' });
    });
  });
});
