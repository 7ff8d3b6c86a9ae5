import { Inject, Injectable, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Logger } from 'pino';
import { LOGGER, LogTarget } from 'src/common/logging/logger';
import { metrics } from 'src/common/metrics/metrics';
import { InvalidationBus, InvalidationTopic } from 'src/common/redis/invalidation-bus';
import { domainSlot } from 'src/common/redis/key-slots';
import { RedisClient } from 'src/common/redis/redis-client';
import { REDIS } from 'src/common/redis/redis.tokens';
import { runScript } from 'src/common/redis/run-script';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { ChannelsRepository } from 'src/modules/channels/channels.repository';
import {
  afterFailure,
  afterProbeTaken,
  afterSuccess,
  BreakerView,
  CLOSED,
  countsFailure,
  dueForAutoDisable,
  Failure,
  FRESH,
  gate,
  Gate,
  StoredBreaker,
} from 'src/modules/channels/health/breaker-policy';
import { BREAKER_CAS_SCRIPT, RELEASE_PROBE_SCRIPT } from 'src/modules/channels/health/breaker.scripts';

// Every breaker key in one slot (key-slots.ts): a change of state writes the channel's hash and the
// set of tracked channels in one script, and a refresh reads every tracked channel in one pipeline.
// Channels are few and their breakers change rarely: one slot carries them.
const BREAKER_SLOT = domainSlot('breaker');
const KEY = (channelId: string) => `${BREAKER_SLOT}:${channelId}`;
const PROBE_KEY = (channelId: string) => `${BREAKER_SLOT}:${channelId}:probe`;
/** Channels whose breaker is not plainly closed: the only ones a process needs to read on refresh. */
const TRACKED_KEY = `${BREAKER_SLOT}:tracked`;
// Pub/sub carries every change at once; the periodic read only repairs a missed message.
const REFRESH_INTERVAL_MS = 5_000;
// A success is written (lastOkAt, for the health view) at most this often per channel and process.
const LAST_OK_WRITE_MS = 10_000;
const CAS_ATTEMPTS = 20;
const STATE_GAUGE = { closed: 0, half_open: 1, open: 2 } as const;

/** The half-open breaker's one probe, held by this process until its verdict or its lease's end. */
export interface ProbeLease {
  channelId: string;
  token: string;
}

/** What the breaker needs to know of a channel. */
export interface BreakerChannel {
  id: string;
  autoDisableAfterHours: number | null;
}

/**
 * The circuit breaker of every channel, shared by all API processes through Redis. Routing asks
 * `gate` (memory only); only failures, the first success after one, and probes touch Redis.
 * Every change of state is logged once, by the process whose write made it.
 */
@Injectable()
export class ChannelBreaker implements OnModuleInit, OnModuleDestroy {
  private readonly views = new Map<string, BreakerView>();
  private readonly lastOkWritten = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly bus: InvalidationBus,
    private readonly channels: ChannelsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.redis.defineCommand('gatewayBreakerCas', { numberOfKeys: 2, lua: BREAKER_CAS_SCRIPT });
    this.redis.defineCommand('gatewayBreakerRelease', { numberOfKeys: 1, lua: RELEASE_PROBE_SCRIPT });
  }

  async onModuleInit(): Promise<void> {
    this.bus.on(InvalidationTopic.ChannelHealth, (channelId) => void this.refresh(channelId));
    await this.refresh(null);
    this.timer = setInterval(() => void this.refresh(null), REFRESH_INTERVAL_MS).unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.timer);
  }

  /** Whether routing may send to the channel now; memory only. */
  gate(channelId: string, now = Date.now()): Gate {
    return gate(this.views.get(channelId), now);
  }

  /** The channel's breaker as this process last saw it. */
  view(channelId: string): BreakerView {
    return this.views.get(channelId) ?? CLOSED;
  }

  /**
   * Tries to become the one probe of an open channel whose open time is over (SET NX across all
   * processes). 'closed': it closed meanwhile, send as usual; null: another request is the probe.
   */
  async takeProbe(channelId: string, leaseMs: number, request?: LogTarget): Promise<ProbeLease | 'closed' | null> {
    try {
      const token = randomUUID();
      const taken = await this.redis.set(PROBE_KEY(channelId), token, 'PX', leaseMs, 'NX');
      if (taken === null) {
        return null;
      }
      const changed = await this.update(channelId, (stored) => afterProbeTaken(stored, Date.now() + leaseMs), request);
      if (!changed) {
        await this.release({ channelId, token });
        return 'closed';
      }
      return { channelId, token };
    } catch (error) {
      this.lineTo(request).error(
        { channel: channelId, err: (error as Error).message },
        'breaker probe could not be taken',
      );
      return null;
    }
  }

  /** The channel answered properly. Touches Redis only when there is something to reset or to stamp. */
  async succeeded(channelId: string, lease: ProbeLease | null, request?: LogTarget): Promise<void> {
    const view = this.views.get(channelId);
    if (!lease && (!view || (view.state === 'closed' && view.failures === 0))) {
      this.stampLastOk(channelId, request);
      return;
    }
    await this.guarded(
      channelId,
      async () => {
        await this.update(
          channelId,
          (stored) => afterSuccess(stored, lease ? 'probe' : 'request', Date.now()),
          request,
        );
        await this.release(lease);
      },
      request,
    );
  }

  /**
   * The channel failed this request: counted (HINCRBY: concurrent failures from every process are all
   * counted, with no retry), then, at the limit or for the probe, opened (or reopened) by a
   * compare-and-set that only one process wins. A request sent before the breaker opened is not counted.
   * `request`: the request that failed, whose reqId the lines written meanwhile carry.
   */
  async failed(
    channel: BreakerChannel,
    failure: Omit<Failure, 'probe'>,
    lease: ProbeLease | null,
    request?: LogTarget,
  ): Promise<void> {
    const probe = lease !== null;
    if (!countsFailure(this.view(channel.id).state, probe)) {
      return;
    }
    await this.guarded(
      channel.id,
      async () => {
        const failures = await this.count(channel.id, failure);
        const limits = this.config.breaker;
        let next: StoredBreaker | null = null;
        if (probe || failures >= limits.failures) {
          next = await this.update(
            channel.id,
            (stored) => afterFailure(stored, { ...failure, probe }, limits, Date.now()),
            request,
          );
        } else {
          await this.bus.publish(InvalidationTopic.ChannelHealth, channel.id);
        }
        await this.release(lease);
        if (next?.state === 'open' && dueForAutoDisable(next.openedAt, Date.now(), channel.autoDisableAfterHours)) {
          await this.autoDisable(channel, next, request);
        }
      },
      request,
    );
  }

  /** The probe ended without a verdict (the client left, or its request was refused as the client's fault). */
  async release(lease: ProbeLease | null): Promise<void> {
    if (lease) {
      await runScript(this.redis, 'gatewayBreakerRelease', PROBE_KEY(lease.channelId), lease.token);
    }
  }

  /** The operator's test succeeded: closed, whatever the state. */
  async close(channelId: string): Promise<void> {
    await this.update(channelId, (stored) => afterSuccess(stored, 'test', Date.now()));
  }

  /** Forgets the channel's health: it was replaced or deleted. */
  async reset(channelId: string): Promise<void> {
    await this.redis.multi().del(KEY(channelId), PROBE_KEY(channelId)).srem(TRACKED_KEY, channelId).exec();
    this.apply(channelId, CLOSED);
    await this.bus.publish(InvalidationTopic.ChannelHealth, channelId);
  }

  /** The stored health of these channels, for the operator's view. */
  async health(channelIds: string[]): Promise<Map<string, StoredBreaker>> {
    const pipeline = this.redis.pipeline();
    channelIds.forEach((channelId) => pipeline.hgetall(KEY(channelId)));
    const replies = (await pipeline.exec()) ?? [];
    return new Map(channelIds.map((channelId, index) => [channelId, parse(replies[index]?.[1])]));
  }

  /** One more failure, atomically; the count after it. */
  private async count(channelId: string, failure: Omit<Failure, 'probe'>): Promise<number> {
    const replies = await this.redis
      .multi()
      .hincrby(KEY(channelId), 'failures', 1)
      .hset(KEY(channelId), 'kind', failure.kind, 'lastError', failure.error)
      .sadd(TRACKED_KEY, channelId)
      .exec();
    const [error, failures] = replies?.[0] ?? [new Error('the failure count was not written')];
    if (error) {
      throw error;
    }
    const view = this.view(channelId);
    this.apply(channelId, { ...view, failures: Number(failures), kind: failure.kind });
    return Number(failures);
  }

  /**
   * Reads the stored state, applies `change` and writes it back only if nobody wrote in between
   * (the version), retrying otherwise; logs the change of state and tells the other processes.
   */
  private async update(
    channelId: string,
    change: (stored: StoredBreaker) => StoredBreaker | null,
    request?: LogTarget,
  ): Promise<StoredBreaker | null> {
    for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt++) {
      const stored = parse(await this.redis.hgetall(KEY(channelId)));
      const next = change(stored);
      if (!next) {
        this.apply(channelId, stored);
        return null;
      }
      const tracked = next.state !== 'closed' || next.failures > 0;
      const written = await runScript<number>(
        this.redis,
        'gatewayBreakerCas',
        KEY(channelId),
        TRACKED_KEY,
        channelId,
        stored.version,
        tracked ? 1 : 0,
        // The count moves by HINCRBY; a transition writes it only to reset it.
        ...fields(next, next.failures < stored.failures),
      );
      if (written === 1) {
        this.apply(channelId, next);
        if (next.state !== stored.state) {
          this.logChange(channelId, stored, next, request);
        }
        await this.bus.publish(InvalidationTopic.ChannelHealth, channelId);
        return next;
      }
    }
    throw new Error(`breaker of channel ${channelId} kept changing under ${CAS_ATTEMPTS} attempts`);
  }

  private logChange(channelId: string, before: StoredBreaker, after: StoredBreaker, request?: LogTarget): void {
    const line = {
      channel: channelId,
      from: before.state,
      to: after.state,
      failures: after.failures,
      openUntil: after.state === 'closed' ? null : new Date(after.openUntil).toISOString(),
      lastError: after.state === 'open' ? after.lastError : undefined,
    };
    const log = this.lineTo(request);
    if (after.state === 'open') {
      log.warn(line, 'channel breaker opened');
    } else {
      log.info(line, after.state === 'closed' ? 'channel breaker closed' : 'channel breaker half-open');
    }
  }

  private async autoDisable(channel: BreakerChannel, stored: StoredBreaker, request?: LogTarget): Promise<void> {
    if (!(await this.channels.disable(channel.id))) {
      return;
    }
    this.lineTo(request).warn(
      { channel: channel.id, openSince: new Date(stored.openedAt).toISOString(), after: channel.autoDisableAfterHours },
      'channel disabled: its breaker stayed open past autoDisableAfterHours',
    );
    await this.bus.publish(InvalidationTopic.Catalog, channel.id);
  }

  /** lastOkAt for the health view, at most once per LAST_OK_WRITE_MS per channel: no write per request. */
  private stampLastOk(channelId: string, request?: LogTarget): void {
    const now = Date.now();
    if (now - (this.lastOkWritten.get(channelId) ?? 0) < LAST_OK_WRITE_MS) {
      return;
    }
    this.lastOkWritten.set(channelId, now);
    this.redis.hset(KEY(channelId), 'lastOkAt', now).catch((error: Error) => {
      this.lineTo(request).warn({ channel: channelId, err: error.message }, 'breaker lastOkAt not written');
    });
  }

  /** Breaker bookkeeping never fails a request: a Redis error is logged and the answer goes on. */
  private async guarded(channelId: string, work: () => Promise<void>, request?: LogTarget): Promise<void> {
    try {
      await work();
    } catch (error) {
      this.lineTo(request).error({ channel: channelId, err: (error as Error).message }, 'breaker state not updated');
    }
  }

  /** The request's logger (its reqId on the line) when a request is being served, else the process's. */
  private lineTo(request: LogTarget | undefined): Logger {
    return request === undefined ? this.logger : request.log;
  }

  /** One channel (a message named it) or, with null, every tracked one (start, reconnect, the periodic repair). */
  private async refresh(channelId: string | null): Promise<void> {
    try {
      if (channelId !== null) {
        this.apply(channelId, parse(await this.redis.hgetall(KEY(channelId))));
        return;
      }
      const tracked = await this.redis.smembers(TRACKED_KEY);
      const stored = await this.health(tracked);
      for (const known of this.views.keys()) {
        if (!stored.has(known)) {
          this.apply(known, CLOSED);
        }
      }
      stored.forEach((value, id) => this.apply(id, value));
    } catch (error) {
      this.logger.warn({ err: (error as Error).message }, 'breaker states not refreshed; keeping the last ones');
    }
  }

  private apply(channelId: string, view: BreakerView): void {
    const { state, failures, openUntil, kind } = view;
    this.views.set(channelId, { state, failures, openUntil, kind });
    metrics.breakerState.set({ channel: channelId }, STATE_GAUGE[state]);
  }
}

function fields(stored: StoredBreaker, withFailures: boolean): string[] {
  return [
    ['state', stored.state],
    ...(withFailures ? [['failures', String(stored.failures)]] : []),
    ['openUntil', String(stored.openUntil)],
    ['kind', stored.kind ?? ''],
    ['opens', String(stored.opens)],
    ['openedAt', String(stored.openedAt)],
    ['lastError', stored.lastError ?? ''],
    ['lastOkAt', String(stored.lastOkAt)],
  ].flat();
}

function parse(hash: unknown): StoredBreaker {
  const value = (hash ?? {}) as Record<string, string | undefined>;
  const number = (field: string) => Number(value[field] ?? 0) || 0;
  const state = value.state === 'open' || value.state === 'half_open' ? value.state : 'closed';
  const kind = value.kind === 'unreachable' || value.kind === 'capacity' || value.kind === 'error' ? value.kind : null;
  return {
    ...FRESH,
    state,
    failures: number('failures'),
    openUntil: number('openUntil'),
    kind,
    opens: number('opens'),
    openedAt: number('openedAt'),
    lastError: value.lastError || null,
    lastOkAt: number('lastOkAt'),
    version: number('version'),
  };
}
