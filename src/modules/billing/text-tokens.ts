import { CL100K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/cjs/encodingParams/constants';
import { asciiPreTokenEnd, firstNonAscii } from 'src/modules/billing/ascii-pre-tokens';
import { isCl100kToken, mergedCl100kTokens } from 'src/modules/billing/cl100k';
import { boundTextTokens } from 'src/modules/billing/token-bound';

/*
 * Counting text in time linear in its length, never below its cl100k count.
 *
 * cl100k splits text into pre-tokens with a regex, then counts each pre-token: one token when the
 * pre-token is itself in the vocabulary, otherwise as many as byte-pair merges leave. Merges start from
 * single bytes and each removes one token, so a pre-token never has more tokens than UTF-8 bytes.
 * Merging is the expensive part: quadratic in the pre-token's length (text without spaces, 'a'×100k or
 * CJK, is one pre-token), and about a microsecond a byte even on short random pre-tokens; the regex
 * itself overflows the stack on a run of millions of letters.
 *
 * A letter followed by a non-letter always ends a pre-token, and the regex never looks behind nor past
 * that non-letter, so text cut at such a point splits into the same pre-tokens piece by piece: the count
 * of the whole is exactly the sum of the pieces' counts. (Cutting anywhere else is not safe either way:
 * merges are greedy, and a split word can even take fewer tokens than the whole.) So text is cut at those
 * points into segments of at most SEGMENT_CHARS. A segment is split into pre-tokens by the tokenizer's own
 * regex (ASCII by ascii-pre-tokens.ts, which splits identically at a fraction of the cost) while the
 * budget lasts; a pre-token in the vocabulary counts 1 (exact, and the common case for prose), another
 * is merged (cl100k.ts) while the merge budget lasts and counts as its bytes after. Past the
 * budget, or at a run with no cut point nearby, the rest is bounded in one pass of table lookups
 * (token-bound.ts: within ~30 % of the count on prose, never below it), and past the bound's own
 * budget counts as its bytes. Each step is bounded, and so is the work per request.
 */
const SEGMENT_CHARS = 256;
// The one-pass bound's unit of work: its budget is checked between chunks.
const BOUND_CHUNK_CHARS = 32 * 1024;
// A rest past the budgets shorter than this is measured whatever is known of the texts' bytes.
const MEASURED_REST_CHARS = 4096;
const PRE_TOKEN = new RegExp(CL100K_TOKEN_SPLIT_REGEX.source, 'gu');
// Whether each UTF-16 code unit is a letter (\p{L}), computed once: a regex per character would cost
// more than the tokenizer it protects.
const LETTERS = (() => {
  const letter = /\p{L}/u;
  const table = new Uint8Array(0x10000);
  for (let code = 0; code < table.length; code++) {
    table[code] = !isSurrogate(code) && letter.test(String.fromCharCode(code)) ? 1 : 0;
  }
  return table;
})();
// Looking for a cut point costs a table lookup a character: this many of them cost like one pre-token.
const SCAN_CHARS_PER_PIECE = 8;
// Each call of the tokenizer costs about this many characters' merging even for one short piece.
const CALL_COST_CHARS = 16;

/** What the tokenizer may still do for a request; past it, the one-pass bound, then bytes, are counted. */
export interface TokenBudget {
  /** Characters the one-pass bound (token-bound.ts) may still scan: a few nanoseconds each. */
  bound: number;
  /** Pre-tokens split off and looked up in the vocabulary: about 0.1 µs each for ASCII, 0.3 µs for other text. */
  pieces: number;
  /** Characters of pre-tokens outside the vocabulary given to byte-pair merging: 0.15–0.3 µs each (cl100k.ts). */
  merge: number;
  /** Counts of pre-tokens already merged for this request: a repeated word costs the budget once. */
  merged: Map<string, number>;
  /**
   * At least the UTF-8 bytes of all the texts still to count, when known: the length of the JSON text
   * they were parsed from, each of them a string or a key in it (no escape is shorter than what it
   * stands for). A long rest past the budgets is then charged this instead of being measured (restBytes).
   */
  textBytes?: number;
  /** Texts longer than this go to the one-pass bound from their start (absent: none does). */
  exactTextChars?: number;
  /** Set once some text went past the exact count, to the one-pass bound or to its bytes. */
  bounded?: boolean;
}

/**
 * The budget of one request: about 500 tokens of prose are counted exactly (past them the bound is
 * close, at a small part of the cost per character), and the worst text (random printable
 * characters, little of it in the vocabulary) costs under 2 ms of one core; then 512k characters of
 * prose are bounded (about 2–3 ms for 256 KB on the shared 2-core box; random printable text, which
 * starts a pre-token every character or two and is charged twice its tokens, about 290k characters
 * in about 15 ms), and whatever is left counts as its bytes.
 */
export function requestTokenBudget(changes: BudgetChanges = {}): TokenBudget {
  // Every field written here, in one literal: a budget built by spreading this one and adding to
  // it cost microseconds on Node 20 (docs/performance.md, "The request path's small costs"), and one shape for all
  // budgets keeps the counting loops' property reads monomorphic.
  return {
    pieces: changes.pieces ?? 512,
    merge: changes.merge ?? 1024,
    bound: changes.bound ?? 512 * 1024,
    merged: new Map(),
    textBytes: changes.textBytes,
    exactTextChars: changes.exactTextChars,
    bounded: false,
  };
}

/** What a caller sets differently from the request's default budget. */
export type BudgetChanges = Partial<Pick<TokenBudget, 'pieces' | 'merge' | 'bound' | 'textBytes' | 'exactTextChars'>>;

/**
 * At least the cl100k token count of `text`; exact while the budget lasts on text with word breaks,
 * unless the text is longer than the budget's `exactTextChars`.
 */
export function countTextTokens(text: string, budget: TokenBudget): number {
  if (text.length > (budget.exactTextChars ?? Infinity)) {
    return boundedTokens(text, 0, budget);
  }
  let tokens = 0;
  let start = 0;
  while (start < text.length) {
    if (budget.pieces <= 0) {
      // Past the budget: the rest is bounded in one pass.
      return tokens + boundedTokens(text, start, budget);
    }
    const end = text.length - start <= SEGMENT_CHARS ? text.length : lastCut(text, start);
    if (end < 0) {
      // A run with no safe cut nearby ('a' × 100k, CJK): bounded up to the next cut, then counted on.
      const next = nextCut(text, start + SEGMENT_CHARS, budget);
      if (next < 0) {
        return tokens + boundedTokens(text, start, budget);
      }
      tokens += boundTextTokens(text, start, next);
      budget.bound -= next - start;
      start = next;
      continue;
    }
    tokens += segmentTokens(text.slice(start, end), budget);
    start = end;
  }
  return tokens;
}

/**
 * The one-pass bound of text[start..] as far as its budget goes (to a cut point), then its bytes.
 * The scan goes by chunks, each charged its characters or twice its tokens, whichever is more: the
 * scan's cost follows the pre-tokens it finds, and text that starts one every character or two
 * (random printable characters, about 50 ns each) would otherwise cost five times prose's 512k
 * characters. Past about one token every two characters, bytes are within twice the bound anyway.
 */
function boundedTokens(text: string, start: number, budget: TokenBudget): number {
  budget.bounded = true;
  let tokens = 0;
  let at = start;
  while (at < text.length && budget.bound > 0) {
    const room = Math.min(budget.bound, BOUND_CHUNK_CHARS);
    const end = text.length - at <= room ? text.length : lastCutBefore(text, at + room, at);
    if (end === at) {
      break;
    }
    const chunk = boundTextTokens(text, at, end);
    budget.bound -= Math.max(end - at, 2 * chunk);
    tokens += chunk;
    at = end;
  }
  return tokens + (at < text.length ? restBytes(text, at, budget) : 0);
}

/**
 * At least the UTF-8 bytes of text[at..]. Measuring costs a pass over it (V8's Utf8Length, about
 * 1.7 ns a character of text outside ASCII: 0.4 ms of a 256 KB prompt). UTF-8 takes at most three
 * bytes a character, so a long rest is charged what is left of TokenBudget.textBytes instead when
 * that is less: it covers this rest and every one after it, which are then charged nothing more.
 */
function restBytes(text: string, at: number, budget: TokenBudget): number {
  const chars = text.length - at;
  const known = budget.textBytes ?? Infinity;
  const bytes = chars >= MEASURED_REST_CHARS && known < 3 * chars ? known : Buffer.byteLength(text.slice(at), 'utf8');
  if (budget.textBytes !== undefined) {
    budget.textBytes = Math.max(0, budget.textBytes - bytes);
  }
  return bytes;
}

/** The last cut point in (floor, at], or `floor` when there is none within SEGMENT_CHARS. */
function lastCutBefore(text: string, at: number, floor: number): number {
  for (let cut = at; cut > floor && cut > at - SEGMENT_CHARS; cut--) {
    if (isCut(text, cut)) {
      return cut;
    }
  }
  return floor;
}

/**
 * The cl100k count of a segment cut at pre-token boundaries, or more once the merge budget is spent.
 * Only the stretch around text outside ASCII, from the last cut point before it to the first after
 * it, goes through the tokenizer's regex; the rest splits the same way by ascii-pre-tokens.ts, at a
 * fraction of the cost (prose with a word like "Kraków" in it is mostly ASCII).
 */
function segmentTokens(segment: string, budget: TokenBudget): number {
  let tokens = 0;
  for (let start = 0; start < segment.length;) {
    const nonAscii = firstNonAscii(segment, start);
    if (nonAscii < 0) {
      return tokens + asciiTokens(start === 0 ? segment : segment.slice(start), budget);
    }
    const from = lastCutBefore(segment, nonAscii, start);
    const to = firstCutAfter(segment, nonAscii);
    if (from > start) {
      tokens += asciiTokens(segment.slice(start, from), budget);
    }
    tokens += regexTokens(segment.slice(from, to), budget);
    start = to;
  }
  return tokens;
}

function asciiTokens(text: string, budget: TokenBudget): number {
  let tokens = 0;
  for (let start = 0; start < text.length;) {
    const end = asciiPreTokenEnd(text, start);
    tokens += pieceTokens(text.slice(start, end), budget);
    start = end;
  }
  return tokens;
}

function regexTokens(text: string, budget: TokenBudget): number {
  let tokens = 0;
  // exec rather than matchAll: the iterator and its destructuring cost more than the regex itself.
  PRE_TOKEN.lastIndex = 0;
  for (let match = PRE_TOKEN.exec(text); match !== null; match = PRE_TOKEN.exec(text)) {
    tokens += pieceTokens(match[0], budget);
  }
  return tokens;
}

/** The first cut point after `at`, or the text's end. */
function firstCutAfter(text: string, at: number): number {
  for (let cut = at + 1; cut < text.length; cut++) {
    if (isCut(text, cut)) {
      return cut;
    }
  }
  return text.length;
}

function pieceTokens(piece: string, budget: TokenBudget): number {
  budget.pieces--;
  return isCl100kToken(piece) ? 1 : (budget.merged.get(piece) ?? mergedTokens(piece, budget));
}

function mergedTokens(piece: string, budget: TokenBudget): number {
  if (budget.merge <= 0) {
    return Buffer.byteLength(piece, 'utf8');
  }
  budget.merge -= piece.length + CALL_COST_CHARS;
  const tokens = mergedCl100kTokens(piece);
  budget.merged.set(piece, tokens);
  return tokens;
}

/** The last cut point in (start, start + SEGMENT_CHARS], or -1. */
function lastCut(text: string, start: number): number {
  for (let at = start + SEGMENT_CHARS; at > start; at--) {
    if (isCut(text, at)) {
      return at;
    }
  }
  return -1;
}

/** The last cut point of `text` (where it may be split and counted piece by piece), or 0 when it has none. */
export function lastCutPoint(text: string): number {
  for (let at = text.length - 1; at > 0; at--) {
    if (isCut(text, at)) {
      return at;
    }
  }
  return 0;
}

/** The first cut point from `from` (or the end), spending the budget on the characters looked at; -1 if none within it. */
function nextCut(text: string, from: number, budget: TokenBudget): number {
  const limit = Math.min(text.length, from + Math.max(budget.pieces, 0) * SCAN_CHARS_PER_PIECE);
  for (let at = from; at < limit; at++) {
    if (isCut(text, at)) {
      budget.pieces -= Math.ceil((at - from) / SCAN_CHARS_PER_PIECE);
      return at;
    }
  }
  budget.pieces -= Math.ceil((limit - from) / SCAN_CHARS_PER_PIECE);
  return limit === text.length ? limit : -1;
}

/** A letter before, a non-letter at: a pre-token ends here. Surrogates never count, so a pair is never split. */
function isCut(text: string, at: number): boolean {
  const before = text.charCodeAt(at - 1);
  const after = text.charCodeAt(at);
  return isLetter(before) && !isSurrogate(after) && !isLetter(after);
}

function isLetter(code: number): boolean {
  return LETTERS[code] === 1;
}

function isSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdfff;
}
