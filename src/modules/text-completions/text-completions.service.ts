import { Inject, Injectable } from '@nestjs/common';
import { FastifyReply } from 'fastify';
import { LogTarget } from 'src/common/logging/logger';
import { metrics } from 'src/common/metrics/metrics';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { MeteredResult, MeteredStatus } from 'src/modules/billing/metering.types';
import { countCompletionTokens } from 'src/modules/billing/token-estimator';
import { Admitted } from 'src/modules/relay/admission/completion-admission.service';
import { CHAT_REPLY_FORMAT } from 'src/modules/relay/reply-format';
import { orderRoutes } from 'src/modules/relay/route-order';
import { relayStream } from 'src/modules/relay/stream-relay';
import { readJsonBounded } from 'src/modules/relay/upstream/bounded-body';
import { OpenAiAdapter } from 'src/modules/relay/upstream/openai.adapter';
import { usageFrom, wireUsage } from 'src/modules/relay/upstream/provider-adapter';
import { failedAnswer, finalError, RouteFailure } from 'src/modules/relay/route-failure';
import { UpstreamBody, UpstreamClient, UpstreamResponse } from 'src/modules/relay/upstream/upstream-client';
import { AttemptSpan } from 'src/modules/relay/upstream/attempt-span';
import { CatalogRoute } from 'src/modules/models/catalog.service';
import {
  choicesText,
  textCompletionRequest,
  textCompletionStreamTranslator,
  toTextCompletion,
} from 'src/modules/text-completions/openai-text-completions';
import { TextCompletionAdmission } from 'src/modules/text-completions/text-completion-request.validator';

type AdmittedTextCompletion = Admitted<TextCompletionAdmission>;

/**
 * Relays an admitted legacy completion to the model's OpenAI-type routes, in the chat relay's order:
 * a route that fails before the client got a byte (no connection, 5xx, garbage) hands over to the
 * next. The answer (JSON, or the stream event by event) is billed through billing's meter before its
 * last bytes; nothing of the prompt or the text is kept or logged.
 */
@Injectable()
export class TextCompletionsService {
  // Error bodies are OpenAI's; its adapter reads them.
  private readonly errors = new OpenAiAdapter();

  constructor(
    private readonly upstream: UpstreamClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async complete(admitted: AdmittedTextCompletion, reply: FastifyReply): Promise<MeteredStatus> {
    const { completion, signal } = admitted;
    let lastFailure: RouteFailure = { kind: 'unreachable', breaker: true };
    for (const route of orderRoutes(completion.routes)) {
      if (signal.aborted) {
        throw signal.reason;
      }
      const outcome = await AttemptSpan.around(admitted.trace, route, (span) =>
        this.attempt(admitted, route, reply, span),
      );
      if (typeof outcome === 'string') {
        metrics.textCompletions.inc({ model: completion.model.id, outcome });
        return outcome;
      }
      lastFailure = outcome;
    }
    metrics.textCompletions.inc({ model: completion.model.id, outcome: `failed_${lastFailure.kind}` });
    throw finalError(lastFailure, completion.model.id);
  }

  /** One upstream request: the answer's status once it reached the client, or why this route failed. */
  private async attempt(
    admitted: AdmittedTextCompletion,
    route: CatalogRoute,
    reply: FastifyReply,
    span: AttemptSpan | null,
  ): Promise<MeteredStatus | RouteFailure> {
    const { completion, signal } = admitted;
    const startedAt = performance.now();
    const request = textCompletionRequest(route, admitted.prompt.body, completion);
    const result = await this.upstream.post(
      route.channel,
      request.path,
      request.headers,
      request.payload,
      signal,
      completion.stream,
      AttemptSpan.upstreamTrace(admitted.trace, span),
    );
    span?.answered(result);
    if (result.kind === 'unreachable') {
      return this.routeFailed(admitted.trace, route, { kind: 'unreachable', breaker: true }, result.detail);
    }
    metrics.upstreamLatency.observe(route.channel.id, (performance.now() - startedAt) / 1000);
    const { statusCode } = result;
    if (statusCode < 200 || statusCode >= 300) {
      return this.routeFailed(admitted.trace, route, await failedAnswer(route, this.errors, statusCode, result.body));
    }
    const status = await this.relay(
      { admitted, route, reply, startedAt, upstream: result },
      result.body,
      result.headers,
    );
    return status ?? this.routeFailed(admitted.trace, route, { kind: 'abnormal', breaker: true });
  }

  /** Relays a 2xx answer; null when it turned out abnormal before anything reached the client. */
  private async relay(
    attempt: {
      admitted: AdmittedTextCompletion;
      route: CatalogRoute;
      reply: FastifyReply;
      startedAt: number;
      upstream: Pick<UpstreamResponse, 'firstByteMs' | 'providerRequestId'>;
    },
    body: UpstreamBody,
    headers: Record<string, string | string[] | undefined>,
  ): Promise<MeteredStatus | null> {
    const { admitted, route, reply } = attempt;
    const { completion, meter, signal } = admitted;
    const result = (status: MeteredStatus, partial: Pick<MeteredResult, 'usage' | 'deliveredTokens'>) => ({
      status,
      channelId: route.channel.id,
      upstreamLatencyMs: Math.round(performance.now() - attempt.startedAt),
      providerRequestId: attempt.upstream.providerRequestId,
      firstByteMs: attempt.upstream.firstByteMs,
      ...partial,
    });
    if (completion.stream) {
      return this.relayStream(attempt, body, result);
    }
    const answer = await readJsonBounded(body, this.config.bodyLimitBytes, headers['content-length']);
    if (signal.aborted) {
      throw signal.reason;
    }
    const relayed = toTextCompletion(answer, completion.model.id);
    if (!relayed) {
      return null;
    }
    const deliveredTokens = () => countCompletionTokens(choicesText(relayed.choices));
    const reported = usageFrom(relayed.usage);
    const billed = await meter.record(result('completed', { usage: reported, deliveredTokens }));
    // OpenAI's answer carries usage; when the upstream left it out, the client sees what it was billed.
    relayed.usage ??= wireUsage(billed);
    await reply.code(200).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(relayed));
    return 'completed';
  }

  private async relayStream(
    attempt: { admitted: AdmittedTextCompletion; route: CatalogRoute; reply: FastifyReply },
    body: UpstreamBody,
    result: (status: MeteredStatus, partial: Pick<MeteredResult, 'usage' | 'deliveredTokens'>) => MeteredResult,
  ): Promise<MeteredStatus | null> {
    const { admitted, route, reply } = attempt;
    const { completion, meter, signal } = admitted;
    const translator = textCompletionStreamTranslator(route, completion);
    const measured = () => ({ usage: translator.usage(), deliveredTokens: () => translator.deliveredTokens() });
    const output = { translator, writer: CHAT_REPLY_FORMAT.streamWriter() };
    const limits = { signal, drainTimeoutMs: this.config.relay.drainTimeoutMs };
    const outcome = await relayStream(body, reply, output, limits, async (): Promise<string[]> => {
      const billed = await meter.record(result('completed', measured()));
      return completion.includeUsage && !translator.usage() ? [translator.usageEvent(billed)] : [];
    });
    if (outcome === 'abnormal') {
      return null;
    }
    if (outcome !== 'completed') {
      // A cut stream is billed for what was delivered, as a chat stream is.
      await meter.record(result(outcome, measured()));
    }
    return outcome;
  }

  /** Logs and counts a route that could not serve; the next route is tried. */
  private routeFailed(trace: LogTarget, route: CatalogRoute, failure: RouteFailure, detail?: string): RouteFailure {
    const status = failure.kind === 'status' ? failure.status : undefined;
    trace.log.warn({ channel: route.channel.id, kind: failure.kind, status, detail }, 'upstream route failed');
    metrics.upstreamFailures.inc({ channel: route.channel.id, kind: failure.kind });
    return failure;
  }
}
