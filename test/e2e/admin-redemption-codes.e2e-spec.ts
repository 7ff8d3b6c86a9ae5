import { randomUUID } from 'node:crypto';
import {
  hashRedemptionCode,
  newRedemptionCode,
  normalizeRedemptionCode,
} from 'src/modules/payments/redemptions/redemption-codes';
import { expectError, UUID } from 'test/e2e/e2e-helpers';
import { usePaymentsWorld } from 'test/e2e/payments-helpers';
import { Customer } from 'test/support/gateway';

interface Made {
  id: string;
  batchId: string;
  code: string;
  prefix: string;
}

describe('operators and redemption codes (list, void, batch CSV)', () => {
  const world = usePaymentsWorld({ env: { TRUST_PROXY: 'loopback' } });
  let nextAddress = 0;

  const makeBatch = async (count: number, amount = '3'): Promise<Made[]> => {
    const response = await world.gateway.admin('POST', '/admin/redemption-codes', { amount, count });
    expect(response.status).toBe(201);
    return response.body.data;
  };
  // Each redemption from its own address: the per-address window must not fill up across tests.
  const redeem = (customer: Customer, code: string) =>
    world.gateway.call('POST', '/console/redemptions', {
      token: customer.token,
      body: { code },
      headers: { 'x-forwarded-for': `203.0.113.${++nextAddress}` },
    });
  const list = async (query: string) => {
    const response = await world.gateway.admin('GET', `/admin/redemption-codes?${query}`);
    expect(response.status).toBe(200);
    return response.body as { data: Record<string, any>[]; nextCursor: string | null };
  };

  it('should list a batch by prefix and state, newest first, and never show a code again', async () => {
    const codes = await makeBatch(3);
    const customer = await world.gateway.newCustomer({ balance: '0' });
    expect((await redeem(customer, codes[0].code)).status).toBe(201);

    const page = await list(`batchId=${codes[0].batchId}`);
    expect(page.data).toHaveLength(3);
    expect(new Set(page.data.map((row) => row.id))).toEqual(new Set(codes.map((code) => code.id)));
    const redeemed = page.data.find((row) => row.id === codes[0].id)!;
    expect(redeemed).toMatchObject({
      batchId: codes[0].batchId,
      prefix: codes[0].code.slice(0, 5),
      amount: '3',
      status: 'redeemed',
      redeemedBy: customer.accountId,
      voidedAt: null,
    });
    for (const { code } of codes) {
      expect(JSON.stringify(page)).not.toContain(code);
    }
    expect((await list(`batchId=${codes[0].batchId}&status=active`)).data).toHaveLength(2);
    expect((await list(`batchId=${codes[0].batchId}&status=redeemed`)).data.map((row) => row.id)).toEqual([
      codes[0].id,
    ]);

    const first = await list(`batchId=${codes[0].batchId}&limit=2`);
    const second = await list(`batchId=${codes[0].batchId}&limit=2&cursor=${first.nextCursor}`);
    expect([...first.data, ...second.data].map((row) => row.id).sort()).toEqual(codes.map((c) => c.id).sort());
    expect(second.nextCursor).toBeNull();
  });

  it('should refuse a voided code like an unknown one, and not void a redeemed one', async () => {
    const [kept, voided] = await makeBatch(2);
    const customer = await world.gateway.newCustomer({ balance: '0' });

    const response = await world.gateway.admin('POST', `/admin/redemption-codes/${voided.id}/void`);
    expect(response.body).toMatchObject({ id: voided.id, status: 'voided', voidedAt: expect.any(String) });
    expectError(await redeem(customer, voided.code), 400, { code: null, param: 'code' });
    // Voiding again changes nothing.
    expect((await world.gateway.admin('POST', `/admin/redemption-codes/${voided.id}/void`)).body.voidedAt).toBe(
      response.body.voidedAt,
    );

    expect((await redeem(customer, kept.code)).status).toBe(201);
    expectError(await world.gateway.admin('POST', `/admin/redemption-codes/${kept.id}/void`), 409, {
      code: 'code_redeemed',
    });
    const balance = (await world.gateway.call('GET', '/console/account', { token: customer.token })).body.balance;
    expect(balance).toBe('3');
    expectError(await world.gateway.admin('POST', `/admin/redemption-codes/${randomUUID()}/void`), 404, {
      param: 'codeId',
    });
  });

  it('should void what is left of a batch in one call, and say how many were already redeemed', async () => {
    const codes = await makeBatch(4);
    const customer = await world.gateway.newCustomer({ balance: '0' });
    expect((await redeem(customer, codes[1].code)).status).toBe(201);

    const response = await world.gateway.admin('POST', `/admin/redemption-codes/batches/${codes[0].batchId}/void`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ batchId: codes[0].batchId, voided: 3, redeemed: 1 });
    for (const index of [0, 2, 3]) {
      expectError(await redeem(customer, codes[index].code), 400, { param: 'code' });
    }
    expect((await list(`batchId=${codes[0].batchId}&status=voided`)).data).toHaveLength(3);
    expectError(await world.gateway.admin('POST', `/admin/redemption-codes/batches/${randomUUID()}/void`), 404, {
      param: 'batchId',
    });

    const [entry] = (
      await world.gateway.admin('GET', `/admin/audit?targetType=redemption_batch&targetId=${codes[0].batchId}`)
    ).body.data;
    expect(entry).toMatchObject({
      outcome: 'applied',
      before: { codes: 4, redeemed: 1, voided: 0 },
      after: { codes: 4, redeemed: 1, voided: 3 },
    });
  });

  it('should audit a voided code by its prefix, never its hash', async () => {
    const [code] = await makeBatch(1);
    await world.gateway.admin('POST', `/admin/redemption-codes/${code.id}/void`);
    const [entry] = (await world.gateway.admin('GET', `/admin/audit?targetType=redemption_code&targetId=${code.id}`))
      .body.data;
    expect(entry).toMatchObject({ before: { code_prefix: code.prefix, voided_at: null }, outcome: 'applied' });
    expect(entry.after.voided_at).not.toBeNull();
    expect(JSON.stringify(entry)).not.toContain(hashRedemptionCode(normalizeRedemptionCode(code.code)!));
  });

  it('should export a batch as CSV: prefix, value, status, who redeemed it and when', async () => {
    const codes = await makeBatch(2, '12.5');
    const customer = await world.gateway.newCustomer({ balance: '0' });
    expect((await redeem(customer, codes[0].code)).status).toBe(201);
    await world.gateway.admin('POST', `/admin/redemption-codes/${codes[1].id}/void`);

    const response = await world.gateway.admin('GET', `/admin/redemption-codes/batches/${codes[0].batchId}/codes.csv`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/csv/);
    const [header, ...lines] = response.text.trimEnd().split('\r\n');
    expect(header).toBe('prefix,value,status,redeemedBy,redeemedAt');
    expect(lines.sort()).toEqual(
      [
        `${codes[0].prefix},12.5,redeemed,${customer.accountId},${lines.find((l) => l.includes('redeemed'))!.split(',')[4]}`,
        `${codes[1].prefix},12.5,voided,,`,
      ].sort(),
    );
    expect(lines.find((l) => l.includes('redeemed'))!.split(',')[4]).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(response.text).not.toContain(codes[0].code);
    expectError(await world.gateway.admin('GET', `/admin/redemption-codes/batches/${randomUUID()}/codes.csv`), 404, {
      param: 'batchId',
    });
  });

  it('should keep a code made before prefixes were kept redeemable, listed without a prefix', async () => {
    const code = newRedemptionCode();
    const batchId = randomUUID();
    await world.db.query('INSERT INTO redemption_codes (code_hash, amount, batch_id) VALUES ($1, 2000000000, $2)', [
      hashRedemptionCode(normalizeRedemptionCode(code)!),
      batchId,
    ]);
    const [row] = (await list(`batchId=${batchId}`)).data;
    expect(row).toMatchObject({ id: expect.stringMatching(UUID), prefix: null, status: 'active', amount: '2' });

    const customer = await world.gateway.newCustomer({ balance: '0' });
    expect((await redeem(customer, code)).status).toBe(201);
    expect((await list(`batchId=${batchId}`)).data[0].status).toBe('redeemed');
  });

  it('should refuse bad filters', async () => {
    expectError(await world.gateway.admin('GET', '/admin/redemption-codes?status=spent'), 400, { param: 'status' });
    expectError(await world.gateway.admin('GET', '/admin/redemption-codes?batchId=x'), 400, { param: 'batchId' });
    expectError(await world.gateway.admin('GET', '/admin/redemption-codes?cursor=x'), 400, { param: 'cursor' });
  });
});
