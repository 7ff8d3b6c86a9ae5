import { Inject, Injectable } from '@nestjs/common';
import { FastifyReply } from 'fastify';
import { Logger } from 'pino';
import { ApiKeyPrincipal } from 'src/common/decorators/auth.decorators';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { LOGGER } from 'src/common/logging/logger';
import { clientRequestIdOf, RequestTrace } from 'src/common/http/request-trace';
import { CancelSignal } from 'src/common/http/cancel-signal';
import { requestSpanOf } from 'src/common/telemetry/request-spans';
import { AttemptSpan } from 'src/modules/relay/upstream/attempt-span';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { ChannelBreaker } from 'src/modules/channels/health/channel-breaker.service';
import { RequestLifetime } from 'src/modules/relay/admission/request-lifetime';
import { failedAnswer } from 'src/modules/relay/route-failure';
import { orderRoutes } from 'src/modules/relay/route-order';
import { AnthropicAdapter } from 'src/modules/relay/upstream/anthropic.adapter';
import { readJsonBounded } from 'src/modules/relay/upstream/bounded-body';
import { isRecord } from 'src/modules/relay/upstream/provider-adapter';
import { UpstreamClient } from 'src/modules/relay/upstream/upstream-client';
import { anthropicHeaders } from 'src/modules/messages/anthropic-pass-through';
import {
  anthropicCountBody,
  checkCountRequest,
  CountRequest,
  ownInputTokens,
} from 'src/modules/messages/message-token-count';
import { inMessagesTerms } from 'src/modules/messages/messages.service';
import { CatalogModel, CatalogRoute, CatalogService } from 'src/modules/models/catalog.service';
import { LimiterFailurePolicy } from 'src/modules/rate-limits/limiter-failure.policy';
import { RateLimitPolicy } from 'src/modules/rate-limits/rate-limit-policy.service';
import { rateLimitExceeded } from 'src/modules/rate-limits/rate-limit.errors';
import { countWindowKey } from 'src/modules/rate-limits/rate-limit.keys';
import { RedisThrottlerStorage } from 'src/modules/rate-limits/redis-throttler.storage';

type Headers = Record<string, string | string[] | undefined>;

const MINUTE_MS = 60_000;
/** `{"input_tokens": N}` is a few bytes; an answer past this is not a count. */
const COUNT_ANSWER_LIMIT_BYTES = 16 * 1024;

export interface TokenCount {
  input_tokens: number;
}

/**
 * POST /v1/messages/count_tokens (Anthropic's token count, which Claude Code calls to manage its
 * context): a model routed to an Anthropic channel is counted by Anthropic itself, exactly, with the
 * channel's key; any other, or one whose Anthropic channel cannot answer now, by the gateway's own
 * count. Not billed and not held: the key's controls apply, and a window of its own per key and model
 * (at the model's requests per minute) bounds the upstream calls, without using up the key's requests.
 */
@Injectable()
export class MessageTokenCounter {
  private readonly anthropic = new AnthropicAdapter();

  constructor(
    private readonly catalog: CatalogService,
    private readonly policy: RateLimitPolicy,
    private readonly windows: RedisThrottlerStorage,
    private readonly limiterFailures: LimiterFailurePolicy,
    private readonly upstream: UpstreamClient,
    private readonly breaker: ChannelBreaker,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async count(
    principal: ApiKeyPrincipal,
    request: { body: unknown; headers: Headers },
    reply: FastifyReply,
  ): Promise<TokenCount> {
    let counted: CountRequest;
    try {
      counted = checkCountRequest(request.body, (id) => this.catalog.get(id));
    } catch (error) {
      throw inMessagesTerms(error);
    }
    const headers = anthropicHeaders(request.headers);
    const { model } = counted;
    if (principal.allowedModels && !principal.allowedModels.has(model.id)) {
      throw new ApiError(
        ErrorKind.ModelNotPermitted,
        `This API key may not use the model '${model.id}'. Allow it for the key in the console.`,
        'model',
      );
    }
    const trace = new RequestTrace(
      reply.request.id,
      clientRequestIdOf(request.headers),
      this.logger,
      requestSpanOf(reply.request),
    );
    await this.admit(principal, model, trace);
    const route = this.firstOpenRoute(model);
    if (route?.channel.type === 'anthropic') {
      const exact = await this.askAnthropic(route, counted, headers, reply, trace);
      if (exact !== null) {
        return { input_tokens: exact };
      }
    }
    return { input_tokens: ownInputTokens(counted) };
  }

  /** Counts the request in the key's count window for the model, or refuses it with 429. */
  private async admit(principal: ApiKeyPrincipal, model: CatalogModel, trace: RequestTrace): Promise<void> {
    const limit = this.policy.limitsFor(principal.accountId, model, principal.group).rpm;
    const window = { key: countWindowKey(principal.accountId, principal.keyId, model.id), limit };
    const record = await this.limiterFailures.check(() => this.windows.incrementWindows([window], MINUTE_MS), trace);
    if (record.refusedBy >= 0) {
      const counts = { limit, used: record.hits, requested: 1, resetMs: record.resetMs };
      throw rateLimitExceeded(model.id, 'token counts per minute', counts);
    }
  }

  /** The route a message would be sent to first, leaving out channels whose breaker is open. */
  private firstOpenRoute(model: CatalogModel): CatalogRoute | undefined {
    return orderRoutes(model.routes).find((route) => this.breaker.gate(route.channel.id) === 'pass');
  }

  /**
   * Anthropic's count of the body; null when the channel could not give one (unreachable, failing,
   * an answer that is no count), so that the gateway's own count answers instead. A refusal of the
   * request itself (a 400 naming a field) is the client's answer, in Anthropic's words made safe.
   */
  private async askAnthropic(
    route: CatalogRoute,
    counted: CountRequest,
    client: { version: string; beta: string | null },
    reply: FastifyReply,
    trace: RequestTrace,
  ): Promise<number | null> {
    const headers: Record<string, string> = {
      'x-api-key': route.channel.apiKey,
      'anthropic-version': client.version,
      'content-type': 'application/json',
    };
    if (client.beta !== null) {
      headers['anthropic-beta'] = client.beta;
    }
    const payload = JSON.stringify(anthropicCountBody(counted.body, route.upstreamModel));
    const lifetime = new RequestLifetime(reply.raw, this.config.relay.maxRequestMs);
    const span = AttemptSpan.start(trace, route);
    try {
      const tokens = await this.countUpstream(route, headers, payload, lifetime.signal, trace, span);
      span?.ended(tokens === null ? { kind: 'not_counted' } : 'completed');
      return tokens;
    } catch (error) {
      span?.threw(error);
      throw error;
    } finally {
      lifetime.end();
    }
  }

  private async countUpstream(
    route: CatalogRoute,
    headers: Record<string, string>,
    payload: string,
    signal: CancelSignal,
    trace: RequestTrace,
    span: AttemptSpan | null,
  ): Promise<number | null> {
    const path = '/messages/count_tokens';
    const upstreamTrace = AttemptSpan.upstreamTrace(trace, span);
    const result = await this.upstream.post(route.channel, path, headers, payload, signal, false, upstreamTrace);
    span?.answered(result);
    if (result.kind === 'unreachable') {
      return this.notCounted(trace, route, result.detail);
    }
    if (result.statusCode < 200 || result.statusCode >= 300) {
      await failedAnswer(route, this.anthropic, result.statusCode, result.body);
      return this.notCounted(trace, route, `status ${result.statusCode}`);
    }
    const answer = await readJsonBounded(result.body, COUNT_ANSWER_LIMIT_BYTES, result.headers['content-length']);
    const tokens = isRecord(answer) ? answer.input_tokens : undefined;
    return Number.isSafeInteger(tokens) && (tokens as number) >= 0
      ? (tokens as number)
      : this.notCounted(trace, route, 'no input_tokens');
  }

  /** Only the channel and why: never the body. */
  private notCounted(trace: RequestTrace, route: CatalogRoute, detail: string): null {
    trace.log.warn({ channel: route.channel.id, detail }, 'upstream token count failed; counted by the gateway');
    return null;
  }
}
