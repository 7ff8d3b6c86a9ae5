import { randomInt } from 'node:crypto';
import { Client } from 'pg';
import { eventually, openDb } from 'test/e2e/e2e-helpers';
import { Customer, TestGateway } from 'test/support/gateway';

const CACHE_SIZE = 20;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const REFUSED = { status: 401, body: { error: { type: 'invalid_request_error', code: 'invalid_api_key' } } };
/** Has the shape of an issued key, so only the database can tell it is unknown. */
const madeUpKey = () => `sk-${Array.from({ length: 48 }, () => BASE62[randomInt(62)]).join('')}`;

/** Made-up `sk-` keys, as an attacker sends them, against the in-process key cache. */
describe('API key cache under made-up keys', () => {
  let gateway: TestGateway;
  let db: Client;
  let customer: Customer;

  beforeAll(async () => {
    gateway = await TestGateway.start({ API_KEY_CACHE_SIZE: String(CACHE_SIZE) });
    db = await openDb();
    customer = await gateway.newCustomer();
  });
  afterAll(async () => {
    await db.end();
    await gateway.close();
  });

  const models = (key: string) =>
    fetch(`${gateway.url}/v1/models`, {
      headers: { authorization: `Bearer ${key}` },
      signal: AbortSignal.timeout(5_000),
    }).then(async (response) => ({ status: response.status, body: await response.json() }));

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
  async function waitingLookups(): Promise<number> {
    const { rows } = await db.query<{ count: string }>(
      `SELECT count(*) FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock'
          AND query ILIKE 'SELECT%FROM "api_keys"%'`,
    );
    return Number(rows[0].count);
  }

  it('should keep serving a valid key from memory after many more made-up keys than the cache holds', async () => {
    expect((await models(customer.key)).status).toBe(200);
    for (let i = 0; i < CACHE_SIZE * 5; i += 10) {
      const answers = await Promise.all(Array.from({ length: 10 }, () => models(madeUpKey())));
      answers.forEach((answer) => expect(answer.status).toBe(401));
    }

    const answer = await whileKeysLocked(() => models(customer.key));
    expect(answer.status).toBe(200);
  });

  it('should look a made-up key up once, however many requests carry it at once or later', async () => {
    const key = madeUpKey();
    const { answers } = await whileKeysLocked(async () => {
      const pending = Promise.all(Array.from({ length: 10 }, () => models(key)));
      // Every request has had ample time to reach Postgres; exactly one lookup did.
      expect(await eventually(waitingLookups, (n) => n >= 10, 1_500)).toBe(1);
      return { answers: pending };
    });
    (await answers).forEach((answer) => expect(answer).toMatchObject(REFUSED));

    const again = await whileKeysLocked(() => Promise.all(Array.from({ length: 10 }, () => models(key))));
    again.forEach((answer) => expect(answer).toMatchObject(REFUSED));
    expect(await waitingLookups()).toBe(0);
  });

  it('should refuse a key of a shape never issued without asking Postgres', async () => {
    const answer = await whileKeysLocked(() => models(`sk-${'x'.repeat(20)}`));
    expect(answer).toMatchObject(REFUSED);
  });
});
