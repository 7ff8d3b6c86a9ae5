import { ChildProcess } from 'node:child_process';
import { orderNoOf } from 'src/modules/payments/orders/topup-order.entity';
import { Client } from 'pg';
import { Books, usd } from 'test/e2e/billing-helpers';
import { openDb } from 'test/e2e/e2e-helpers';
import { freePort } from 'test/support/free-port';
import { Customer, HttpResult, TestGateway } from 'test/support/gateway';
import { spawnWorker, stopWorker } from 'test/support/worker-process';
import { startFakeAlipay } from 'tools/fake-wallets/fake-alipay';
import { FakeWallet, NotifyResult } from 'tools/fake-wallets/fake-wallet';
import { startFakeWechatPay } from 'tools/fake-wallets/fake-wechatpay';

export const CNY_PER_USD = '7.2';
/** The top-up most tests make: 72 CNY, which buys 10 USD at CNY_PER_USD. */
export const TOPUP_CNY = '72';
export const TOPUP_CREDIT = usd('10');

export type Wallet = 'alipay' | 'wechatpay';
export const WALLETS: Wallet[] = ['alipay', 'wechatpay'];

/** The operator's settings every payments suite starts from (and returns to after changing them). */
export const DEFAULT_SETTINGS = {
  cnyPerUsd: CNY_PER_USD,
  minTopupUsd: '1',
  maxTopupUsd: '10000',
  orderTtlMinutes: 30,
};

/** A gateway with both fake wallets configured, the worker in its own process, and the operator's settings. */
export interface PaymentsWorld {
  gateway: TestGateway;
  books: Books;
  db: Client;
  alipay: FakeWallet;
  wechatpay: FakeWallet;
  /** The environment of the API and the worker. */
  env: Record<string, string>;
  /** The worker's own /metrics. */
  workerMetricsUrl: string;
  /** The worker process; tests that kill it start another with `restartWorker`. */
  worker: ChildProcess | null;
  restartWorker(): Promise<void>;
  wallet(method: 'alipay' | 'wechatpay'): FakeWallet;
}

/**
 * Sets up a PaymentsWorld before the suite (polls every `pollDelaysMs` unless told otherwise; `env` adds to
 * the API's and the worker's environment) and checks after every test that the books balance and every
 * paid order has exactly its one entry.
 */
export function usePaymentsWorld(options: { pollDelaysMs?: string; env?: Record<string, string> } = {}): PaymentsWorld {
  const world = {} as PaymentsWorld;
  beforeAll(async () => {
    world.alipay = await startFakeAlipay();
    world.wechatpay = await startFakeWechatPay();
    const port = await freePort();
    const workerMetricsPort = await freePort();
    world.workerMetricsUrl = `http://127.0.0.1:${workerMetricsPort}/metrics`;
    world.env = {
      WORKER_METRICS_PORT: String(workerMetricsPort),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      ...world.alipay.env,
      ...world.wechatpay.env,
      // Long enough by default that a test decides when the poller runs (recheck), short when it is the subject.
      PAYMENT_POLL_DELAYS_MS: options.pollDelaysMs ?? '600000',
      ...options.env,
    };
    world.gateway = await TestGateway.start(world.env, undefined, port);
    world.books = await Books.open(world.gateway);
    world.db = await openDb();
    world.restartWorker = async () => {
      await stopWorker(world.worker);
      world.worker = await spawnWorker(world.env);
    };
    world.wallet = (method) => (method === 'alipay' ? world.alipay : world.wechatpay);
    world.worker = await spawnWorker(world.env);
    await putSettings(world);
  }, 60_000);
  afterEach(() => world.books.expectBalanced());
  afterAll(async () => {
    await stopWorker(world.worker, 'SIGTERM');
    await world.db.end();
    await world.books.close();
    await world.gateway.close();
    await world.alipay.close();
    await world.wechatpay.close();
  });
  return world;
}

/** Replaces the operator's settings with DEFAULT_SETTINGS and `changes`; expects 200. */
export async function putSettings(world: PaymentsWorld, changes: Partial<typeof DEFAULT_SETTINGS> = {}): Promise<void> {
  const response = await world.gateway.admin('PUT', '/admin/payments/settings', { ...DEFAULT_SETTINGS, ...changes });
  expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: expect.anything() });
}

/** Creates a CNY top-up through the console; expects 201. */
export async function createTopup(
  world: PaymentsWorld,
  customer: Customer,
  method: 'alipay' | 'wechatpay',
  amount: string,
): Promise<any> {
  const response: HttpResult = await world.gateway.call('POST', '/console/topups', {
    token: customer.token,
    body: { currency: 'CNY', method, amount },
  });
  expect(response.status).toBe(201);
  return response.body;
}

/**
 * Every page of a cursor-paged list at `limit`, following nextCursor: with `token` as that console
 * session, without it as the operator. Each page is 200 and within the limit.
 */
export async function allPages(world: PaymentsWorld, path: string, token: string | undefined, limit: number) {
  const pages: any[][] = [];
  let cursor: string | null = null;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const url = `${path}${separator}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page: HttpResult = token
      ? await world.gateway.call('GET', url, { token })
      : await world.gateway.admin('GET', url);
    expect({ status: page.status, size: page.body.data?.length <= limit }).toEqual({ status: 200, size: true });
    pages.push(page.body.data);
    cursor = page.body.nextCursor;
    expect(pages.length).toBeLessThan(20);
  } while (cursor);
  return pages;
}

export { orderNoOf };

/** A new customer with no balance, and their pending CNY order of `amount` in `method`. */
export async function newWalletOrder(world: PaymentsWorld, method: Wallet, amount = TOPUP_CNY) {
  const customer = await world.gateway.newCustomer({ balance: '0' });
  const topup = await createTopup(world, customer, method, amount);
  return { customer, orderId: topup.id as string, orderNo: orderNoOf(topup.id) };
}

/** The wallet heard that the credit is committed: Alipay's plain `success`, WeChat Pay's 204. */
export function committedAnswer(method: Wallet): NotifyResult {
  return method === 'alipay' ? { status: 200, body: 'success' } : { status: 204, body: '' };
}

/** The wallet is told to send the notification again later: Alipay's `fail`, WeChat Pay's 500. */
export function retryAnswer(method: Wallet): NotifyResult {
  return method === 'alipay' ? { status: 200, body: 'fail' } : { status: 500, body: expect.stringContaining('FAIL') };
}

/** The wallet is told the notification is refused: Alipay's `fail`, WeChat Pay's 400. */
export function refusedAnswer(method: Wallet): NotifyResult {
  return method === 'alipay' ? { status: 200, body: 'fail' } : { status: 400, body: expect.stringContaining('FAIL') };
}

/** An operator's recheck of the order; the answer is the order after it. */
export function recheck(world: PaymentsWorld, orderId: string): Promise<HttpResult> {
  return world.gateway.admin('POST', `/admin/topups/${orderId}/recheck`);
}

/** gateway_payment_notify_rejected_total{provider, reason} on the API's GET /metrics (0 before the first). */
export async function rejectedNotifications(world: PaymentsWorld, provider: Wallet, reason: string): Promise<number> {
  const metrics = await world.gateway.call('GET', '/metrics');
  expect(metrics.status).toBe(200);
  const labels = `provider="${provider}",reason="${reason}"`;
  const line = new RegExp(`^gateway_payment_notify_rejected_total\\{${labels}\\} (\\S+)$`, 'm').exec(metrics.text);
  return Number(line?.[1] ?? 0);
}
