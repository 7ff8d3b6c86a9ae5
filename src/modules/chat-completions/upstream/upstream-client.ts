import { Inject, Injectable, OnModuleDestroy } from '@nestjs/common';
import { IncomingHttpHeaders } from 'node:http';
import { Dispatcher, Pool } from 'undici';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { CatalogChannel } from 'src/modules/models/catalog.service';

const POOL_CLOSE_WAIT_MS = 1_000;

export type UpstreamBody = Dispatcher.ResponseData['body'];

export type UpstreamResult =
  | { kind: 'response'; statusCode: number; headers: IncomingHttpHeaders; body: UpstreamBody }
  /** No response at all: refused, reset, DNS, or no headers in time. */
  | { kind: 'unreachable'; detail: string };

interface ChannelPool {
  baseUrl: string;
  basePath: string;
  pool: Pool;
}

/** Keep-alive connection pools, one per channel, so hot channels never pay a new TCP/TLS handshake. */
@Injectable()
export class UpstreamClient implements OnModuleDestroy {
  private readonly pools = new Map<string, ChannelPool>();

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  async post(
    channel: CatalogChannel,
    path: string,
    headers: Record<string, string>,
    payload: string,
    signal: AbortSignal,
  ): Promise<UpstreamResult> {
    const { pool, basePath } = this.poolFor(channel);
    try {
      const response = await pool.request({ method: 'POST', path: basePath + path, headers, body: payload, signal });
      return { kind: 'response', statusCode: response.statusCode, headers: response.headers, body: response.body };
    } catch (error) {
      if (signal.aborted) {
        // The client hung up or the deadline passed: the reason is the answer.
        throw signal.reason as Error;
      }
      const { code, message } = error as { code?: string; message: string };
      return { kind: 'unreachable', detail: code ?? message };
    }
  }

  /**
   * Runs once the HTTP server has drained (main.ts waits for in-flight requests first), so nothing should
   * still use a pool: close them gracefully, and destroy whatever has not finished after a short wait.
   */
  async onModuleDestroy(): Promise<void> {
    const pools = [...this.pools.values()].map(({ pool }) => pool);
    let timer: NodeJS.Timeout | undefined;
    const wait = new Promise<void>((resolve) => (timer = setTimeout(resolve, POOL_CLOSE_WAIT_MS)));
    await Promise.race([Promise.all(pools.map((pool) => pool.close().catch(() => undefined))), wait]);
    clearTimeout(timer);
    await Promise.all(pools.map((pool) => pool.destroy().catch(() => undefined)));
  }

  private poolFor(channel: CatalogChannel): ChannelPool {
    const existing = this.pools.get(channel.id);
    if (existing && existing.baseUrl === channel.baseUrl) {
      return existing;
    }
    // The operator moved the channel: let the old pool finish its requests, then close.
    void existing?.pool.close().catch(() => undefined);
    const url = new URL(channel.baseUrl);
    const { connectTimeoutMs, headersTimeoutMs, bodyTimeoutMs } = this.config.upstream;
    const created: ChannelPool = {
      baseUrl: channel.baseUrl,
      basePath: url.pathname.replace(/\/+$/, ''),
      pool: new Pool(url.origin, {
        connect: { timeout: connectTimeoutMs },
        headersTimeout: headersTimeoutMs,
        bodyTimeout: bodyTimeoutMs,
        keepAliveTimeout: 30_000,
      }),
    };
    this.pools.set(channel.id, created);
    return created;
  }
}
