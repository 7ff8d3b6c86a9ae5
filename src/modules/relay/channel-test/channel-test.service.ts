import { Inject, Injectable } from '@nestjs/common';
import { SecretBox } from 'src/common/crypto/secret-box';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { ChannelEntity, ChannelType } from 'src/modules/channels/channel.entity';
import { effectiveTimeouts } from 'src/modules/channels/channel-timeouts';
import { ChannelsRepository } from 'src/modules/channels/channels.repository';
import { ChannelTestDto, ChannelTestResultDto } from 'src/modules/channels/dto/channel.dto';
import { ChannelBreaker } from 'src/modules/channels/health/channel-breaker.service';
import { ChatRequest } from 'src/modules/relay/chat-request/chat-request.validator';
import { AnthropicAdapter } from 'src/modules/relay/upstream/anthropic.adapter';
import { readJsonBounded } from 'src/modules/relay/upstream/bounded-body';
import { GeminiAdapter } from 'src/modules/relay/upstream/gemini.adapter';
import { OpenAiAdapter } from 'src/modules/relay/upstream/openai.adapter';
import { ProviderAdapter } from 'src/modules/relay/upstream/provider-adapter';
import { UpstreamClient } from 'src/modules/relay/upstream/upstream-client';
import { sanitizeUpstreamMessage } from 'src/modules/relay/upstream/upstream-error-text';
import { CatalogChannel, CatalogRoute, CatalogService } from 'src/modules/models/catalog.service';

const ADAPTERS: Record<ChannelType, ProviderAdapter> = {
  openai: new OpenAiAdapter(),
  anthropic: new AnthropicAdapter(),
  gemini: new GeminiAdapter(),
};
// One word in, at most one token out: the cheapest request that proves the key, the model and the route.
const PROBE_BODY = { messages: [{ role: 'user', content: 'ping' }], max_tokens: 1 };
const ERROR_BODY_LIMIT_BYTES = 64 * 1024;

/**
 * The operator's channel test: one minimal real completion, straight to the channel (enabled or not),
 * outside admission and metering, so nobody is billed or counted. A proper answer closes its breaker.
 */
@Injectable()
export class ChannelTestService {
  constructor(
    private readonly channels: ChannelsRepository,
    private readonly catalog: CatalogService,
    private readonly secrets: SecretBox,
    private readonly upstream: UpstreamClient,
    private readonly breaker: ChannelBreaker,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async test(channelId: string, dto: ChannelTestDto, requestId: string): Promise<ChannelTestResultDto> {
    const entity = await this.channels.find(channelId);
    if (!entity) {
      throw new ApiError(ErrorKind.NotFound, `No channel with id '${channelId}'.`, 'channelId');
    }
    const upstreamModel = dto?.model ?? this.routedModel(channelId);
    if (!upstreamModel) {
      throw ApiError.invalid(`No enabled model routes to channel '${channelId}': name the upstream model.`, 'model');
    }
    let channel: CatalogChannel;
    try {
      channel = this.catalogChannel(entity);
    } catch {
      return failed(null, 0, null, 'the channel key cannot be decrypted: set it again');
    }
    const result = await this.send({ channel, upstreamModel }, requestId);
    if (result.ok) {
      await this.breaker.close(channelId);
    }
    return result;
  }

  private async send(route: CatalogRoute, requestId: string): Promise<ChannelTestResultDto> {
    const { channel } = route;
    const adapter = ADAPTERS[channel.type];
    const chat = testChat(route);
    const request = await adapter.buildRequest(route, PROBE_BODY, chat);
    const { connectMs, firstByteMs, silenceMs } = channel.timeouts;
    const signal = AbortSignal.timeout(connectMs + firstByteMs + silenceMs);
    const startedAt = performance.now();
    const elapsed = () => Math.round(performance.now() - startedAt);
    let result;
    try {
      const trace = { requestId };
      result = await this.upstream.post(channel, request.path, request.headers, request.payload, signal, false, trace);
    } catch {
      return failed(null, elapsed(), null, 'timed out');
    }
    if (result.kind === 'unreachable') {
      return failed(null, elapsed(), null, `${result.timedOut ? 'timed out' : 'unreachable'} (${result.detail})`);
    }
    const firstByte = elapsed();
    const { statusCode } = result;
    if (statusCode < 200 || statusCode >= 300) {
      const details = adapter.errorDetails(await readJsonBounded(result.body, ERROR_BODY_LIMIT_BYTES));
      const said = details ? `: ${sanitizeUpstreamMessage(details.message, channel.apiKey)}` : '';
      return failed(statusCode, elapsed(), firstByte, `status ${statusCode}${said}`);
    }
    const answer = await readJsonBounded(result.body, this.config.bodyLimitBytes, result.headers['content-length']);
    if (!adapter.toCompletion(answer, chat.model.id)) {
      return failed(statusCode, elapsed(), firstByte, 'abnormal answer: not a completion');
    }
    return { ok: true, status: statusCode, latencyMs: elapsed(), firstByteMs: firstByte };
  }

  /** The upstream model the first enabled route to this channel names. */
  private routedModel(channelId: string): string | undefined {
    for (const model of this.catalog.list()) {
      const route = model.routes.find((candidate) => candidate.channel.id === channelId);
      if (route) {
        return route.upstreamModel;
      }
    }
    return undefined;
  }

  private catalogChannel(entity: ChannelEntity): CatalogChannel {
    return {
      id: entity.id,
      type: entity.type,
      baseUrl: entity.baseUrl,
      apiKey: this.secrets.open(entity.apiKeySealed),
      priority: entity.priority,
      weight: entity.weight,
      timeouts: effectiveTimeouts(entity, this.config.upstream),
      autoDisableAfterHours: entity.autoDisableAfterHours,
    };
  }
}

function failed(status: number | null, latencyMs: number, firstByteMs: number | null, error: string) {
  return { ok: false, status, latencyMs, firstByteMs, error };
}

/** What the adapters read of a request: a one-token, non-streamed completion of the upstream model itself. */
function testChat(route: CatalogRoute): ChatRequest {
  const model = {
    id: route.upstreamModel,
    inputPrice: 0n,
    outputPrice: 0n,
    maxOutputTokens: 1,
    vision: false,
    kind: 'chat' as const,
    rpm: 0,
    tpm: 0,
    created: 0,
    ownedBy: route.channel.type,
    routes: [route],
  };
  return { model, stream: false, maxTokens: 1, n: 1, includeUsage: false };
}
