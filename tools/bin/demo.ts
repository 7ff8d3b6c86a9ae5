import 'reflect-metadata';
import { API_NODE_FLAGS } from 'src/config/api-runtime';
import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { Client } from 'pg';
import { AppConfig, loadConfig } from 'src/config/app-config';
import { DataSource } from 'typeorm';
import { startFakeAlipay } from 'tools/fake-wallets/fake-alipay';
import { FakeWallet } from 'tools/fake-wallets/fake-wallet';
import { PRODUCT_DIST, productDataSourceOptions } from 'tools/product-dist';

/* eslint-disable no-console -- this is an interactive developer tool; its output is for a person. */

const DEMO_ADMIN_TOKEN = 'demo-admin-token-change-me';
const DEMO_EMAIL = 'demo@example.com';
const DEMO_PASSWORD = 'demo-password';
const MOCK_PORT = Number(process.env.MOCK_UPSTREAM_PORT ?? 9000);
const FAKE_ALIPAY_PORT = Number(process.env.FAKE_ALIPAY_PORT ?? 9100);
const children: ChildProcess[] = [];

/** `npm run demo`: database, migrations, mock upstream, API and worker, a seeded catalog, account and key. */
async function main(): Promise<void> {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: process.env.NODE_ENV ?? 'development' };
  env.ADMIN_TOKEN ??= DEMO_ADMIN_TOKEN;
  // Top-ups go to our fake Alipay unless a real merchant is configured.
  const fakeAlipay = env.ALIPAY_APP_ID ? null : await startFakeAlipay({ port: FAKE_ALIPAY_PORT });
  Object.assign(env, fakeAlipay?.env);
  env.PUBLIC_BASE_URL ??= `http://127.0.0.1:${env.PORT ?? 3000}`;
  const config = loadConfig(env);
  await ensureDatabase(config);
  await migrate(config);

  start('mock', [join(__dirname, 'mock-upstream.js'), '--port', String(MOCK_PORT)], env);
  start('api', [...API_NODE_FLAGS, join(PRODUCT_DIST, 'main.js')], env);
  start('worker', [join(PRODUCT_DIST, 'worker.js')], env);
  const base = `http://127.0.0.1:${config.port}`;
  await waitForReady(`${base}/health/ready`);

  const admin: AdminCall = (method, path, body, headers) => call(base, method, path, env.ADMIN_TOKEN, body, headers);
  await seedCatalog(admin);
  const { key, accessToken } = await seedCustomer(base, admin);
  const topUp = await seedTopup(base, admin, accessToken, fakeAlipay);

  console.log(`
Gateway demo is running (API ${base}, mock upstream http://127.0.0.1:${MOCK_PORT}). Ctrl-C stops everything.

  API key:      ${key}
  Console:      ${DEMO_EMAIL} / ${DEMO_PASSWORD}
  Admin token:  ${env.ADMIN_TOKEN}
  API docs:     ${base}/docs

Try it:

  curl ${base}/v1/chat/completions -H "Authorization: Bearer ${key}" -H "Content-Type: application/json" -d '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hello!"}]}'
${topUp}`);
}

async function ensureDatabase(config: AppConfig): Promise<void> {
  const url = new URL(config.databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  url.pathname = '/postgres';
  const client = new Client({ connectionString: url.toString() });
  await client.connect();
  const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  if (found.rowCount === 0) {
    await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
    console.log(`created database ${name}`);
  }
  await client.end();
}

async function migrate(config: AppConfig): Promise<void> {
  const dataSource = new DataSource(productDataSourceOptions(config));
  await dataSource.initialize();
  const applied = await dataSource.runMigrations({ transaction: 'each' });
  await dataSource.destroy();
  console.log(`migrations: ${applied.length} applied`);
}

function start(name: string, args: string[], env: NodeJS.ProcessEnv): void {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'inherit', 'inherit'] });
  child.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`${name} exited (${signal ?? code}); stopping the demo`);
      stop(1);
    }
  });
  children.push(child);
}

let stopping = false;
function stop(code: number): void {
  stopping = true;
  for (const child of children) {
    if (child.pid && child.exitCode === null) {
      process.kill(child.pid, 'SIGTERM');
    }
  }
  setTimeout(() => process.exit(code), 500).unref();
}

async function waitForReady(url: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const ok = await fetch(url).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`the API did not become ready at ${url}`);
}

async function call(
  base: string,
  method: string,
  path: string,
  token: string | undefined,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const response = await fetch(base + path, {
    method,
    headers: { 'content-type': 'application/json', ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  return { status: response.status, json };
}

type AdminCall = (
  method: string,
  path: string,
  body: unknown,
  headers?: Record<string, string>,
) => ReturnType<typeof call>;

async function seedCatalog(admin: AdminCall): Promise<void> {
  const mock = { type: 'openai', baseUrl: `http://127.0.0.1:${MOCK_PORT}/v1`, apiKey: 'mock-upstream-key' };
  await expectOk(admin('PUT', '/admin/channels/mock', mock));
  const limits = { rpm: 600, tpm: 1_000_000, enabled: true };
  const mockRoute = [{ channelId: 'mock', upstreamModel: 'mock-gpt' }];
  const models: [string, Record<string, unknown>][] = [
    ['gpt-4o-mini', { inputPrice: '0.15', outputPrice: '0.6', maxOutputTokens: 16384, vision: true, ...limits }],
    ['gpt-4o', { inputPrice: '2.5', outputPrice: '10', maxOutputTokens: 16384, vision: true, ...limits }],
  ];
  const openAiKey = process.env.OPENAI_API_KEY;
  if (openAiKey) {
    const openai = { type: 'openai', baseUrl: 'https://api.openai.com/v1', apiKey: openAiKey, priority: 10 };
    await expectOk(admin('PUT', '/admin/channels/openai', openai));
  }
  for (const [id, model] of models) {
    const routes = openAiKey ? [{ channelId: 'openai', upstreamModel: id }, ...mockRoute] : mockRoute;
    await expectOk(admin('PUT', `/admin/models/${id}`, { ...model, routes }));
  }
}

async function seedCustomer(base: string, admin: AdminCall): Promise<{ key: string; accessToken: string }> {
  const credentials = { email: DEMO_EMAIL, password: DEMO_PASSWORD };
  let session = await call(base, 'POST', '/console/auth/register', undefined, credentials);
  if (session.status === 409) {
    session = await call(base, 'POST', '/console/auth/login', undefined, credentials);
  }
  const { accessToken, account } = session.json as { accessToken: string; account: { id: string } };
  // The idempotency key makes the credit apply once however often the demo is restarted.
  const credit = { amount: '10', reason: 'demo credit' };
  await expectOk(
    admin('POST', `/admin/accounts/${account.id}/adjustments`, credit, { 'idempotency-key': 'demo-seed' }),
  );
  const key = await call(base, 'POST', '/console/keys', accessToken, { name: `demo ${new Date().toISOString()}` });
  return { key: (key.json as { key: string }).key, accessToken };
}

/**
 * The payment settings, and with the fake Alipay a pending top-up of 72 CNY ($10 at 7.2) whose payment
 * is one curl away; returns the lines that say how.
 */
async function seedTopup(base: string, admin: AdminCall, token: string, fake: FakeWallet | null): Promise<string> {
  const settings = { cnyPerUsd: '7.2', minTopupUsd: '1', maxTopupUsd: '10000', orderTtlMinutes: 30 };
  await expectOk(admin('PUT', '/admin/payments/settings', settings));
  const create = `curl ${base}/console/topups -H "Authorization: Bearer ${token}" -H "Content-Type: application/json" -d '{"currency":"CNY","method":"alipay","amount":"72"}'`;
  if (!fake) {
    return `\nTop up with Alipay (your merchant):\n\n  ${create}\n`;
  }
  const order = await call(base, 'POST', '/console/topups', token, { currency: 'CNY', method: 'alipay', amount: '72' });
  const orderNo = String(order.json.id).replace(/-/g, '');
  return `
Top up through our fake Alipay (http://127.0.0.1:${FAKE_ALIPAY_PORT}, standing in for the wallet). A pending
top-up of 72 CNY ($10 at 7.2 CNY per USD) is waiting: pay it, and the balance is $10 higher:

  curl -X POST http://127.0.0.1:${FAKE_ALIPAY_PORT}/fake/pay/${orderNo}
  curl ${base}/console/account -H "Authorization: Bearer ${token}"

Another one: create it, then pay its id without the dashes as above:

  ${create}
`;
}

async function expectOk(pending: ReturnType<typeof call>): Promise<void> {
  const { status, json } = await pending;
  if (status >= 300) {
    throw new Error(`seeding failed (${status}): ${JSON.stringify(json)}`);
  }
}

process.once('SIGINT', () => stop(0));
process.once('SIGTERM', () => stop(0));
main().catch((error: Error) => {
  console.error(`demo failed: ${error.message}`);
  stop(1);
});
