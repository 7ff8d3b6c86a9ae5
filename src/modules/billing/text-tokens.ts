import { countTokens } from 'gpt-tokenizer/cjs/encoding/cl100k_base';

/*
 * Counting text in time linear in its length, never below its cl100k count.
 *
 * cl100k splits text into pre-tokens with a regex, then runs byte-pair merges inside each one; the
 * count is the sum over pre-tokens. Merges start from single bytes and each removes one token, so a
 * piece of text never has more tokens than UTF-8 bytes. The merges are quadratic in the length of a
 * pre-token, and text without spaces ('a'×100k, CJK, base64) is one pre-token: that is the cost to avoid.
 *
 * A letter followed by a non-letter always ends a pre-token, and the regex never looks behind nor past
 * that non-letter, so text cut at such a point splits into the same pre-tokens piece by piece: the count
 * of the whole is exactly the sum of the pieces' counts. (Cutting anywhere else is not safe either way:
 * merges are greedy, and a split word can even take fewer tokens than the whole.) So text is cut at those
 * points into segments of at most SEGMENT_CHARS; a segment is counted by the tokenizer while the
 * request's budget lasts, everything else (a run with no cut point, or text past the budget) as its
 * UTF-8 bytes. Each tokenizer call is then bounded, and so is the tokenizer's total work per request.
 */
const SEGMENT_CHARS = 256;
// Special-token text ('<|endoftext|>') in a prompt is plain text to the upstream, and must not throw here.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };
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
// Each call of the tokenizer costs about this many characters' work even on a one-word string, so
// thousands of tiny strings (a large tool schema) cannot outspend the budget.
const CALL_COST_CHARS = 16;

/** How many characters of a request the real tokenizer may still read; past it, bytes are counted. */
export interface TokenBudget {
  chars: number;
}

/** Characters the tokenizer reads per request: about 5 ms of work at most, whatever the text. */
export const REQUEST_TOKENIZER_CHARS = 48 * 1024;

/** At least the cl100k token count of `text`; exact while the budget lasts on text with word breaks. */
export function countTextTokens(text: string, budget: TokenBudget): number {
  let tokens = 0;
  let start = 0;
  while (start < text.length) {
    if (budget.chars <= 0) {
      return tokens + utf8Bytes(text, start, text.length);
    }
    const end = text.length - start <= SEGMENT_CHARS ? text.length : lastCut(text, start);
    if (end < 0) {
      // A run with no safe cut nearby: its bytes bound it; keep looking for a cut within the budget.
      const next = nextCut(text, start + SEGMENT_CHARS, budget);
      tokens += utf8Bytes(text, start, next);
      start = next;
      continue;
    }
    budget.chars -= end - start + CALL_COST_CHARS;
    tokens += countTokens(text.slice(start, end), PLAIN_TEXT);
    start = end;
  }
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

/** The first cut point from `from`, spending the budget on the characters looked at; the end if none. */
function nextCut(text: string, from: number, budget: TokenBudget): number {
  const limit = Math.min(text.length, from + Math.max(budget.chars, 0));
  for (let at = from; at < limit; at++) {
    if (isCut(text, at)) {
      budget.chars -= at - from;
      return at;
    }
  }
  budget.chars -= limit - from;
  return text.length;
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

function utf8Bytes(text: string, start: number, end: number): number {
  return Buffer.byteLength(start === 0 && end === text.length ? text : text.slice(start, end), 'utf8');
}
