import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomInt, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import pino from 'pino';
import { createApiApp } from 'src/app.factory';
import { loadConfig } from 'src/config/app-config';
import { hashApiKey } from 'src/modules/api-keys/api-key.secret';
import { eventually, expectError, openDb } from 'test/e2e/e2e-helpers';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** What the API logs about a database error it did not expect. */
describe('logging of unexpected errors', () => {
  let app: NestFastifyApplication;
  let url: string;
  let db: Client;
  const lines: string[] = [];

  beforeAll(async () => {
    db = await openDb();
    // Postgres refuses probe accounts with a message and detail that quote the e-mail, as real errors do.
    await db.query(`
      CREATE FUNCTION log_probe_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.email LIKE 'log-probe-%' THEN
          RAISE EXCEPTION 'refused %', NEW.email
            USING ERRCODE = '23514', CONSTRAINT = 'log_probe_check', DETAIL = 'Key (email)=(' || NEW.email || ')';
        END IF;
        RETURN NEW;
      END $$`);
    await db.query(
      'CREATE TRIGGER log_probe BEFORE INSERT ON accounts FOR EACH ROW EXECUTE FUNCTION log_probe_refuse()',
    );
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    app = await createApiApp(loadConfig(process.env), logger);
    await app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await app.close();
    await db.query('DROP TRIGGER log_probe ON accounts');
    await db.query('DROP FUNCTION log_probe_refuse()');
    await db.end();
  });

  it('should log the error class, SQLSTATE, constraint and request id, never the query, its parameters or the body', async () => {
    const email = `log-probe-${randomUUID()}@example.com`;
    const password = `probe-password-${randomUUID()}`;
    const response = await fetch(`${url}/console/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    const body = await response.json();
    expectError({ status: response.status, headers: response.headers, body, text: '' }, 500, { type: 'server_error' });
    const reqId = response.headers.get('x-request-id');

    const everything = lines.join('\n');
    for (const secret of [
      email,
      email.split('@')[0],
      password,
      'scrypt$',
      'INSERT',
      'parameters',
      'refused',
      'Key (email)',
    ]) {
      expect(everything).not.toContain(secret);
    }
    const logged = lines.map((line) => JSON.parse(line) as Record<string, any>);
    const errorLines = logged.filter((line) => line.msg === 'unhandled error');
    expect(errorLines).toEqual([
      expect.objectContaining({
        reqId,
        method: 'POST',
        path: '/console/auth/register',
        error: expect.objectContaining({ type: 'QueryFailedError', code: '23514', constraint: 'log_probe_check' }),
      }),
    ]);
    expect(errorLines[0].error.frames.length).toBeGreaterThan(0);
  });

  it('should log a failed API key lookup without its query or the key hash it was given', async () => {
    // Well-shaped, so only Postgres can tell it is unknown. The lookup is held by a lock, then cancelled.
    const key = `sk-${Array.from({ length: 48 }, () => BASE62[randomInt(62)]).join('')}`;
    const lock = await openDb();
    await lock.query('BEGIN');
    await lock.query('LOCK TABLE api_keys IN ACCESS EXCLUSIVE MODE');
    const pending = fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    try {
      const cancelled = await eventually(
        async () =>
          (
            await db.query<{ cancelled: boolean }>(
              `SELECT pg_cancel_backend(pid) AS cancelled FROM pg_stat_activity
                WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE 'SELECT%FROM "api_keys"%'`,
            )
          ).rows.length,
        (count) => count > 0,
        10_000,
      );
      expect(cancelled).toBe(1);
    } finally {
      await lock.query('COMMIT');
      await lock.end();
    }
    const response = await pending;
    const body = await response.json();
    expectError({ status: response.status, headers: response.headers, body, text: '' }, 500, { type: 'server_error' });

    const failures = lines
      .map((line) => JSON.parse(line) as Record<string, any>)
      .filter((line) => line.msg === 'api key lookup failed');
    expect(failures).toEqual([
      expect.objectContaining({
        reqId: response.headers.get('x-request-id'),
        error: expect.objectContaining({ type: 'QueryFailedError', code: '57014' }),
      }),
    ]);
    const logged = JSON.stringify(failures);
    for (const secret of [hashApiKey(key), key, 'SELECT', 'api_keys', 'parameters']) {
      expect(logged).not.toContain(secret);
    }
  });
});
