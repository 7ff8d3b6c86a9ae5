import { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { EntrypointProcess, spawnEntrypoint } from 'test/support/entrypoint-process';
import { countMockPromptTokens } from 'tools/mock-upstream/mock-upstream.server';
import { estimatePromptTokens } from 'src/modules/billing/token-estimator';
import { HttpResult } from 'test/support/gateway';

/** Helpers of the rate-limit e2e suites (requests and tokens per minute, overrides, overload). */

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const userMessages = (content = 'Say hi') => [{ role: 'user', content }];

/** The mock upstream's default reply: five words, so five completion tokens. */
export const MOCK_REPLY_WORDS = 5;

/** What the token limiter admits a request with: the prompt estimate plus the output cap, times n. */
export function admissionEstimate(messages: unknown[], maxOutput: number, n = 1): number {
  return estimatePromptTokens(messages) + maxOutput * n;
}

/** The tokens the mock upstream reports for a request: its crude prompt count plus one per reply word (× n). */
export function mockTokens(messages: unknown[], completionWords = MOCK_REPLY_WORDS, n = 1): number {
  return countMockPromptTokens(messages) + completionWords * n;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export interface ExpectedLimit {
  model: string;
  limit: 'requests per minute' | 'tokens per minute';
  /** The numbers of the message; undefined accepts any. */
  max?: number;
  used?: number;
  requested?: number;
  /** When set, the message must name this end user. */
  endUser?: string;
}

/**
 * A 429: exactly the error object `{message, type: 'requests', code: 'rate_limit_exceeded', param: null}`,
 * a message naming the model, the limit and the counts, and a `retry-after` header (whole seconds) that
 * agrees with the message. Returns the retry-after seconds.
 */
export function expectRateLimited(response: HttpResult, expected: ExpectedLimit): number {
  expect({ status: response.status, body: response.body }).toEqual({
    status: 429,
    body: {
      error: { message: expect.any(String), type: 'requests', code: 'rate_limit_exceeded', param: null },
    },
  });
  const message: string = response.body.error.message;
  const num = (value: number | undefined) => (value === undefined ? '\\d+' : String(value));
  const scope = expected.endUser === undefined ? '' : '[^:]*';
  const pattern = new RegExp(
    `^Rate limit reached for ${escapeRegExp(expected.model)} on ${expected.limit}${scope}: ` +
      `limit ${num(expected.max)}, used ${num(expected.used)}, requested ${num(expected.requested)}\\. ` +
      `Retry after (\\d+)s\\.$`,
  );
  expect(message).toMatch(pattern);
  if (expected.endUser === undefined) {
    expect(message).not.toMatch(/end user/i);
  } else {
    expect(message).toMatch(/end user/i);
    expect(message).toContain(expected.endUser);
  }
  const retryAfter = response.headers.get('retry-after');
  expect(retryAfter).toMatch(/^[1-9]\d*$/);
  expect(message).toContain(`Retry after ${retryAfter}s.`);
  return Number(retryAfter);
}

/** The three `x-ratelimit-*-<kind>` headers of a response. */
export function rateLimitHeaders(response: HttpResult, kind: 'requests' | 'tokens') {
  return {
    limit: response.headers.get(`x-ratelimit-limit-${kind}`),
    remaining: response.headers.get(`x-ratelimit-remaining-${kind}`),
    reset: response.headers.get(`x-ratelimit-reset-${kind}`),
  };
}

/**
 * Token windows are aligned to multiples of the window length; a test that compares counts across a
 * few requests waits, when needed, so that they all fall into one window.
 */
export async function awayFromWindowEdge(windowMs: number, neededMs: number): Promise<void> {
  const left = windowMs - (Date.now() % windowMs);
  if (left < neededMs) {
    await sleep(left + 50);
  }
}

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** A second API process, started as in production (`node main.js`, compiled) on the run's database and Redis. */
export class ApiProcess {
  private constructor(
    private readonly running: EntrypointProcess,
    readonly url: string,
  ) {}

  get child(): ChildProcess {
    return this.running.child;
  }

  static async start(env: Record<string, string> = {}, timeoutMs = 45_000): Promise<ApiProcess> {
    const port = await freePort();
    const running = spawnEntrypoint('main', { PORT: String(port), NODE_ENV: 'test', ...env });
    const api = new ApiProcess(running, `http://127.0.0.1:${port}`);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (running.child.exitCode !== null) {
        throw new Error(`the API process exited with ${running.child.exitCode}:\n${running.output()}`);
      }
      const status = await fetch(`${api.url}/health/ready`).then(
        (response) => response.status,
        () => 0,
      );
      if (status === 200) {
        return api;
      }
      if (Date.now() > deadline) {
        await api.stop();
        throw new Error(`the API process was not ready within ${timeoutMs} ms:\n${running.output()}`);
      }
      await sleep(200);
    }
  }

  /** SIGTERM by PID (the process drains and exits), SIGKILL if it is still there after a few seconds. */
  async stop(): Promise<void> {
    const { child } = this;
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) {
      return;
    }
    const exited = once(child, 'exit');
    process.kill(child.pid, 'SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const killed = await Promise.race([
      exited.then(() => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), 8_000))),
    ]);
    clearTimeout(timer);
    if (!killed) {
      process.kill(child.pid, 'SIGKILL');
      await exited;
    }
  }

  async call(method: string, path: string, options: { token?: string; body?: unknown } = {}): Promise<HttpResult> {
    const headers: Record<string, string> = {};
    if (options.token) {
      headers.authorization = `Bearer ${options.token}`;
    }
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
    }
    const response = await fetch(this.url + path, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const text = await response.text();
    let body: any = text;
    try {
      body = JSON.parse(text);
    } catch {
      // keep the text
    }
    return { status: response.status, headers: response.headers, body, text };
  }

  chat(key: string, body: Record<string, unknown>): Promise<HttpResult> {
    return this.call('POST', '/v1/chat/completions', { token: key, body });
  }
}
