import { randomInt } from 'node:crypto';
import { Client } from 'pg';
import { eventually, openDb, useGatewayWorld } from 'test/e2e/e2e-helpers';
import { Customer } from 'test/support/gateway';

const CACHE_SIZE = 20;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const REFUSED = { status: 401, body: { error: { type: 'invalid_request_error', code: 'invalid_api_key' } } };
/** Has the shape of an issued key, so only the database can tell it is unknown. */
const madeUpKey = () => `sk-${Array.from({ length: 48 }, () => BASE62[randomInt(62)]).join('')}`;

const models = (gatewayUrl: string, key: string, clientAddress?: string) =>
  fetch(`${gatewayUrl}/v1/models`, {
    headers: { authorization: `Bearer ${key}`, ...(clientAddress ? { 'x-forwarded-for': clientAddress } : {}) },
    signal: AbortSignal.timeout(5_000),
  }).then(async (response) => ({
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    body: await response.json(),
  }));

/** Runs `body` while api_keys cannot be read: any key lookup that reaches Postgres waits. */
async function whileKeysLocked<T>(body: () => Promise<T>): Promise<T> {
  const lock = await openDb();
  await lock.query('BEGIN');
  await lock.query('LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE');
  try {
    return await body();
  } finally {
    await lock.query('COMMIT');
    await lock.end();
  }
}

/** Key lookups waiting for the lock above. */
async function waitingLookups(db: Client): Promise<number> {
  const { rows } = await db.query<{ count: string }>(
    `SELECT count(*) FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'
        AND query ILIKE 'SELECT%FROM "api_keys"%'`,
  );
  return Number(rows[0].count);
}

/** Made-up `sk-` keys, as an attacker sends them, against the in-process key cache. */
describe('API key cache under made-up keys', () => {
  // Far more lookups per address than these tests make: the per-address bound is tested below.
  const world = useGatewayWorld({ API_KEY_CACHE_SIZE: String(CACHE_SIZE), API_KEY_MISSES_PER_IP: '1000' });
  let customer: Customer;

  beforeAll(async () => {
    customer = await world.gateway.newCustomer();
  });
  const modelsOf = (key: string) => models(world.gateway.url, key);

  it('should keep serving a valid key from memory after many more made-up keys than the cache holds', async () => {
    expect((await modelsOf(customer.key)).status).toBe(200);
    for (let i = 0; i < CACHE_SIZE * 5; i += 10) {
      const answers = await Promise.all(Array.from({ length: 10 }, () => modelsOf(madeUpKey())));
      answers.forEach((answer) => expect(answer.status).toBe(401));
    }

    const answer = await whileKeysLocked(() => modelsOf(customer.key));
    expect(answer.status).toBe(200);
  });

  it('should look a made-up key up once, however many requests carry it at once or later', async () => {
    const key = madeUpKey();
    const { answers } = await whileKeysLocked(async () => {
      const pending = Promise.all(Array.from({ length: 10 }, () => modelsOf(key)));
      // Every request has had ample time to reach Postgres; exactly one lookup did.
      expect(
        await eventually(
          () => waitingLookups(world.db),
          (n) => n >= 10,
          1_500,
        ),
      ).toBe(1);
      return { answers: pending };
    });
    (await answers).forEach((answer) => expect(answer).toMatchObject(REFUSED));

    const again = await whileKeysLocked(() => Promise.all(Array.from({ length: 10 }, () => modelsOf(key))));
    again.forEach((answer) => expect(answer).toMatchObject(REFUSED));
    expect(await waitingLookups(world.db)).toBe(0);
  });

  it('should refuse a key of a shape never issued without asking Postgres', async () => {
    const answer = await whileKeysLocked(() => modelsOf(`sk-${'x'.repeat(20)}`));
    expect(answer).toMatchObject(REFUSED);
  });
});

/** Made-up keys from one client address, past its budget of lookups of unknown keys. */
describe('lookups of unknown API keys per client address', () => {
  const BUDGET = 5;
  const world = useGatewayWorld({ API_KEY_MISSES_PER_IP: String(BUDGET), TRUST_PROXY: '127.0.0.1' });
  let customer: Customer;

  beforeAll(async () => {
    customer = await world.gateway.newCustomer();
  });
  const modelsFrom = (clientAddress: string, key: string) => models(world.gateway.url, key, clientAddress);
  const newAddress = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

  it('should answer 429 without a query past the budget, while a cached valid key and other addresses are served', async () => {
    const attacker = newAddress();
    expect((await modelsFrom(attacker, customer.key)).status).toBe(200);

    const { guesses, late, valid, neighbour } = await whileKeysLocked(async () => {
      const guesses = Promise.all(Array.from({ length: BUDGET }, () => modelsFrom(attacker, madeUpKey())));
      expect(
        await eventually(
          () => waitingLookups(world.db),
          (n) => n >= BUDGET,
          10_000,
        ),
      ).toBe(BUDGET);
      // Answered while api_keys is locked: none of these waited for Postgres.
      const late = await Promise.all(Array.from({ length: 3 }, () => modelsFrom(attacker, madeUpKey())));
      const valid = await modelsFrom(attacker, customer.key);
      const neighbour = modelsFrom(newAddress(), madeUpKey());
      expect(
        await eventually(
          () => waitingLookups(world.db),
          (n) => n > BUDGET,
          10_000,
        ),
      ).toBe(BUDGET + 1);
      return { guesses, late, valid, neighbour };
    });

    (await guesses).forEach((answer) => expect(answer).toMatchObject(REFUSED));
    for (const answer of late) {
      expect(answer).toMatchObject({
        status: 429,
        body: { error: { type: 'requests', code: 'rate_limit_exceeded', param: null } },
      });
      expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(answer.retryAfter)).toBeLessThanOrEqual(60);
    }
    expect(valid.status).toBe(200);
    expect(await neighbour).toMatchObject(REFUSED);
  }, 60_000);
});
