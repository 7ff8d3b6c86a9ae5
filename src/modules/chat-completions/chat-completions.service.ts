import { Inject, Injectable } from '@nestjs/common';
import { FastifyReply } from 'fastify';
import { Logger } from 'pino';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { LOGGER } from 'src/common/logging/logger';
import { ChatRequest, validateChatRequest } from 'src/modules/chat-completions/chat-request.validator';
import { orderRoutes } from 'src/modules/chat-completions/route-order';
import { relayStream } from 'src/modules/chat-completions/stream-relay';
import { OpenAiAdapter } from 'src/modules/chat-completions/upstream/openai.adapter';
import { ProviderAdapter, TokenUsage, usageFrom } from 'src/modules/chat-completions/upstream/provider-adapter';
import { UpstreamBody, UpstreamClient } from 'src/modules/chat-completions/upstream/upstream-client';
import { ChannelType } from 'src/modules/channels/channel.entity';
import { CatalogRoute, CatalogService } from 'src/modules/models/catalog.service';

export type CompletionStatus = 'completed' | 'client_aborted' | 'upstream_broken';

/** What happened to one completion, for metering. Never holds content. */
export interface CompletionOutcome {
  status: CompletionStatus;
  chat: ChatRequest;
  channelId: string;
  usage: TokenUsage | null;
  upstreamLatencyMs: number;
}

type RouteFailure = { kind: 'unreachable' } | { kind: 'status'; status: number } | { kind: 'abnormal' };

// Statuses that say "this route cannot serve now", not "the request is wrong": try the next route.
const ROUTE_FAILURE_STATUSES = new Set([401, 403, 404, 408, 409, 429]);

@Injectable()
export class ChatCompletionsService {
  private readonly adapters: Record<ChannelType, ProviderAdapter | undefined>;

  constructor(
    private readonly catalog: CatalogService,
    private readonly upstream: UpstreamClient,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.adapters = { openai: new OpenAiAdapter(), anthropic: undefined, gemini: undefined };
  }

  /** Validates, then tries the model's routes in order until one answers; writes the answer to `reply`. */
  async complete(body: unknown, reply: FastifyReply): Promise<CompletionOutcome> {
    const chat = validateChatRequest(body, (id) => this.catalog.get(id));
    const abort = new AbortController();
    reply.raw.once('close', () => !reply.raw.writableFinished && abort.abort());
    let lastFailure: RouteFailure = { kind: 'unreachable' };
    for (const route of orderRoutes(chat.model.routes)) {
      const adapter = this.adapters[route.channel.type];
      if (!adapter) {
        continue;
      }
      const startedAt = performance.now();
      const request = adapter.buildRequest(route, body as Record<string, unknown>, chat);
      const result = await this.upstream.post(
        route.channel,
        request.path,
        request.headers,
        request.payload,
        abort.signal,
      );
      if (result.kind === 'unreachable') {
        this.logger.warn({ channel: route.channel.id, detail: result.detail }, 'upstream unreachable');
        lastFailure = { kind: 'unreachable' };
        continue;
      }
      const { statusCode } = result;
      if (statusCode >= 200 && statusCode < 300) {
        const outcome = await this.relay(chat, route, adapter, result.body, reply, abort.signal, startedAt);
        if (outcome) {
          return outcome;
        }
        lastFailure = { kind: 'abnormal' };
      } else if (statusCode >= 500 || ROUTE_FAILURE_STATUSES.has(statusCode)) {
        await result.body.dump();
        this.logger.warn({ channel: route.channel.id, status: statusCode }, 'upstream failed');
        lastFailure = { kind: 'status', status: statusCode };
      } else {
        throw await this.clientError(adapter, result.body, statusCode);
      }
    }
    throw finalError(lastFailure, chat.model.id);
  }

  private async relay(
    chat: ChatRequest,
    route: CatalogRoute,
    adapter: ProviderAdapter,
    body: UpstreamBody,
    reply: FastifyReply,
    signal: AbortSignal,
    startedAt: number,
  ): Promise<CompletionOutcome | null> {
    const done = (status: CompletionStatus, usage: TokenUsage | null): CompletionOutcome => ({
      status,
      chat,
      channelId: route.channel.id,
      usage,
      upstreamLatencyMs: Math.round(performance.now() - startedAt),
    });
    if (chat.stream) {
      const translator = adapter.streamTranslator(route, chat.model.id);
      const outcome = await relayStream(body, reply, translator, signal);
      return outcome === 'abnormal' ? null : done(outcome, translator.usage());
    }
    const completion = adapter.toCompletion(await readJson(body), chat.model.id);
    if (!completion) {
      this.logger.warn({ channel: route.channel.id }, 'upstream answered with an abnormal body');
      return null;
    }
    await reply.code(200).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(completion));
    return done('completed', usageFrom(completion.usage));
  }

  private async clientError(adapter: ProviderAdapter, body: UpstreamBody, status: number): Promise<ApiError> {
    const details = adapter.errorDetails(await readJson(body));
    const message = details?.message ?? `The upstream provider rejected the request (status ${status}).`;
    return status === 413
      ? new ApiError(ErrorKind.PayloadTooLarge, message)
      : ApiError.invalid(message, details?.param ?? null);
  }
}

async function readJson(body: UpstreamBody): Promise<unknown> {
  try {
    return await body.json();
  } catch {
    return undefined;
  }
}

function finalError(failure: RouteFailure, modelId: string): ApiError {
  switch (failure.kind) {
    case 'unreachable':
      return new ApiError(
        ErrorKind.UpstreamUnreachable,
        `The gateway could not reach an upstream provider for '${modelId}'. Retry in a few minutes.`,
      );
    case 'status':
      return failure.status === 429
        ? new ApiError(ErrorKind.Overloaded, `The upstream providers for '${modelId}' are at capacity. Retry later.`)
        : new ApiError(
            ErrorKind.UpstreamError,
            `The upstream provider for '${modelId}' failed (status ${failure.status}). Retry in a few seconds.`,
          );
    case 'abnormal':
      return new ApiError(
        ErrorKind.UpstreamError,
        `The upstream provider for '${modelId}' sent an abnormal response. Retry in a few seconds.`,
      );
  }
}
