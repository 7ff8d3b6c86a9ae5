import { Inject, Injectable } from '@nestjs/common';
import { FastifyReply } from 'fastify';
import { LogTarget } from 'src/common/logging/logger';
import { ApiError } from 'src/common/errors/api-error';
import { metrics } from 'src/common/metrics/metrics';
import { countCompletionTokens } from 'src/modules/billing/token-estimator';
import { CompletionMeter, MeteredResult, MeteredStatus } from 'src/modules/billing/metering.types';
import { ChatRequest } from 'src/modules/relay/chat-request/chat-request.validator';
import { AdmittedCompletion } from 'src/modules/relay/chat-request/chat-admission';
import { orderRoutes } from 'src/modules/relay/route-order';
import { CHAT_REPLY_FORMAT, PassedAnswer, PassThrough, ReplyFormat } from 'src/modules/relay/reply-format';
import { relayStream } from 'src/modules/relay/stream-relay';
import { AnthropicAdapter } from 'src/modules/relay/upstream/anthropic.adapter';
import { GeminiAdapter } from 'src/modules/relay/upstream/gemini.adapter';
import { OpenAiAdapter } from 'src/modules/relay/upstream/openai.adapter';
import { generatedText, ProviderAdapter, usageFrom, wireUsage } from 'src/modules/relay/upstream/provider-adapter';
import { readJsonBounded } from 'src/modules/relay/upstream/bounded-body';
import { UpstreamClient, UpstreamResponse, UpstreamResult } from 'src/modules/relay/upstream/upstream-client';
import { AttemptSpan } from 'src/modules/relay/upstream/attempt-span';
import { providerRequestIdOf } from 'src/common/http/request-trace';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { ChannelType } from 'src/modules/channels/channel.entity';
import { retryAfterMs, retryAfterSeconds } from 'src/modules/channels/health/breaker-policy';
import { ChannelBreaker, ProbeLease } from 'src/modules/channels/health/channel-breaker.service';
import { IncomingHttpHeaders } from 'node:http';
import { CatalogRoute } from 'src/modules/models/catalog.service';
import {
  allOpenError,
  breakerKind,
  describeFailure,
  ERROR_BODY_LIMIT_BYTES,
  finalError,
  RouteFailure,
  statusFailure,
  UpstreamOutcome,
  upstreamRefusal,
} from 'src/modules/relay/route-failure';
import { CancelSignal } from 'src/common/http/cancel-signal';

const SKIP = Symbol('skip');
// The probe's lease outlives its first-byte timeout by this much; past it another process may probe.
const PROBE_LEASE_MARGIN_MS = 5_000;

interface Attempt {
  chat: ChatRequest;
  /** Read for the body only when the upstream request is built: a stream drops its parsed body once committed. */
  admitted: AdmittedCompletion;
  route: CatalogRoute;
  adapter: ProviderAdapter;
  reply: FastifyReply;
  format: ReplyFormat;
  /** Set when this route's channel speaks the client's own API: nothing is translated. */
  passThrough: PassThrough | null;
  meter: CompletionMeter;
  signal: CancelSignal;
  startedAt: number;
  lease: ProbeLease | null;
  /** Null when tracing is off. */
  span: AttemptSpan | null;
}

@Injectable()
export class CompletionRelay {
  private readonly adapters: Record<ChannelType, ProviderAdapter>;

  constructor(
    private readonly upstream: UpstreamClient,
    private readonly breaker: ChannelBreaker,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.adapters = {
      openai: new OpenAiAdapter(),
      anthropic: new AnthropicAdapter(),
      gemini: new GeminiAdapter(config.imageFetch),
    };
  }

  /**
   * Tries the model's routes in order until one answers, and writes its answer to `reply`. A route
   * that fails before the client got a byte (no connection, 5xx, garbage) hands over to the next.
   * Routes whose breaker is open are skipped without a request; when all are, the answer is at once.
   */
  async complete(
    admitted: AdmittedCompletion,
    reply: FastifyReply,
    format: ReplyFormat = CHAT_REPLY_FORMAT,
  ): Promise<MeteredStatus> {
    const { chat, meter, signal } = admitted;
    let lastFailure: RouteFailure | null = null;
    const routes = orderRoutes(chat.model.routes);
    for (const route of routes) {
      const adapter = this.adapters[route.channel.type];
      if (signal.aborted) {
        throw signal.reason;
      }
      // Memory only while the channel is closed: Redis is asked only to become an open channel's probe.
      const gate = this.breaker.gate(route.channel.id);
      const lease =
        gate === 'pass' ? null : gate === 'skip' ? SKIP : await this.takeProbe(route, chat.stream, admitted.trace);
      if (lease === SKIP) {
        continue;
      }
      const startedAt = performance.now();
      const passThrough = format.passThrough?.(route, chat) ?? null;
      const attempt: Attempt = {
        chat,
        admitted,
        route,
        adapter,
        reply,
        format,
        passThrough,
        meter,
        signal,
        startedAt,
        lease,
        span: AttemptSpan.start(admitted.trace, route),
      };
      try {
        const outcome = await this.attempt(attempt);
        attempt.span?.ended(outcome);
        if (typeof outcome === 'string') {
          metrics.completions.inc(chat.model.id, outcome);
          return outcome;
        }
        lastFailure = outcome;
      } catch (error) {
        attempt.span?.threw(error);
        throw error;
      } finally {
        if (lease) {
          // A probe that reached no verdict (the client left, or the request was the client's fault) lets another probe.
          await this.breaker.release(lease).catch(() => undefined);
        }
      }
    }
    const failure = lastFailure ?? { kind: 'open' as const };
    metrics.completions.inc(chat.model.id, `failed_${failure.kind}`);
    throw this.finalError(lastFailure, routes, chat.model.id);
  }

  /** Tries to be the open channel's one probe: a lease, null when it closed meanwhile, or SKIP. */
  private async takeProbe(
    route: CatalogRoute,
    stream: boolean,
    trace: LogTarget,
  ): Promise<ProbeLease | null | typeof SKIP> {
    const { connectMs, firstByteMs, streamFirstByteMs } = route.channel.timeouts;
    const leaseMs = connectMs + (stream ? streamFirstByteMs : firstByteMs) + PROBE_LEASE_MARGIN_MS;
    const lease = await this.breaker.takeProbe(route.channel.id, leaseMs, trace);
    return lease === 'closed' ? null : (lease ?? SKIP);
  }

  /** One upstream request: the answer's status once it reached the client, or why this route failed. */
  private async attempt(attempt: Attempt): Promise<MeteredStatus | RouteFailure> {
    const { route, adapter, lease } = attempt;
    // The trace, not its logger: the child logger is made only if a line is written.
    const trace = attempt.admitted.trace;
    const result = await this.send(attempt);
    attempt.span?.answered(result);
    if (result.kind === 'unreachable') {
      const outcome = result.timedOut ? 'timeout' : 'unreachable';
      return this.routeFailed(trace, route, lease, { kind: 'unreachable', breaker: true }, outcome, {}, result.detail);
    }
    metrics.upstreamLatency.observe(route.channel.id, (performance.now() - attempt.startedAt) / 1000);
    const { statusCode, headers } = result;
    if (statusCode >= 200 && statusCode < 300) {
      const status = await this.relay(attempt, result);
      if (status) {
        return status;
      }
      return this.routeFailed(trace, route, lease, { kind: 'abnormal', breaker: true }, 'abnormal', headers);
    }
    const routeFailure = statusFailure(statusCode);
    if (routeFailure) {
      await result.body.dump();
      return this.routeFailed(trace, route, lease, routeFailure.failure, routeFailure.outcome, headers);
    }
    const details = adapter.errorDetails(await readJsonBounded(result.body, ERROR_BODY_LIMIT_BYTES));
    const refusal = upstreamRefusal(route, details, statusCode);
    if (refusal instanceof ApiError) {
      metrics.upstreamRequests.inc(route.channel.id, 'client_error');
      throw refusal;
    }
    return this.routeFailed(trace, route, lease, refusal, 'account', headers);
  }

  /**
   * The upstream request, built and sent. Its body and payload stay in this call's frame, which ends
   * when the answer's head arrives, so a stream relayed afterwards holds neither.
   */
  private async send(attempt: Attempt): Promise<UpstreamResult> {
    const { chat, route, adapter, signal, passThrough } = attempt;
    const request =
      passThrough?.request ?? (await adapter.buildRequest(route, attempt.admitted.prompt.body, chat, signal));
    const trace = AttemptSpan.upstreamTrace(attempt.admitted.trace, attempt.span);
    return this.upstream.post(
      route.channel,
      request.path,
      request.headers,
      request.payload,
      signal,
      chat.stream,
      trace,
    );
  }

  /** Logs and counts a route that could not serve, and tells its breaker; the next route is tried. */
  private async routeFailed(
    trace: LogTarget,
    route: CatalogRoute,
    lease: ProbeLease | null,
    failure: RouteFailure,
    outcome: UpstreamOutcome,
    headers: IncomingHttpHeaders,
    detail?: string,
  ): Promise<RouteFailure> {
    const status = failure.kind === 'status' ? failure.status : undefined;
    const providerRequestId = providerRequestIdOf(headers) ?? undefined;
    trace.log.warn(
      { channel: route.channel.id, kind: failure.kind, status, detail, providerRequestId },
      'upstream route failed',
    );
    metrics.upstreamFailures.inc({ channel: route.channel.id, kind: failure.kind });
    metrics.upstreamRequests.inc(route.channel.id, outcome);
    if (failure.breaker) {
      await this.breaker.failed(
        route.channel,
        {
          kind: breakerKind(failure),
          error: describeFailure(failure, outcome, detail),
          retryAfterMs: retryAfterMs(headers),
        },
        lease,
        trace,
      );
    }
    return failure;
  }

  /** The channel answered properly (a valid answer, or a stream's first event). */
  private succeeded(attempt: Attempt): void {
    metrics.upstreamRequests.inc(attempt.route.channel.id, 'ok');
    void this.breaker.succeeded(attempt.route.channel.id, attempt.lease, attempt.admitted.trace);
  }

  /**
   * The answer when no route served: the last tried route's failure (docs/errors.md, "Statuses"), or,
   * when every route was skipped as open, the failure their breakers recorded. While every route is
   * open, `retry-after` says when the first of them may be tried again.
   */
  private finalError(lastFailure: RouteFailure | null, routes: CatalogRoute[], modelId: string): ApiError {
    const now = Date.now();
    const views = routes.map((route) => this.breaker.view(route.channel.id));
    const allOpen = views.every((view) => view.state !== 'closed');
    const retryAfter = retryAfterSeconds(views, now);
    if (!lastFailure) {
      return allOpenError(views, modelId, retryAfter);
    }
    return finalError(lastFailure, modelId, allOpen ? { 'retry-after': String(retryAfter) } : {});
  }

  /** Relays a 2xx answer; null when it turned out abnormal before anything reached the client. */
  private async relay(attempt: Attempt, response: UpstreamResponse): Promise<MeteredStatus | null> {
    const { chat, route, adapter, reply, format, passThrough, meter } = attempt;
    const { body, firstByteMs, providerRequestId } = response;
    const result = (
      status: MeteredStatus,
      partial: Pick<MeteredResult, 'usage' | 'deliveredTokens'>,
    ): MeteredResult => ({
      status,
      channelId: route.channel.id,
      upstreamLatencyMs: Math.round(performance.now() - attempt.startedAt),
      providerRequestId,
      firstByteMs,
      ...partial,
    });
    if (chat.stream) {
      const output = passThrough?.stream() ?? {
        translator: adapter.streamTranslator(route, chat),
        writer: format.streamWriter(),
      };
      const translator = output.translator;
      const measured = () => ({ usage: translator.usage(), deliveredTokens: () => translator.deliveredTokens() });
      const limits = {
        signal: attempt.signal,
        drainTimeoutMs: this.config.relay.drainTimeoutMs,
        onStart: () => {
          this.succeeded(attempt);
          // The client has bytes: no other route will be tried, so the prompt's parsed copy can go.
          attempt.admitted.prompt.dropParsed();
        },
      };
      const outcome = await relayStream(body, reply, output, limits, async () => {
        const billed = await meter.record(result('completed', measured()));
        // A provider's own stream has its own usage events: nothing is added to it.
        const synthesize = !passThrough && chat.includeUsage && !translator.usage();
        return synthesize ? [translator.usageEvent(billed)] : [];
      });
      if (outcome === 'abnormal') {
        return null;
      }
      if (outcome !== 'completed') {
        await meter.record(result(outcome, measured()));
      }
      if (outcome === 'upstream_broken' && !attempt.signal.aborted) {
        // After the client's first byte: the client got an error event and is billed for what it got.
        await this.routeFailed(attempt.admitted.trace, route, null, { kind: 'abnormal', breaker: true }, 'broken', {});
      } else if (outcome === 'client_aborted') {
        metrics.upstreamRequests.inc(route.channel.id, 'client_aborted');
      }
      return outcome;
    }
    const answer = await readJsonBounded(body, this.config.bodyLimitBytes, response.headers['content-length']);
    if (attempt.signal.aborted) {
      throw attempt.signal.reason;
    }
    if (passThrough) {
      return this.sendPassedAnswer(attempt, passThrough.answer(answer), result);
    }
    // Over BODY_LIMIT_BYTES or not JSON: abnormal, like garbage, so the next route is tried.
    const completion = adapter.toCompletion(answer, chat.model.id);
    if (!completion) {
      return null;
    }
    this.succeeded(attempt);
    const deliveredTokens = () => countCompletionTokens(generatedText(completion.choices, 'message'));
    const reported = adapter.billedUsage?.(answer) ?? usageFrom(completion.usage);
    const billed = await meter.record(result('completed', { usage: reported, deliveredTokens }));
    // The completion object promises usage (openapi.json, ChatCompletionDto); when the upstream left it
    // out, the client sees what it was billed.
    completion.usage ??= wireUsage(billed);
    const answered = format.answer(completion);
    await reply.code(200).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(answered));
    return 'completed';
  }

  /** A provider's own JSON answer, billed like a translated one and sent as it came; null when not valid. */
  private async sendPassedAnswer(
    attempt: Attempt,
    passed: PassedAnswer | null,
    result: (status: MeteredStatus, partial: Pick<MeteredResult, 'usage' | 'deliveredTokens'>) => MeteredResult,
  ): Promise<MeteredStatus | null> {
    if (!passed) {
      return null;
    }
    this.succeeded(attempt);
    const billed = await attempt.meter.record(
      result('completed', { usage: passed.usage, deliveredTokens: passed.deliveredTokens }),
    );
    const answered = JSON.stringify(passed.body(billed));
    await attempt.reply.code(200).header('content-type', 'application/json; charset=utf-8').send(answered);
    return 'completed';
  }
}
