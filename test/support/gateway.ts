import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import pino from 'pino';
import { createApiApp } from 'src/app.factory';
import { loadConfig } from 'src/config/app-config';
import { MockUpstream, startMockUpstream } from 'tools/mock-upstream/mock-upstream.server';
import { CatalogService } from 'src/modules/models/catalog.service';
import { WorkerModule } from 'src/worker.module';
import { NestFactory } from '@nestjs/core';
import { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';

export interface HttpResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface Customer {
  accountId: string;
  email: string;
  token: string;
  key: string;
  keyId: string;
}

export interface ModelOptions {
  inputPrice?: string;
  outputPrice?: string;
  cachedInputPrice?: string;
  cacheWriteInputPrice?: string;
  maxOutputTokens?: number;
  vision?: boolean;
  kind?: 'chat' | 'embedding' | 'completion';
  rpm?: number;
  tpm?: number;
  enabled?: boolean;
  routes?: { channelId: string; upstreamModel: string }[];
}

/**
 * A real gateway for one test file: the API module on Fastify listening on a random port, the
 * mock upstream on another, both over real HTTP, on the run's fresh Postgres database and Redis db.
 */
export class TestGateway {
  private constructor(
    readonly app: NestFastifyApplication,
    readonly url: string,
    readonly mock: MockUpstream,
    readonly adminToken: string,
  ) {}

  /** `logger` receives the API's log lines, for tests of what it logs; `port` 0 picks a free one. */
  static async start(env: Record<string, string> = {}, logger?: pino.Logger, port = 0): Promise<TestGateway> {
    const mock = await startMockUpstream();
    const config = loadConfig({ SHUTDOWN_GRACE_MS: '2000', ...process.env, ...env });
    const app = await createApiApp(config, logger ?? pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }));
    await app.listen(port, '127.0.0.1');
    const address = app.getHttpServer().address() as { port: number };
    return new TestGateway(app, `http://127.0.0.1:${address.port}`, mock, config.adminToken ?? '');
  }

  async close(): Promise<void> {
    // Like main.ts on SIGTERM: connections still open after a short grace are cut.
    const force = setTimeout(() => this.app.getHttpServer().closeAllConnections(), 2_000);
    await this.app.close();
    clearTimeout(force);
    await this.mock.close();
  }

  async call<T = any>(
    method: string,
    path: string,
    options: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<HttpResult<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) {
      headers.authorization = `Bearer ${options.token}`;
    }
    if (options.body !== undefined) {
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(this.url + path, {
      method,
      headers,
      body:
        options.body === undefined
          ? undefined
          : typeof options.body === 'string'
            ? options.body
            : JSON.stringify(options.body),
    });
    const text = await response.text();
    let body: any = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON (event streams); keep the text
    }
    return { status: response.status, headers: response.headers, body, text };
  }

  admin<T = any>(method: string, path: string, body?: unknown): Promise<HttpResult<T>> {
    return this.call<T>(method, path, { token: this.adminToken, body });
  }

  /** Sends headers exactly as given (fetch would trim whitespace in them). */
  raw(method: string, path: string, headers: Record<string, string>, body?: string): Promise<HttpResult> {
    return new Promise((resolve, reject) => {
      const request = httpRequest(this.url + path, { method, headers }, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          let parsed: any = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // keep text
          }
          resolve({
            status: response.statusCode ?? 0,
            headers: new Headers(response.headers as Record<string, string>),
            body: parsed,
            text,
          });
        });
      });
      request.on('error', reject);
      request.end(body);
    });
  }

  /** A channel on the mock upstream (or another base URL) and a model routed to it; returns the model id. */
  async addModel(options: ModelOptions & { id?: string; baseUrl?: string } = {}): Promise<string> {
    const id = options.id ?? `model-${randomUUID().slice(0, 8)}`;
    let routes = options.routes;
    if (!routes) {
      const channelId = `ch-${randomUUID().slice(0, 8)}`;
      await this.addChannel(channelId, { baseUrl: options.baseUrl ?? `${this.mock.url}/v1` });
      routes = [{ channelId, upstreamModel: 'mock-gpt' }];
    }
    const response = await this.admin('PUT', `/admin/models/${encodeURIComponent(id)}`, {
      inputPrice: options.inputPrice ?? '2.5',
      outputPrice: options.outputPrice ?? '10',
      cachedInputPrice: options.cachedInputPrice,
      cacheWriteInputPrice: options.cacheWriteInputPrice,
      maxOutputTokens: options.maxOutputTokens ?? 1000,
      vision: options.vision ?? false,
      kind: options.kind,
      rpm: options.rpm ?? 1000,
      tpm: options.tpm ?? 10_000_000,
      enabled: options.enabled ?? true,
      routes,
    });
    expect(response.status).toBe(200);
    await this.app.get(CatalogService).reload();
    return id;
  }

  async addChannel(
    id: string,
    options: {
      baseUrl: string;
      priority?: number;
      weight?: number;
      enabled?: boolean;
      apiKey?: string;
      type?: 'openai' | 'anthropic' | 'gemini';
    },
  ) {
    const response = await this.admin('PUT', `/admin/channels/${id}`, {
      type: options.type ?? 'openai',
      apiKey: options.apiKey ?? 'upstream-secret-key-0123456789',
      baseUrl: options.baseUrl,
      priority: options.priority ?? 0,
      weight: options.weight ?? 1,
      enabled: options.enabled ?? true,
    });
    expect(response.status).toBe(200);
  }

  /**
   * Registers an account through the console, credits it ($10 unless told otherwise), and creates one
   * API key. Its e-mail counts as verified (as if its owner had followed the mailed link; referral
   * credit needs it) unless `verified` is false; the mail itself is the subject of console-email's tests.
   */
  async newCustomer(options: { balance?: string; referralCode?: string; verified?: boolean } = {}): Promise<Customer> {
    const email = `user-${randomUUID()}@example.com`;
    const registered = await this.call('POST', '/console/auth/register', {
      body: { email, password: 'password-123', referralCode: options.referralCode },
    });
    expect(registered.status).toBe(201);
    const token: string = registered.body.accessToken;
    const accountId: string = registered.body.account.id;
    if (options.verified !== false) {
      await this.app.get(DataSource).query('UPDATE accounts SET email_verified_at = now() WHERE id = $1', [accountId]);
    }
    const balance = options.balance ?? '10';
    if (balance !== '0') {
      const credited = await this.admin('POST', `/admin/accounts/${accountId}/adjustments`, {
        amount: balance,
        reason: 'test credit',
      });
      expect(credited.status).toBe(201);
    }
    const created = await this.call('POST', '/console/keys', { token, body: { name: 'test' } });
    expect(created.status).toBe(201);
    return { accountId, email, token, key: created.body.key, keyId: created.body.id };
  }

  chat(key: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
    return this.call('POST', '/v1/chat/completions', { token: key, body, headers });
  }
}

/** The JSON chunks of an event-stream text, and whether it ended with [DONE]. */
export function parseEventStream(text: string): { chunks: any[]; done: boolean; events: string[] } {
  const events = text.split('\n\n').filter((event) => event.trim() !== '');
  const done = events.at(-1) === 'data: [DONE]';
  const chunks = events
    .filter((event) => event !== 'data: [DONE]')
    .map((event) => JSON.parse(event.replace(/^data: /, '')));
  return { chunks, done, events };
}

/** The worker process's module graph (billing settlement, hold sweeper) running in the test process. */
export class TestWorker {
  private constructor(readonly app: INestApplicationContext) {}

  static async start(env: Record<string, string> = {}): Promise<TestWorker> {
    const config = loadConfig({ ...process.env, ...env });
    const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
    const app = await NestFactory.createApplicationContext(WorkerModule.forRoot(config, logger), { logger: false });
    return new TestWorker(app);
  }

  close(): Promise<void> {
    return this.app.close();
  }
}
