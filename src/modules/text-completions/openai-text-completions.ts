import { OpenAiStreamDialect, OpenAiStreamTranslator } from 'src/modules/relay/upstream/openai.adapter';
import { isRecord, UpstreamRequest } from 'src/modules/relay/upstream/provider-adapter';
import { CatalogRoute } from 'src/modules/models/catalog.service';
import { TextCompletionRequest } from 'src/modules/text-completions/text-completion-request.validator';
import { withFields } from 'src/common/with-fields';

/**
 * OpenAI's legacy `/completions` dialect, which only OpenAI-compatible upstreams speak: the body is
 * relayed as sent with `model` set to the upstream's name, `max_tokens` made explicit (the hold
 * covers OpenAI's default of 16; another server's default could be larger) and, on a stream, usage
 * asked for (billing needs the upstream's count; the usage chunk is hidden again unless the client asked).
 */
export function textCompletionRequest(
  route: CatalogRoute,
  body: Record<string, unknown>,
  request: TextCompletionRequest,
): UpstreamRequest {
  const upstreamBody: Record<string, unknown> = withFields(body, {
    model: route.upstreamModel,
    max_tokens: request.maxTokens,
  });
  if (request.stream) {
    upstreamBody.stream_options = withFields(isRecord(body.stream_options) ? body.stream_options : {}, {
      include_usage: true,
    });
  }
  return {
    path: '/completions',
    headers: { authorization: `Bearer ${route.channel.apiKey}`, 'content-type': 'application/json' },
    payload: JSON.stringify(upstreamBody),
  };
}

/** The `text` of `text_completion` choices, for counting what was delivered when no usage came. */
export function choicesText(choices: unknown): string {
  if (!Array.isArray(choices)) {
    return '';
  }
  let text = '';
  for (const choice of choices) {
    text += isRecord(choice) && typeof choice.text === 'string' ? choice.text : '';
  }
  return text;
}

const TEXT_COMPLETION_DIALECT: OpenAiStreamDialect = { chunkObject: 'text_completion', textOf: choicesText };

/** The upstream's stream relayed with our model id; its usage read for billing. */
export function textCompletionStreamTranslator(
  route: CatalogRoute,
  request: TextCompletionRequest,
): OpenAiStreamTranslator {
  return new OpenAiStreamTranslator(
    route.upstreamModel,
    request.model.id,
    request.includeUsage,
    TEXT_COMPLETION_DIALECT,
  );
}

/** The upstream's JSON answer with our model id, or null when it is not a text completion. */
export function toTextCompletion(upstream: unknown, modelId: string): Record<string, unknown> | null {
  if (!isRecord(upstream) || !Array.isArray(upstream.choices)) {
    return null;
  }
  return withFields(upstream, { model: modelId });
}
