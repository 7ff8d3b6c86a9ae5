import { Inject, Injectable } from '@nestjs/common';
import { FastifyReply } from 'fastify';
import { Logger } from 'pino';
import { ApiError } from 'src/common/errors/api-error';
import { LOGGER } from 'src/common/logging/logger';
import { metrics } from 'src/common/metrics/metrics';
import { countCompletionTokens } from 'src/modules/billing/token-estimator';
import { CompletionMeter, MeteredResult, MeteredStatus } from 'src/modules/billing/metering.types';
import { ChatRequest } from 'src/modules/chat-completions/chat-request.validator';
import { AdmittedCompletion } from 'src/modules/chat-completions/completion-admission.service';
import { orderRoutes } from 'src/modules/chat-completions/route-order';
import { CHAT_REPLY_FORMAT, ReplyFormat } from 'src/modules/chat-completions/reply-format';
import { relayStream } from 'src/modules/chat-completions/stream-relay';
import { AnthropicAdapter } from 'src/modules/chat-completions/upstream/anthropic.adapter';
import { GeminiAdapter } from 'src/modules/chat-completions/upstream/gemini.adapter';
import { OpenAiAdapter } from 'src/modules/chat-completions/upstream/openai.adapter';
import {
  generatedText,
  ProviderAdapter,
  usageFrom,
  wireUsage,
} from 'src/modules/chat-completions/upstream/provider-adapter';
import { readJsonBounded } from 'src/modules/chat-completions/upstream/bounded-body';
import { UpstreamBody, UpstreamClient } from 'src/modules/chat-completions/upstream/upstream-client';
import {
  ERROR_BODY_LIMIT_BYTES,
  finalError,
  ROUTE_FAILURE_STATUSES,
  RouteFailure,
  upstreamRefusal,
} from 'src/modules/chat-completions/upstream/route-failure';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { ChannelType } from 'src/modules/channels/channel.entity';
import { CatalogRoute } from 'src/modules/models/catalog.service';

interface Attempt {
  chat: ChatRequest;
  body: Record<string, unknown>;
  route: CatalogRoute;
  adapter: ProviderAdapter;
  reply: FastifyReply;
  format: ReplyFormat;
  meter: CompletionMeter;
  signal: AbortSignal;
  startedAt: number;
}

@Injectable()
export class ChatCompletionsService {
  private readonly adapters: Record<ChannelType, ProviderAdapter>;

  constructor(
    private readonly upstream: UpstreamClient,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.adapters = { openai: new OpenAiAdapter(), anthropic: new AnthropicAdapter(), gemini: new GeminiAdapter() };
  }

  /**
   * Tries the model's routes in order until one answers, and writes its answer to `reply`. A route
   * that fails before the client got a byte (no connection, 5xx, garbage) hands over to the next.
   */
  async complete(
    admitted: AdmittedCompletion,
    reply: FastifyReply,
    format: ReplyFormat = CHAT_REPLY_FORMAT,
  ): Promise<MeteredStatus> {
    const { chat, body, meter, signal } = admitted;
    let lastFailure: RouteFailure = { kind: 'unreachable' };
    for (const route of orderRoutes(chat.model.routes)) {
      const adapter = this.adapters[route.channel.type];
      if (signal.aborted) {
        throw signal.reason as Error;
      }
      const startedAt = performance.now();
      const request = adapter.buildRequest(route, body, chat);
      const result = await this.upstream.post(route.channel, request.path, request.headers, request.payload, signal);
      if (result.kind === 'unreachable') {
        lastFailure = this.routeFailed(route, { kind: 'unreachable' }, result.detail);
        continue;
      }
      metrics.upstreamLatency.observe({ channel: route.channel.id }, (performance.now() - startedAt) / 1000);
      const { statusCode } = result;
      if (statusCode >= 200 && statusCode < 300) {
        const attempt: Attempt = { chat, body, route, adapter, reply, format, meter, signal, startedAt };
        const status = await this.relay(attempt, result.body, result.headers['content-length']);
        if (status) {
          metrics.completions.inc({ model: chat.model.id, outcome: status });
          return status;
        }
        lastFailure = this.routeFailed(route, { kind: 'abnormal' });
      } else if (statusCode >= 500 || ROUTE_FAILURE_STATUSES.has(statusCode)) {
        await result.body.dump();
        lastFailure = this.routeFailed(route, { kind: 'status', status: statusCode });
      } else {
        const details = adapter.errorDetails(await readJsonBounded(result.body, ERROR_BODY_LIMIT_BYTES));
        const refusal = upstreamRefusal(route, details, statusCode);
        if (refusal instanceof ApiError) {
          throw refusal;
        }
        lastFailure = this.routeFailed(route, refusal);
      }
    }
    metrics.completions.inc({ model: chat.model.id, outcome: `failed_${lastFailure.kind}` });
    throw finalError(lastFailure, chat.model.id);
  }

  /** Logs and counts a route that could not serve; the next route is tried. */
  private routeFailed(route: CatalogRoute, failure: RouteFailure, detail?: string): RouteFailure {
    const status = failure.kind === 'status' ? failure.status : undefined;
    this.logger.warn({ channel: route.channel.id, kind: failure.kind, status, detail }, 'upstream route failed');
    metrics.upstreamFailures.inc({ channel: route.channel.id, kind: failure.kind });
    return failure;
  }

  /** Relays a 2xx answer; null when it turned out abnormal before anything reached the client. */
  private async relay(
    attempt: Attempt,
    body: UpstreamBody,
    declaredLength: string | string[] | undefined,
  ): Promise<MeteredStatus | null> {
    const { chat, route, adapter, reply, format, meter } = attempt;
    const result = (
      status: MeteredStatus,
      partial: Pick<MeteredResult, 'usage' | 'deliveredTokens'>,
    ): MeteredResult => ({
      status,
      channelId: route.channel.id,
      upstreamLatencyMs: Math.round(performance.now() - attempt.startedAt),
      ...partial,
    });
    if (chat.stream) {
      const translator = adapter.streamTranslator(route, chat);
      const measured = () => ({ usage: translator.usage(), deliveredTokens: () => translator.deliveredTokens() });
      const limits = { signal: attempt.signal, drainTimeoutMs: this.config.relay.drainTimeoutMs };
      const output = { translator, writer: format.streamWriter() };
      const outcome = await relayStream(body, reply, output, limits, async () => {
        const billed = await meter.record(result('completed', measured()));
        const synthesize = chat.includeUsage && !translator.usage();
        return synthesize ? [translator.usageEvent(billed)] : [];
      });
      if (outcome === 'abnormal') {
        return null;
      }
      if (outcome !== 'completed') {
        await meter.record(result(outcome, measured()));
      }
      return outcome;
    }
    const answer = await readJsonBounded(body, this.config.bodyLimitBytes, declaredLength);
    if (attempt.signal.aborted) {
      throw attempt.signal.reason as Error;
    }
    // Over BODY_LIMIT_BYTES or not JSON: abnormal, like garbage, so the next route is tried.
    const completion = adapter.toCompletion(answer, chat.model.id);
    if (!completion) {
      return null;
    }
    const deliveredTokens = () => countCompletionTokens(generatedText(completion.choices, 'message'));
    const reported = adapter.billedUsage?.(answer) ?? usageFrom(completion.usage);
    const billed = await meter.record(result('completed', { usage: reported, deliveredTokens }));
    // SPEC 2.1 promises usage; when the upstream left it out, the client sees what it was billed.
    completion.usage ??= wireUsage(billed);
    const answered = format.answer(completion);
    await reply.code(200).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(answered));
    return 'completed';
  }
}
