import { hashRedemptionCode, normalizeRedemptionCode } from 'src/modules/payments/redemptions/redemption-codes';
import { usd } from 'test/e2e/billing-helpers';
import { expectError, ISO_DATE_TIME, UUID } from 'test/e2e/e2e-helpers';
import { usePaymentsWorld } from 'test/e2e/payments-helpers';
import { Customer } from 'test/support/gateway';

const hashOf = (code: string) => hashRedemptionCode(normalizeRedemptionCode(code)!);

describe('redemption codes', () => {
  // The API believes the loopback proxy, so each test redeems from its own client address: the
  // per-address window (30 tries a minute) must not carry over from one test to the next.
  const world = usePaymentsWorld({ env: { TRUST_PROXY: 'loopback' } });
  let nextAddress = 0;
  let address: string;
  beforeEach(() => {
    nextAddress += 1;
    address = `198.51.100.${nextAddress}`;
  });

  const createCodes = async (
    body: Record<string, unknown>,
  ): Promise<{ id: string; batchId: string; code: string; amount: string; expiresAt: string | null }[]> => {
    const response = await world.gateway.admin('POST', '/admin/redemption-codes', body);
    expect({ status: response.status, count: response.body.data?.length }).toEqual({ status: 201, count: body.count });
    return response.body.data;
  };
  const redeem = (customer: Customer, code: unknown, from = address) =>
    world.gateway.call('POST', '/console/redemptions', {
      token: customer.token,
      body: { code },
      headers: { 'x-forwarded-for': from },
    });

  describe('a batch', () => {
    it('should show 5 distinct long codes once, and keep only their hashes', async () => {
      const codes = await createCodes({ amount: '10', count: 5 });

      expect(codes).toEqual(
        Array.from({ length: 5 }, () => ({
          id: expect.stringMatching(UUID),
          batchId: codes[0].batchId,
          code: expect.any(String),
          prefix: expect.stringMatching(/^[A-Z2-9]{5}$/),
          amount: '10',
          expiresAt: null,
        })),
      );
      const typed = codes.map(({ code }) => code);
      expect(new Set(typed).size).toBe(5);
      expect(typed.every((code) => code.replace(/-/g, '').length >= 16)).toBe(true);

      const rows = await world.db.query<{ row: string }>(
        'SELECT to_jsonb(r)::text AS row FROM redemption_codes r WHERE code_hash = ANY($1::text[])',
        [typed.map(hashOf)],
      );
      expect(rows.rows).toHaveLength(5);
      for (const { row } of rows.rows) {
        for (const code of typed) {
          for (const form of [code, code.replace(/-/g, ''), code.toLowerCase(), code.replace(/-/g, '').toLowerCase()]) {
            expect(row).not.toContain(form);
          }
        }
      }
    });

    it('should show the expiry it was given', async () => {
      const expiresAt = new Date(Date.now() + 86_400_000).toISOString();

      const codes = await createCodes({ amount: '2.5', count: 1, expiresAt });

      expect(codes).toEqual([
        {
          id: expect.stringMatching(UUID),
          batchId: expect.stringMatching(UUID),
          code: expect.any(String),
          prefix: codes[0].code.slice(0, 5),
          amount: '2.5',
          expiresAt,
        },
      ]);
    });

    it.each([
      [{ amount: '0', count: 5 }, 'amount'],
      [{ amount: '-10', count: 5 }, 'amount'],
      [{ amount: '1e3', count: 5 }, 'amount'],
      [{ amount: '0.0000000001', count: 5 }, 'amount'],
      [{ amount: 10, count: 5 }, 'amount'],
      [{ count: 5 }, 'amount'],
      [{ amount: '10', count: 0 }, 'count'],
      [{ amount: '10', count: 1001 }, 'count'],
      [{ amount: '10', count: 2.5 }, 'count'],
      [{ amount: '10', count: '5' }, 'count'],
      [{ amount: '10' }, 'count'],
      [{ amount: '10', count: 5, expiresAt: new Date(Date.now() - 60_000).toISOString() }, 'expiresAt'],
      [{ amount: '10', count: 5, expiresAt: 'tomorrow' }, 'expiresAt'],
      [{ amount: '10', count: 5, note: 'promo' }, 'note'],
    ])('should refuse %j with 400 naming the field', async (body, param) => {
      const before = await world.db.query('SELECT count(*)::int AS n FROM redemption_codes');

      expectError(await world.gateway.admin('POST', '/admin/redemption-codes', body), 400, { code: null, param });

      const after = await world.db.query('SELECT count(*)::int AS n FROM redemption_codes');
      expect(after.rows[0].n).toBe(before.rows[0].n);
    });
  });

  describe('redeeming', () => {
    it('should credit the amount once through a topup ledger entry, and refuse the code after', async () => {
      const [{ code }] = await createCodes({ amount: '10', count: 1 });
      const customer = await world.gateway.newCustomer({ balance: '3' });

      const response = await redeem(customer, code);

      expect({ status: response.status, body: response.body }).toEqual({
        status: 201,
        body: {
          id: expect.any(String),
          kind: 'topup',
          amount: '10',
          balanceAfter: '13',
          createdAt: expect.stringMatching(ISO_DATE_TIME),
          reference: expect.stringMatching(UUID),
        },
      });
      expect(await world.books.balance(customer)).toBe(usd('13'));
      const [entry] = await world.books.ledger(customer);
      expect(entry).toEqual(response.body);

      const again = await redeem(customer, code);
      expectError(again, 400, { code: null, param: 'code' });
      const stranger = await world.gateway.newCustomer({ balance: '0' });
      expectError(await redeem(stranger, code), 400, { code: null, param: 'code' });
      expect(await world.books.balance(customer)).toBe(usd('13'));
      expect(await world.books.balance(stranger)).toBe(0n);
    });

    it('should count a redemption as a paid order in gateway_topups_total', async () => {
      const paidRedemptions = async () => {
        const metrics = await world.gateway.call('GET', '/metrics');
        const sample = /^gateway_topups_total\{method="redemption",status="paid"\} (\S+)$/m.exec(metrics.text);
        return Number(sample?.[1] ?? 0);
      };
      const before = await paidRedemptions();
      const [{ code }] = await createCodes({ amount: '1', count: 1 });
      const customer = await world.gateway.newCustomer({ balance: '0' });

      expect((await redeem(customer, code)).status).toBe(201);
      expectError(await redeem(customer, code), 400, { param: 'code' });

      expect(await paidRedemptions()).toBe(before + 1);
    });

    it('should show the redemption as a paid order in the top-up list', async () => {
      const [{ code }] = await createCodes({ amount: '7.25', count: 1 });
      const customer = await world.gateway.newCustomer({ balance: '0' });

      const entry = (await redeem(customer, code)).body;

      const list = await world.gateway.call('GET', '/console/topups', { token: customer.token });
      expect(list.body).toEqual({
        data: [
          {
            id: entry.reference,
            status: 'paid',
            currency: 'USD',
            method: 'redemption',
            amount: '7.25',
            credit: '7.25',
            createdAt: expect.stringMatching(ISO_DATE_TIME),
            paidAt: expect.stringMatching(ISO_DATE_TIME),
            instructions: {},
          },
        ],
        nextCursor: null,
      });
    });

    it('should take the code as typed: lower case, spaces or no dashes', async () => {
      const codes = await createCodes({ amount: '1', count: 2 });
      const customer = await world.gateway.newCustomer({ balance: '0' });

      expect((await redeem(customer, codes[0].code.toLowerCase())).status).toBe(201);
      expect((await redeem(customer, ` ${codes[1].code.replace(/-/g, ' ')} `)).status).toBe(201);

      expect(await world.books.balance(customer)).toBe(usd('2'));
    });

    it.each([
      ['an unknown code', 'ABCDE-FGHJK-LMNPQ-RSTUV'],
      ['a code of the wrong length', 'ABCDE-FGHJK'],
      ['an empty code', ''],
      ['a code with letters that are never used', 'OOOOO-IIIII-00000-11111'],
    ])('should refuse %s with 400 naming code', async (_case, code) => {
      const customer = await world.gateway.newCustomer({ balance: '0' });

      expectError(await redeem(customer, code), 400, { code: null, param: 'code' });

      expect(await world.books.balance(customer)).toBe(0n);
    });

    it.each([
      ['a number', 12345, 'code'],
      ['no code at all', undefined, 'code'],
    ])('should refuse %s with 400 naming code', async (_case, code, param) => {
      const customer = await world.gateway.newCustomer({ balance: '0' });

      expectError(await redeem(customer, code), 400, { code: null, param });
    });

    it('should refuse an expired code, naming code', async () => {
      const [{ code }] = await createCodes({
        amount: '10',
        count: 1,
        expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
      });
      await world.db.query(
        "UPDATE redemption_codes SET expires_at = now() - interval '1 second' WHERE code_hash = $1",
        [hashOf(code)],
      );
      const customer = await world.gateway.newCustomer({ balance: '0' });

      expectError(await redeem(customer, code), 400, { code: null, param: 'code' });

      expect(await world.books.balance(customer)).toBe(0n);
    });

    it('should credit exactly one of 20 accounts redeeming one code at once', async () => {
      const [{ code }] = await createCodes({ amount: '10', count: 1 });
      // One by one: the API hashes passwords with a bounded queue, and 20 sign-ups at once would overflow it.
      const customers: Customer[] = [];
      for (let index = 0; index < 20; index++) {
        customers.push(await world.gateway.newCustomer({ balance: '0' }));
      }

      const responses = await Promise.all(
        customers.map((customer, index) => redeem(customer, code, `203.0.113.${index + 1}`)),
      );

      const statuses = responses.map((response) => response.status);
      expect(statuses.filter((status) => status === 201)).toHaveLength(1);
      expect(statuses.filter((status) => status === 400)).toHaveLength(19);
      for (const refused of responses.filter((response) => response.status === 400)) {
        expectError(refused, 400, { code: null, param: 'code' });
      }
      const winner = customers[statuses.indexOf(201)];
      const entries = await world.db.query<{ account_id: string; amount: string }>(
        "SELECT account_id, amount::text AS amount FROM ledger_entries WHERE kind = 'topup' AND account_id = ANY($1::uuid[])",
        [customers.map((customer) => customer.accountId)],
      );
      expect(entries.rows).toEqual([{ account_id: winner.accountId, amount: usd('10').toString() }]);
      const row = await world.db.query('SELECT redeemed_by FROM redemption_codes WHERE code_hash = $1', [hashOf(code)]);
      expect(row.rows).toEqual([{ redeemed_by: winner.accountId }]);
      expect(await world.books.balance(winner)).toBe(usd('10'));
      // Twenty sign-ups one by one, then twenty redemptions, on a machine other test files share.
    }, 60_000);
  });

  describe('throttling', () => {
    it('should refuse the 11th try within a minute from one account with 429, even with a good code', async () => {
      const [{ code }] = await createCodes({ amount: '10', count: 1 });
      const guesser = await world.gateway.newCustomer({ balance: '0' });
      for (let attempt = 1; attempt <= 10; attempt++) {
        const wrong = await redeem(guesser, `ABCDE-FGHJK-LMNPQ-RST${'ABCDEFGHJK'[attempt - 1]}X`);
        expect({ attempt, status: wrong.status }).toEqual({ attempt, status: 400 });
      }

      const refused = await redeem(guesser, code);

      expectError(refused, 429, { type: 'requests', code: 'rate_limit_exceeded', param: null });
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(await world.books.balance(guesser)).toBe(0n);
      // The refused try did not spend the code: another account redeems it.
      const other = await world.gateway.newCustomer({ balance: '0' });
      expect((await redeem(other, code, '198.51.100.250')).status).toBe(201);
    });

    it('should refuse more than 30 tries a minute from one address, whichever accounts try', async () => {
      const guessers: Customer[] = [];
      for (let index = 0; index < 4; index++) {
        guessers.push(await world.gateway.newCustomer({ balance: '0' }));
      }
      const statuses: number[] = [];
      for (let attempt = 0; attempt < 32; attempt++) {
        statuses.push((await redeem(guessers[attempt % 4], 'ABCDE-FGHJK-LMNPQ-RSTUV')).status);
      }

      expect(statuses).toEqual([...Array<number>(30).fill(400), 429, 429]);
    });
  });
});
