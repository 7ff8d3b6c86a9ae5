/**
 * The mock's legacy text completions (`POST /v1/completions`), JSON and SSE, in OpenAI's shape:
 * `text_completion` objects whose choices run prompt by prompt (index = prompt × n + choice), and,
 * with `stream_options.include_usage`, a last chunk with no choices and the usage. Deterministic so
 * tests can predict it: a prompt costs one token per whitespace-separated word (or per token id), the
 * suffix likewise, and each reply piece one completion token.
 */
type Json = Record<string, unknown>;

export interface TextCompletion {
  id: string;
  created: number;
  model: string;
  /** The reply's pieces, already cut at max_tokens: one completion token each. */
  pieces: string[];
  finishReason: 'stop' | 'length';
  /** Choices per prompt. */
  n: number;
  prompts: number;
  promptTokens: number;
}

const words = (text: string) => text.match(/\S+/g)?.length ?? 0;

/** OpenAI's `prompt` as a list of prompts: a string, strings, a token array or token arrays. */
export function mockPrompts(prompt: unknown): (string | number[])[] {
  if (typeof prompt === 'string') {
    return [prompt];
  }
  if (!Array.isArray(prompt)) {
    return [];
  }
  return prompt.every((item) => typeof item === 'number') ? [prompt] : (prompt as (string | number[])[]);
}

/** The prompt tokens the mock reports: words of each string prompt and of the suffix, ids of each token prompt. */
export function countMockTextPromptTokens(body: Json): number {
  const prompts = mockPrompts(body.prompt);
  const suffix = typeof body.suffix === 'string' ? words(body.suffix) : 0;
  return suffix + prompts.reduce((sum, p) => sum + (typeof p === 'string' ? words(p) : p.length), 0);
}

function usageOf(c: TextCompletion): Json {
  const completionTokens = c.pieces.length * c.n * c.prompts;
  return {
    prompt_tokens: c.promptTokens,
    completion_tokens: completionTokens,
    total_tokens: c.promptTokens + completionTokens,
  };
}

function head(c: TextCompletion): Json {
  return { id: c.id, object: 'text_completion', created: c.created, model: c.model };
}

/** The JSON answer. */
export function textCompletionJson(c: TextCompletion, omitUsage: boolean): string {
  const choices = Array.from({ length: c.prompts * c.n }, (_, index) => ({
    text: c.pieces.join(''),
    index,
    logprobs: null,
    finish_reason: c.finishReason,
  }));
  return JSON.stringify({ ...head(c), choices, ...(omitUsage ? {} : { usage: usageOf(c) }) });
}

/**
 * The SSE events of a stream: each choice's pieces, then its finish, then the usage chunk and
 * `[DONE]`; `breakAfter` pieces delivered, the stream stops there (broken: the socket is destroyed).
 */
export function textCompletionEvents(
  c: TextCompletion,
  breakAfter: number | undefined,
  withUsage: boolean,
): { events: string[]; broken: boolean } {
  const event = (index: number, text: string, finish: string | null) => {
    const choices = [{ text, index, logprobs: null, finish_reason: finish }];
    return `data: ${JSON.stringify({ ...head(c), choices })}\n\n`;
  };
  const events: string[] = [];
  let delivered = 0;
  for (let index = 0; index < c.prompts * c.n; index++) {
    for (const piece of c.pieces) {
      if (breakAfter !== undefined && delivered >= breakAfter) {
        return { events, broken: true };
      }
      events.push(event(index, piece, null));
      delivered++;
    }
    events.push(event(index, '', c.finishReason));
  }
  if (breakAfter !== undefined) {
    return { events, broken: true };
  }
  if (withUsage) {
    events.push(`data: ${JSON.stringify({ ...head(c), choices: [], usage: usageOf(c) })}\n\n`);
  }
  events.push('data: [DONE]\n\n');
  return { events, broken: false };
}

/** Whether a request is a text completion the mock can answer: a prompt in one of the four shapes. */
export function validTextPrompt(body: Json): boolean {
  const prompts = mockPrompts(body.prompt);
  return prompts.length > 0 && prompts.every((p) => typeof p === 'string' || (Array.isArray(p) && p.length > 0));
}
