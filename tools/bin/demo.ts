import 'reflect-metadata';
import { API_NODE_FLAGS } from 'src/config/api-runtime';
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Client } from 'pg';
import { AppConfig, loadConfig } from 'src/config/app-config';
import { DataSource } from 'typeorm';
import { startFakeAlipay } from 'tools/fake-wallets/fake-alipay';
import { FakeWallet } from 'tools/fake-wallets/fake-wallet';
import { assertPortFree, DemoError, DemoPorts, readDemoPorts } from 'tools/demo/demo-options';
import { PRODUCT_DIST, productDataSourceOptions } from 'tools/product-dist';

/* eslint-disable no-console -- this is an interactive developer tool; its output is for a person. */

const DEMO_EMAIL = 'demo@example.com';
const DEMO_PASSWORD = 'demo-password';
// The API's and worker's own lines below this level stay quiet, so the banner is what a person sees
// first; warnings and errors still show. LOG_LEVEL=info (or debug) shows the rest.
const DEMO_LOG_LEVEL = 'warn';
// Children get this long to drain after Ctrl-C or a failure; then they are killed.
const STOP_GRACE_MS = 10_000;
const children: { name: string; child: ChildProcess }[] = [];

/**
 * `npm run demo`: database, migrations, mock upstream, API and worker, a seeded catalog, account and key.
 * It refuses to start when one of its ports is taken, and seeds only the API it started itself: the
 * admin token is fresh each run, so no other gateway would accept it.
 */
async function main(): Promise<void> {
  const ports = readDemoPorts(process.argv.slice(2), process.env);
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_ENV: process.env.NODE_ENV ?? 'development' };
  const fakeAlipayWanted = !env.ALIPAY_APP_ID;
  await assertPortFree(ports.api, 'api');
  await assertPortFree(ports.mock, 'mock');
  if (fakeAlipayWanted) {
    await assertPortFree(ports.fakeAlipay, 'fakeAlipay');
  }
  env.PORT = String(ports.api);
  env.ADMIN_TOKEN ??= randomBytes(24).toString('hex');
  env.LOG_LEVEL ??= DEMO_LOG_LEVEL;
  // Top-ups go to our fake Alipay unless a real merchant is configured.
  const fakeAlipay = fakeAlipayWanted ? await startFakeAlipay({ port: ports.fakeAlipay }) : null;
  Object.assign(env, fakeAlipay?.env);
  env.PUBLIC_BASE_URL ??= `http://127.0.0.1:${ports.api}`;
  const config = loadConfig(env);
  const created = await ensureDatabase(config);
  const applied = await migrate(config);

  start('mock', [join(__dirname, 'mock-upstream.js'), '--port', String(ports.mock)], env, 'ignore');
  start('api', [...API_NODE_FLAGS, join(PRODUCT_DIST, 'main.js')], env);
  start('worker', [join(PRODUCT_DIST, 'worker.js')], env);
  const base = `http://127.0.0.1:${ports.api}`;
  await waitForReady(`${base}/health/ready`);

  const admin: AdminCall = (method, path, body, headers) => call(base, method, path, env.ADMIN_TOKEN, body, headers);
  await expectOwnGateway(admin, ports.api);
  await seedCatalog(admin, ports);
  const { key, accessToken } = await seedCustomer(base, admin);
  const topUp = await seedTopup(base, admin, accessToken, fakeAlipay, ports);
  const database = `${new URL(config.databaseUrl).pathname.slice(1)} (${created ? 'created, ' : ''}${applied} migrations applied)`;

  console.log(`
Gateway demo is running (API ${base}, mock upstream http://127.0.0.1:${ports.mock}). Ctrl-C stops everything.

  API key:      ${key}
  Console:      ${DEMO_EMAIL} / ${DEMO_PASSWORD}
  Admin token:  ${env.ADMIN_TOKEN}   (this run only)
  Database:     ${database}
  API docs:     ${base}/docs
  Logs:         warnings and errors; LOG_LEVEL=info npm run demo shows every line

Try it:

  curl ${base}/v1/chat/completions -H "Authorization: Bearer ${key}" -H "Content-Type: application/json" -d '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hello!"}]}'
  curl ${base}/v1/embeddings -H "Authorization: Bearer ${key}" -H "Content-Type: application/json" -d '{"model":"text-embedding-3-small","input":"Hello!"}'
${topUp}`);
}

/**
 * The API that answered ready must be the one this run started: only it knows this run's admin token.
 * Anything else (a gateway that took the port in between) is left untouched.
 */
async function expectOwnGateway(admin: AdminCall, port: number): Promise<void> {
  const { status } = await admin('GET', '/admin/models', undefined);
  if (status !== 200) {
    throw new DemoError(
      `the gateway answering on port ${port} is not the one this demo started; it was left untouched`,
    );
  }
}

/** Creates the database unless it exists; true when it did. */
async function ensureDatabase(config: AppConfig): Promise<boolean> {
  const url = new URL(config.databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  url.pathname = '/postgres';
  const client = new Client({ connectionString: url.toString(), connectionTimeoutMillis: 5_000 });
  // Only where it is: the URL may hold a password.
  const where = `${url.hostname}:${url.port || 5432}`;
  await client.connect().catch((error: Error) => {
    throw new DemoError(`cannot reach Postgres at ${where} (DATABASE_URL): ${error.message}`);
  });
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
      return true;
    }
    return false;
  } finally {
    await client.end();
  }
}

async function migrate(config: AppConfig): Promise<number> {
  const dataSource = new DataSource(productDataSourceOptions(config));
  await dataSource.initialize();
  try {
    return (await dataSource.runMigrations({ transaction: 'each' })).length;
  } finally {
    await dataSource.destroy();
  }
}

function start(name: string, args: string[], env: NodeJS.ProcessEnv, stdout: 'inherit' | 'ignore' = 'inherit'): void {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', stdout, 'inherit'] });
  child.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`demo failed: the ${name} process exited (${signal ?? code}); stopping the demo`);
      stop(1);
    }
  });
  children.push({ name, child });
}

let stopping = false;
/**
 * Stops the children and exits with `code` once they are gone. The exit is explicit and its timer is
 * not unref'd: an unref'd one let a failed demo fall out of the event loop with status 0.
 */
function stop(code: number): void {
  if (stopping) {
    return;
  }
  stopping = true;
  process.exitCode = code;
  const running = children.map(({ child }) => child).filter((child) => child.exitCode === null && !child.signalCode);
  const gone = running.map((child) => new Promise((resolve) => child.once('exit', resolve)));
  running.forEach((child) => child.kill('SIGTERM'));
  const deadline = setTimeout(() => {
    running.forEach((child) => child.kill('SIGKILL'));
    process.exit(code);
  }, STOP_GRACE_MS);
  void Promise.all(gone).then(() => {
    clearTimeout(deadline);
    process.exit(code);
  });
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

async function seedCatalog(admin: AdminCall, ports: DemoPorts): Promise<void> {
  const mock = { type: 'openai', baseUrl: `http://127.0.0.1:${ports.mock}/v1`, apiKey: 'mock-upstream-key' };
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
  const embedding = { inputPrice: '0.02', outputPrice: '0', maxOutputTokens: 1, kind: 'embedding', ...limits };
  const embeddingRoute = openAiKey ? [{ channelId: 'openai', upstreamModel: 'text-embedding-3-small' }] : [];
  await expectOk(
    admin('PUT', '/admin/models/text-embedding-3-small', {
      ...embedding,
      routes: [...embeddingRoute, { channelId: 'mock', upstreamModel: 'mock-embedding' }],
    }),
  );
  const instruct = { inputPrice: '1.5', outputPrice: '2', maxOutputTokens: 4096, kind: 'completion', ...limits };
  const instructRoute = openAiKey ? [{ channelId: 'openai', upstreamModel: 'gpt-3.5-turbo-instruct' }] : [];
  await expectOk(
    admin('PUT', '/admin/models/gpt-3.5-turbo-instruct', { ...instruct, routes: [...instructRoute, ...mockRoute] }),
  );
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
async function seedTopup(
  base: string,
  admin: AdminCall,
  token: string,
  fake: FakeWallet | null,
  ports: DemoPorts,
): Promise<string> {
  const settings = { cnyPerUsd: '7.2', minTopupUsd: '1', maxTopupUsd: '10000', orderTtlMinutes: 30 };
  await expectOk(admin('PUT', '/admin/payments/settings', settings));
  const create = `curl ${base}/console/topups -H "Authorization: Bearer ${token}" -H "Content-Type: application/json" -d '{"currency":"CNY","method":"alipay","amount":"72"}'`;
  if (!fake) {
    return `\nTop up with Alipay (your merchant):\n\n  ${create}\n`;
  }
  const order = await call(base, 'POST', '/console/topups', token, { currency: 'CNY', method: 'alipay', amount: '72' });
  const orderNo = String(order.json.id).replace(/-/g, '');
  return `
Top up through our fake Alipay (http://127.0.0.1:${ports.fakeAlipay}, standing in for the wallet). A pending
top-up of 72 CNY ($10 at 7.2 CNY per USD) is waiting: pay it, and the balance is $10 higher:

  curl -X POST http://127.0.0.1:${ports.fakeAlipay}/fake/pay/${orderNo}
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
  // One line: a DemoError says what to do; anything else says what broke.
  console.error(`demo failed: ${error.message.split('\n')[0]}`);
  stop(1);
});
