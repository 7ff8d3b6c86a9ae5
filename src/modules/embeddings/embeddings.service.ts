import { Inject, Injectable } from '@nestjs/common';
import { FastifyReply } from 'fastify';
import { LogTarget } from 'src/common/logging/logger';
import { metrics } from 'src/common/metrics/metrics';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { CompletionMeter, MeteredStatus } from 'src/modules/billing/metering.types';
import { Admitted } from 'src/modules/relay/admission/completion-admission.service';
import { orderRoutes } from 'src/modules/relay/route-order';
import { readJsonBounded } from 'src/modules/relay/upstream/bounded-body';
import { failedAnswer, finalError, RouteFailure } from 'src/modules/relay/route-failure';
import { UpstreamClient, UpstreamResponse } from 'src/modules/relay/upstream/upstream-client';
import { AttemptSpan } from 'src/modules/relay/upstream/attempt-span';
import { EmbeddingAdmission } from 'src/modules/embeddings/embedding-request.validator';
import { EmbeddingAdapter } from 'src/modules/embeddings/upstream/embedding-adapter';
import { GeminiEmbeddingsAdapter } from 'src/modules/embeddings/upstream/gemini-embeddings.adapter';
import { OpenAiEmbeddingsAdapter } from 'src/modules/embeddings/upstream/openai-embeddings.adapter';
import { CatalogRoute } from 'src/modules/models/catalog.service';
import { withFields } from 'src/common/with-fields';

type EmbeddingChannelType = 'openai' | 'gemini';

/**
 * Relays an admitted embeddings request: the model's routes that can serve it are tried in the
 * chat relay's order, and a route that fails before answering (no connection, 5xx, garbage) hands
 * over to the next. The answer is billed through billing's meter before it is written; nothing of
 * the inputs or the vectors is kept or logged.
 */
@Injectable()
export class EmbeddingsService {
  private readonly adapters: Record<EmbeddingChannelType, EmbeddingAdapter> = {
    openai: new OpenAiEmbeddingsAdapter(),
    gemini: new GeminiEmbeddingsAdapter(),
  };

  constructor(
    private readonly upstream: UpstreamClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async embed(admitted: Admitted<EmbeddingAdmission>, reply: FastifyReply): Promise<MeteredStatus> {
    const { embedding, signal, trace } = admitted;
    let lastFailure: RouteFailure = { kind: 'unreachable', breaker: true };
    for (const route of orderRoutes(embedding.routes)) {
      const adapter = this.adapterFor(route);
      if (signal.aborted) {
        throw signal.reason;
      }
      const outcome = await AttemptSpan.around(trace, route, (span) =>
        this.attempt(admitted, route, adapter, reply, span),
      );
      if (typeof outcome === 'string') {
        metrics.embeddings.inc({ model: embedding.model.id, outcome });
        return outcome;
      }
      lastFailure = outcome;
    }
    metrics.embeddings.inc({ model: embedding.model.id, outcome: `failed_${lastFailure.kind}` });
    throw finalError(lastFailure, embedding.model.id);
  }

  /** One upstream request: `completed` once the list was written, or why this route failed. */
  private async attempt(
    admitted: Admitted<EmbeddingAdmission>,
    route: CatalogRoute,
    adapter: EmbeddingAdapter,
    reply: FastifyReply,
    span: AttemptSpan | null,
  ): Promise<'completed' | RouteFailure> {
    const { embedding, meter, signal, trace } = admitted;
    const startedAt = performance.now();
    const request = adapter.buildRequest(route, admitted.prompt.body, embedding);
    const result = await this.upstream.post(
      route.channel,
      request.path,
      request.headers,
      request.payload,
      signal,
      false,
      AttemptSpan.upstreamTrace(trace, span),
    );
    span?.answered(result);
    if (result.kind === 'unreachable') {
      return this.routeFailed(trace, route, { kind: 'unreachable', breaker: true }, result.detail);
    }
    metrics.upstreamLatency.observe(route.channel.id, (performance.now() - startedAt) / 1000);
    const { statusCode } = result;
    if (statusCode < 200 || statusCode >= 300) {
      return this.routeFailed(trace, route, await failedAnswer(route, adapter, statusCode, result.body));
    }
    const answer = await readJsonBounded(result.body, this.config.bodyLimitBytes, result.headers['content-length']);
    if (signal.aborted) {
      throw signal.reason;
    }
    const context = { route, meter, reply, startedAt, upstream: result };
    if (await this.answer(adapter.toAnswer(answer, embedding), context)) {
      return 'completed';
    }
    return this.routeFailed(trace, route, { kind: 'abnormal', breaker: true });
  }

  /** Records the usage, then writes the list; false when the upstream's answer was not a valid one. */
  private async answer(
    answer: ReturnType<EmbeddingAdapter['toAnswer']>,
    context: {
      route: CatalogRoute;
      meter: CompletionMeter;
      reply: FastifyReply;
      startedAt: number;
      upstream: Pick<UpstreamResponse, 'firstByteMs' | 'providerRequestId'>;
    },
  ): Promise<boolean> {
    if (!answer) {
      return false;
    }
    const { route, meter, reply, startedAt, upstream } = context;
    const billed = await meter.record({
      status: 'completed',
      channelId: route.channel.id,
      usage: answer.usage,
      // Embeddings generate no text: only the input is billed, the upstream's count or the estimate held.
      deliveredTokens: () => 0,
      upstreamLatencyMs: Math.round(performance.now() - startedAt),
      providerRequestId: upstream.providerRequestId,
      firstByteMs: upstream.firstByteMs,
    });
    // OpenAI's answer always carries usage; when the upstream left it out, the client sees what it was billed.
    const usage = { prompt_tokens: billed.promptTokens, total_tokens: billed.promptTokens };
    const list = withFields(answer.list, { usage: answer.usage ? answer.list.usage : usage });
    await reply.code(200).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(list));
    return true;
  }

  private adapterFor(route: CatalogRoute): EmbeddingAdapter {
    const type = route.channel.type;
    if (type === 'anthropic') {
      // validateEmbeddingRequest leaves Anthropic routes out: reaching one is a bug, not a client error.
      throw new Error('an Anthropic route was offered an embeddings request');
    }
    return this.adapters[type];
  }

  /** Logs and counts a route that could not serve; the next route is tried. */
  private routeFailed(trace: LogTarget, route: CatalogRoute, failure: RouteFailure, detail?: string): RouteFailure {
    const status = failure.kind === 'status' ? failure.status : undefined;
    trace.log.warn({ channel: route.channel.id, kind: failure.kind, status, detail }, 'upstream route failed');
    metrics.upstreamFailures.inc({ channel: route.channel.id, kind: failure.kind });
    return failure;
  }
}
