import { request as httpRequest } from 'node:http';
import { metrics } from 'src/common/metrics/metrics';
import { parseUsd } from 'src/common/money/money';
import { SettleCompletionPayload } from 'src/common/queue/queue.constants';
import { countMockPromptTokens } from 'tools/mock-upstream/mock-upstream.server';
import { Prices, referralCredit, usageCost } from 'src/modules/billing/pricing';
import { UsageQueueService } from 'src/modules/billing/usage-queue.service';
import { BalanceGateService } from 'src/modules/ledger/balance-gate.service';
import { findLedgerMismatches } from 'src/modules/ledger/ledger-verifier';
import { findDepositMismatches, findTopupMismatches } from 'src/modules/payments/orders/topup-verifier';
import { Customer, HttpResult, ModelOptions, TestGateway, TestWorker } from 'test/support/gateway';
import { DataSource } from 'typeorm';

/**
 * Helpers of the billing e2e suites. These suites share one BullMQ queue and one Redis db with the
 * rest of the run, so they assume the e2e project runs in band (`npm run test:e2e` does).
 */

export const MOCK_DEFAULT_REPLY = 'Hello from the mock upstream.';
/** CONTRACT default of REFERRAL_SHARE_PERCENT. */
export const SHARE_PERCENT = 10;
export const SETTLE_TIMEOUT_MS = 10_000;

/** Exact nano-dollars of a decimal USD string; throws on a malformed one (a test bug). */
export function usd(text: string): bigint {
  const nanos = parseUsd(text);
  if (nanos === null) {
    throw new Error(`not a USD amount: ${text}`);
  }
  return nanos;
}

export function pricesOf(inputPrice: string, outputPrice: string): Prices {
  return { inputPrice: usd(inputPrice), outputPrice: usd(outputPrice) };
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
}

export const costOf = (prices: Prices, usage: Usage): bigint =>
  usageCost(prices, usage.promptTokens, usage.completionTokens);

export const creditOf = (cost: bigint): bigint => referralCredit(cost, SHARE_PERCENT);

/** The word pieces the mock upstream streams (one completion token each). */
export function mockPieces(reply = MOCK_DEFAULT_REPLY): string[] {
  return reply.match(/\s*\S+\s*/g) ?? [];
}

/** The usage the mock upstream reports for a request. */
export function mockUsage(messages: unknown[], reply = MOCK_DEFAULT_REPLY, n = 1): Usage {
  return { promptTokens: countMockPromptTokens(messages), completionTokens: mockPieces(reply).length * n };
}

/** Usage of an OpenAI wire `usage` object. */
export function wireUsageOf(usage: { prompt_tokens: number; completion_tokens: number }): Usage {
  return { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens };
}

export const userMessages = (content = 'Say hi') => [{ role: 'user', content }];

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Calls `probe` until `done` accepts its result or `timeoutMs` passes; returns the last result. */
export async function eventually<T>(
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = SETTLE_TIMEOUT_MS,
  intervalMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value) || Date.now() >= deadline) {
      return value;
    }
    await sleep(intervalMs);
  }
}

/** gateway_usage_record_failures_total of this process (an in-process API's), by outcome. */
export async function usageRecordFailures(): Promise<Record<string, number>> {
  const { values } = await metrics.usageRecordFailures.get();
  return Object.fromEntries(values.map(({ labels, value }) => [String(labels.outcome), value]));
}

/** What each outcome of gateway_usage_record_failures_total counted since `before` (outcomes that moved). */
export async function usageRecordFailuresSince(before: Record<string, number>): Promise<Record<string, number>> {
  const now = await usageRecordFailures();
  return Object.fromEntries(
    Object.entries(now)
      .map(([outcome, value]) => [outcome, value - (before[outcome] ?? 0)])
      .filter(([, delta]) => delta !== 0),
  );
}

/** The response is `status` with exactly the error object (docs/errors.md). */
export function expectApiError(
  response: HttpResult,
  status: number,
  expected: { type?: string; code?: string | null; param?: string | null },
): void {
  expect({ status: response.status, body: response.body }).toEqual({
    status,
    body: {
      error: {
        message: expect.any(String),
        type: expected.type ?? 'invalid_request_error',
        code: expected.code === undefined ? expect.anything() : expected.code,
        param: expected.param === undefined ? null : expected.param,
      },
    },
  });
}

export interface Bill {
  requestId: string;
  createdAt: string;
  model: string;
  keyId: string;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  cost: string;
  clientRequestId: string | null;
}

export interface LedgerEntry {
  id: string;
  kind: string;
  amount: string;
  balanceAfter: string;
  createdAt: string;
  reference: string;
}

export interface UsageRecordRow {
  request_id: string;
  account_id: string;
  status: string;
  usage_source: string;
  prompt_tokens: number;
  completion_tokens: number;
  cost: string;
  charged: string;
}

/** The books as the console and the database see them, for one test file's gateway. */
export class Books {
  private constructor(
    readonly gateway: TestGateway,
    readonly db: DataSource,
  ) {}

  static async open(gateway: TestGateway): Promise<Books> {
    const db = new DataSource({ type: 'postgres', url: process.env.DATABASE_URL });
    await db.initialize();
    return new Books(gateway, db);
  }

  close(): Promise<void> {
    return this.db.destroy();
  }

  /** The console balance, in nano-dollars. */
  async balance(customer: Pick<Customer, 'token'>): Promise<bigint> {
    const response = await this.gateway.call('GET', '/console/account', { token: customer.token });
    expect(response.status).toBe(200);
    return usd(response.body.balance);
  }

  /** Polls the console balance until it is `expected` (or the deadline passes); returns the last one read. */
  waitForBalance(customer: Pick<Customer, 'token'>, expected: bigint, timeoutMs = SETTLE_TIMEOUT_MS) {
    return eventually(
      () => this.balance(customer),
      (balance) => balance === expected,
      timeoutMs,
    );
  }

  /** Every bill of the account, newest first (one page of up to 200). */
  async bills(customer: Pick<Customer, 'token'>, query = ''): Promise<Bill[]> {
    const response = await this.gateway.call('GET', `/console/bills?limit=200${query}`, { token: customer.token });
    expect(response.status).toBe(200);
    return response.body.data;
  }

  /** Polls the bills until there are at least `count`; returns the last list read. */
  waitForBills(customer: Pick<Customer, 'token'>, count: number, timeoutMs = SETTLE_TIMEOUT_MS) {
    return eventually(
      () => this.bills(customer),
      (bills) => bills.length >= count,
      timeoutMs,
    );
  }

  async ledger(customer: Pick<Customer, 'token'>, query = ''): Promise<LedgerEntry[]> {
    const response = await this.gateway.call('GET', `/console/ledger?limit=200${query}`, { token: customer.token });
    expect(response.status).toBe(200);
    return response.body.data;
  }

  /** The Redis hold total of an account. */
  reserved(accountId: string): Promise<bigint> {
    return this.gateway.app.get(BalanceGateService).reserved(accountId);
  }

  /** Polls until the account has no open hold; returns the last total read. */
  waitForNoHolds(accountId: string, timeoutMs = SETTLE_TIMEOUT_MS): Promise<bigint> {
    return eventually(
      () => this.reserved(accountId),
      (reserved) => reserved === 0n,
      timeoutMs,
    );
  }

  async usageRecords(requestIds: string[]): Promise<UsageRecordRow[]> {
    return this.db.query<UsageRecordRow[]>(
      `SELECT request_id, account_id, status, usage_source, prompt_tokens, completion_tokens,
              cost::text AS cost, charged::text AS charged
       FROM usage_records WHERE request_id = ANY($1::text[]) ORDER BY request_id`,
      [requestIds],
    );
  }

  async usageRecordsOf(accountId: string): Promise<UsageRecordRow[]> {
    return this.db.query<UsageRecordRow[]>(
      `SELECT request_id, account_id, status, usage_source, prompt_tokens, completion_tokens,
              cost::text AS cost, charged::text AS charged
       FROM usage_records WHERE account_id = $1 ORDER BY request_id`,
      [accountId],
    );
  }

  /** Ledger entries of any kind whose reference is one of `references`. */
  async ledgerByReference(references: string[]): Promise<{ account_id: string; kind: string; amount: string }[]> {
    return this.db.query(
      `SELECT account_id, kind, amount::text AS amount FROM ledger_entries
       WHERE reference = ANY($1::text[]) ORDER BY kind, reference`,
      [references],
    );
  }

  /**
   * The books balance: every account's balance is the sum of its entries and its latest balance_after,
   * and every paid top-up order has exactly its one entry.
   */
  async expectBalanced(): Promise<void> {
    expect(await findLedgerMismatches(this.db)).toEqual([]);
    expect(await findTopupMismatches(this.db)).toEqual([]);
    expect(await findDepositMismatches(this.db)).toEqual([]);
  }

  /** Waits until no recorded usage is left for a request (settlement removes it after its commit). */
  waitForSettled(accountId: string, requestId: string): Promise<SettleCompletionPayload | null> {
    return eventually(
      () => this.recordedUsage(accountId, requestId),
      (recorded) => recorded === null,
    );
  }

  /** The usage the API recorded for a request and no worker has settled yet, or null. */
  async recordedUsage(accountId: string, requestId: string): Promise<SettleCompletionPayload | null> {
    const json = await this.gateway.app.get(UsageQueueService).recordedUsage(accountId, requestId);
    return json === null ? null : (JSON.parse(json) as SettleCompletionPayload);
  }
}

export function requestIdOf(response: HttpResult): string {
  const id = response.headers.get('x-request-id');
  expect(id).toMatch(/^req_/);
  return id!;
}

/**
 * A streaming completion read with node:http, so the test can hang up (destroy the socket) the moment
 * `stopWhen` accepts what arrived so far. Resolves with the text received and the response headers.
 */
export function streamUntil(
  gateway: TestGateway,
  key: string,
  body: Record<string, unknown>,
  stopWhen: (textSoFar: string) => boolean,
  path = '/v1/chat/completions',
): Promise<{ status: number; requestId: string; text: string; aborted: boolean }> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const request = httpRequest(
      `${gateway.url}${path}`,
      { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } },
      (response) => {
        let text = '';
        const requestId = String(response.headers['x-request-id'] ?? '');
        const finish = (aborted: boolean) => {
          if (!settled) {
            settled = true;
            resolve({ status: response.statusCode ?? 0, requestId, text, aborted });
          }
        };
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          if (settled) {
            return;
          }
          text += chunk;
          if (stopWhen(text)) {
            finish(true);
            request.destroy();
          }
        });
        response.on('end', () => finish(false));
        response.on('error', () => finish(false));
      },
    );
    request.on('error', (error) => {
      // Hanging up ourselves may surface here once the answer was already taken; anything else is real.
      if (!settled) {
        settled = true;
        reject(error);
      }
    });
    request.end(JSON.stringify(body));
  });
}

/** The content pieces of an event stream's chunks, in order (all choices). */
export function streamedContent(chunks: any[]): string {
  return chunks
    .flatMap((chunk) => (Array.isArray(chunk.choices) ? chunk.choices : []))
    .map((choice: any) => (typeof choice?.delta?.content === 'string' ? choice.delta.content : ''))
    .join('');
}

/** Complete `data: …` events of a partial event-stream text. */
export function completeEvents(text: string): any[] {
  const events = text.split('\n\n').slice(0, -1);
  return events
    .filter((event) => event.startsWith('data: {'))
    .map((event) => JSON.parse(event.slice('data: '.length)) as unknown);
}

/** What a billing suite runs against: the API and mock, a worker, the books, and one priced model. */
export interface BillingWorld {
  gateway: TestGateway;
  worker: TestWorker;
  books: Books;
  prices: Prices;
  model: string;
  close(): Promise<void>;
}

export async function openBillingWorld(
  inputPrice: string,
  outputPrice: string,
  model: Omit<ModelOptions, 'inputPrice' | 'outputPrice'> = {},
  /** The API's environment over the run's (the worker keeps the run's). */
  apiEnv: Record<string, string> = {},
): Promise<BillingWorld> {
  const gateway = await TestGateway.start(apiEnv);
  const worker = await TestWorker.start();
  const books = await Books.open(gateway);
  const world: BillingWorld = {
    gateway,
    worker,
    books,
    prices: pricesOf(inputPrice, outputPrice),
    model: await gateway.addModel({ inputPrice, outputPrice, ...model }),
    // Closes the worker the world holds now: a suite that replaces it must put the new one here.
    close: async () => {
      await books.close();
      await world.worker.close();
      await gateway.close();
    },
  };
  return world;
}
