import { ALL_IMAGE_FAMILIES, ImageFamily } from 'src/modules/billing/image-families';
import { imageTokens } from 'src/modules/billing/image-tokens';
import { countTextTokens, requestTokenBudget, TokenBudget } from 'src/modules/billing/text-tokens';

// A hold must cover the worst case, so the prompt estimate errs high: tokenizers differ between
// model families, and chat framing adds a few tokens per message.
// Per message: the template's start, role, separator and end tokens (OpenAI's own recipe counts 3 + the role).
const PER_MESSAGE_OVERHEAD = 4;
const PER_REQUEST_OVERHEAD = 3;
// Every JSON value of a structured field (tools, schemas, tool calls, parts) also pays for its quotes,
// colon, comma and brackets: never more than this many tokens in its JSON text.
const PER_VALUE_OVERHEAD = 3;
// Audio is billed by duration: about 10 tokens a second at OpenAI, 32 at Gemini. One token per 16 bytes
// covers 32 tokens a second down to 4 kbit/s, below any speech codec a client would send.
const AUDIO_BYTES_PER_TOKEN = 16;
// A file's text and page images: one token per byte of the file is more than its text can take once
// extracted; a file referenced by id has an unknown size, so it is held as a full context window.
const FILE_REFERENCE_TOKENS = 128_000;
// Top-level fields an upstream renders into the prompt and bills as input. The others steer sampling
// or delivery (or, unknown, are refused by OpenAI and ignored by the other dialects); their size and
// nesting are still bounded by validation.
const PROMPT_FIELDS = new Set([
  'tools',
  'functions',
  'tool_choice',
  'function_call',
  'response_format',
  'prediction',
  'documents',
  'system',
]);
/**
 * In a first try (`restAsBytes`), a text longer than this counts as its bytes whole. Most of it would
 * anyway, past the exact budget (about 2.5k characters of prose): its figure is some 13 % higher at
 * 16k characters, under 1 % at 256 KB, and the exact count of its start cost up to 0.3 ms (words
 * outside ASCII go through the tokenizer's regex; docs/performance.md, "Large bodies stay bytes").
 */
const ROUGH_EXACT_TEXT_CHARS = 16 * 1024;
const SAFETY_NUMERATOR = 11n;
const SAFETY_DENOMINATOR = 10n;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export interface PromptEstimateOptions {
  /** What an earlier audio answer referenced by id (`messages[].audio.id`) may have cost: the model's output cap. */
  audioReferenceTokens: number;
  /** How the upstreams behind the model bill images (imageFamiliesOf its routes); every known formula when absent. */
  imageFamilies?: readonly ImageFamily[];
  /**
   * Text past the exact budget, and any text of more than ROUGH_EXACT_TEXT_CHARS, counts as its UTF-8
   * bytes instead of being scanned by the one-pass bound: an upper bound at no cost, about four times
   * prose's count (a hold's first try, see RequestEstimate.rough).
   */
  restAsBytes?: boolean;
  /**
   * The length of the UTF-8 JSON text the body was parsed from, when it was: no more than that is
   * charged for all the text past the budgets together (TokenBudget.textBytes).
   */
  bodyBytes?: number;
}

export interface RequestEstimate {
  /** At least what the upstream can bill as input. */
  promptTokens: number;
  /**
   * The tokens of `prediction`, per choice. OpenAI bills the rejected ones as completion tokens, at the
   * output price and beyond max_tokens, so the hold adds them to the output cap. (They stay in the
   * prompt too: other dialects may render the field into the prompt.)
   */
  predictionTokens: number;
  /**
   * Counted with `restAsBytes`, some text went past the exact budget and counted as its bytes:
   * estimating without it would come closer.
   */
  rough: boolean;
}

type Options = Required<Omit<PromptEstimateOptions, 'restAsBytes' | 'bodyBytes'>>;

/**
 * Prompt tokens of a validated request body, at least what the upstream can bill for it, plus a 10%
 * margin: every field of every message, images by their size and `detail`, audio and files by their
 * size, and the top-level fields rendered into the prompt (tools, functions, response_format …) as
 * their JSON text. The prediction's tokens are also given apart, with the same margin.
 * Linear in the body's size: see text-tokens.ts.
 */
export function estimateRequest(body: Json, options: PromptEstimateOptions): RequestEstimate {
  const budget = requestTokenBudget(
    options.restAsBytes
      ? { bound: 0, exactTextChars: ROUGH_EXACT_TEXT_CHARS, textBytes: options.bodyBytes }
      : { textBytes: options.bodyBytes },
  );
  const resolved: Options = {
    audioReferenceTokens: options.audioReferenceTokens,
    imageFamilies: options.imageFamilies ?? ALL_IMAGE_FAMILIES,
  };
  let tokens = PER_REQUEST_OVERHEAD;
  let predictionTokens = 0;
  for (const [field, value] of Object.entries(body)) {
    if (field === 'messages' && Array.isArray(value)) {
      tokens += messagesTokens(value, budget, resolved);
    } else if (PROMPT_FIELDS.has(field)) {
      const fieldTokens = countTextTokens(field, budget) + valueTokens(value, budget);
      tokens += fieldTokens;
      predictionTokens = field === 'prediction' ? fieldTokens : predictionTokens;
    }
  }
  return {
    promptTokens: withMargin(tokens),
    predictionTokens: predictionTokens > 0 ? withMargin(predictionTokens) : 0,
    // Text past the exact count is bounded, here counted as bytes (text-tokens.ts).
    rough: options.restAsBytes === true && budget.bounded === true,
  };
}

/** The prompt tokens of estimateRequest. */
export function estimateRequestTokens(body: Json, options: PromptEstimateOptions): number {
  return estimateRequest(body, options).promptTokens;
}

function withMargin(tokens: number): number {
  return Number((BigInt(tokens) * SAFETY_NUMERATOR) / SAFETY_DENOMINATOR) + 1;
}

/** The estimate of a request whose prompt is only these messages (no tools, no audio references). */
export function estimatePromptTokens(messages: unknown[]): number {
  return estimateRequestTokens({ messages }, { audioReferenceTokens: 0 });
}

/**
 * Input tokens of an embeddings request's inputs (validated: strings, or arrays of token ids), at
 * least what the upstream can bill: text counted as cl100k text, token arrays by their length, plus
 * the 10% margin, since other families' tokenizers may split text finer. Each string's exact count has
 * a budget of its own, so the time spent stays linear in the input's size.
 */
export function estimateEmbeddingTokens(inputs: readonly (string | readonly number[])[]): number {
  let tokens = 0;
  // The one-pass bound's budget is the request's: it scans every character it is given.
  let bound = requestTokenBudget().bound;
  for (const input of inputs) {
    if (typeof input === 'string') {
      const budget = requestTokenBudget({ bound });
      tokens += countTextTokens(input, budget);
      bound = budget.bound;
    } else {
      tokens += input.length;
    }
  }
  return withMargin(tokens);
}

/** Completion tokens of text the client received, when the upstream reported no usage. */
export function countCompletionTokens(text: string): number {
  // The count is capped at the output cap the hold covered anyway. It is billed, so it is counted
  // exactly further than a hold's estimate, before the bound takes over.
  return countTextTokens(text, requestTokenBudget({ pieces: 12 * 1024, merge: 4 * 1024 }));
}

function messagesTokens(messages: unknown[], budget: TokenBudget, options: Options): number {
  let tokens = 0;
  for (const message of messages) {
    tokens += PER_MESSAGE_OVERHEAD;
    if (!isObject(message)) {
      tokens += valueTokens(message, budget);
      continue;
    }
    for (const [field, value] of Object.entries(message)) {
      if (field === 'role' && typeof value === 'string') {
        // Chat templates render the role, not its key; the per-message overhead covers it (validated roles are short).
        continue;
      }
      if (field === 'content' && typeof value === 'string') {
        // Rendered as the message's text, without key or quotes.
        tokens += countTextTokens(value, budget);
        continue;
      }
      tokens += countTextTokens(field, budget);
      if (field === 'content' && Array.isArray(value)) {
        tokens += value.reduce((sum: number, part) => sum + partTokens(part, budget, options.imageFamilies), 0);
      } else if (field === 'audio' && isObject(value) && typeof value.id === 'string') {
        tokens += options.audioReferenceTokens + valueTokens(value, budget);
      } else {
        tokens += valueTokens(value, budget);
      }
    }
  }
  return tokens;
}

function partTokens(part: unknown, budget: TokenBudget, imageFamilies: readonly ImageFamily[]): number {
  if (!isObject(part)) {
    return valueTokens(part, budget);
  }
  const { image_url: imageUrl, input_audio: audio, file, ...rest } = part;
  let tokens = valueTokens(rest, budget);
  if (imageUrl !== undefined) {
    tokens += PER_VALUE_OVERHEAD + imageTokens(imageUrl, imageFamilies);
  }
  if (audio !== undefined) {
    const data = isObject(audio) ? audio.data : undefined;
    tokens += PER_VALUE_OVERHEAD + Math.ceil(base64Bytes(data) / AUDIO_BYTES_PER_TOKEN);
  }
  if (file !== undefined) {
    tokens += PER_VALUE_OVERHEAD + fileTokens(file, budget);
  }
  return tokens;
}

function fileTokens(file: unknown, budget: TokenBudget): number {
  if (!isObject(file)) {
    return FILE_REFERENCE_TOKENS;
  }
  const { file_data: data, ...rest } = file;
  const dataTokens = typeof data === 'string' ? base64Bytes(data) : FILE_REFERENCE_TOKENS;
  return dataTokens + valueTokens(rest, budget);
}

/** Decoded size of base64 text, with or without a `data:…;base64,` prefix; 0 when it is not a string. */
function base64Bytes(data: unknown): number {
  if (typeof data !== 'string') {
    return 0;
  }
  const payload = data.startsWith('data:') ? data.length - data.indexOf(',') - 1 : data.length;
  return Math.ceil((payload * 3) / 4);
}

/**
 * At least the cl100k count of a JSON value's text: its strings (keys included) counted as text, plus
 * PER_VALUE_OVERHEAD per value for the punctuation around them. Iterative, so nesting cannot exhaust the stack.
 */
function valueTokens(root: unknown, budget: TokenBudget): number {
  let tokens = 0;
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const value = pending.pop();
    tokens += PER_VALUE_OVERHEAD;
    if (typeof value === 'string') {
      tokens += countTextTokens(value, budget);
    } else if (Array.isArray(value)) {
      for (const item of value) {
        pending.push(item);
      }
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, child] of Object.entries(value)) {
        tokens += countTextTokens(key, budget);
        pending.push(child);
      }
    } else if (typeof value === 'number' || typeof value === 'boolean') {
      tokens += String(value).length;
    }
  }
  return tokens;
}
