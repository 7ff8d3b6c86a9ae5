import { asciiClasses, DIGIT, LETTER, LINE_BREAK, OTHER, WHITESPACE } from 'src/modules/billing/ascii-classes';

/*
 * cl100k's pre-tokenizer regex, by hand, for ASCII text only. The regex (gpt-tokenizer's
 * CL100K_TOKEN_SPLIT_REGEX) is
 *
 *   '(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE])   contractions
 *   | [^\r\n\p{L}\p{N}]?\p{L}+                           a word, with one leading non-letter
 *   | \p{N}{1,3}                                         up to three digits
 *   | ' '?[^\s\p{L}\p{N}]+[\r\n]*                        punctuation, with one leading space
 *   | \s+$ | \s*[\r\n] | \s+(?!\S) | \s                  whitespace
 *
 * With the Unicode flag its property classes make it cost several times what a scan of the same
 * text by character class costs, and prompts are mostly ASCII. On ASCII the classes are simple, so
 * each alternative is a few table lookups, tried in the regex's order; the unit test checks the
 * pieces are the regex's own on every character mix. Other text keeps going through the regex.
 */

const CLASSES = asciiClasses(false);

const APOSTROPHE = 0x27;
const SPACE = 0x20;

const NON_ASCII = /[\u0080-\uffff]/g;

/**
 * Where the first character outside ASCII is in `text` from `from`, or -1 when the rest is all ASCII,
 * which asciiPreTokenEnd requires. (A regex: several times a charCodeAt loop's speed.)
 */
export function firstNonAscii(text: string, from = 0): number {
  NON_ASCII.lastIndex = from;
  return NON_ASCII.exec(text)?.index ?? -1;
}

/** Where the pre-token starting at `start` of ASCII `text` ends, as the regex would split it. */
export function asciiPreTokenEnd(text: string, start: number): number {
  const here = classAt(text, start);
  const next = classAt(text, start + 1);
  if (text.charCodeAt(start) === APOSTROPHE) {
    const contraction = contractionLength(text, start + 1);
    if (contraction > 0) {
      return start + 1 + contraction;
    }
  }
  if (here === LETTER) {
    return runEnd(text, start, LETTER);
  }
  if ((here === WHITESPACE || here === OTHER) && next === LETTER) {
    return runEnd(text, start + 1, LETTER);
  }
  if (here === DIGIT) {
    return Math.min(runEnd(text, start, DIGIT), start + 3);
  }
  if (here === OTHER || (text.charCodeAt(start) === SPACE && next === OTHER)) {
    const symbols = runEnd(text, here === OTHER ? start : start + 1, OTHER);
    return runEnd(text, symbols, LINE_BREAK);
  }
  return whitespaceEnd(text, start);
}

/** The whitespace alternatives, in order: to the end; through the last line break; all but the last; one. */
function whitespaceEnd(text: string, start: number): number {
  let end = start;
  let afterLastBreak = -1;
  for (let cls = classAt(text, end); cls === WHITESPACE || cls === LINE_BREAK; cls = classAt(text, end)) {
    end++;
    afterLastBreak = cls === LINE_BREAK ? end : afterLastBreak;
  }
  if (end === text.length) {
    return end;
  }
  if (afterLastBreak > 0) {
    return afterLastBreak;
  }
  return end - start >= 2 ? end - 1 : start + 1;
}

/** 's 'd 'm 't 'll 've 're in any case: the length after the apostrophe, or 0. */
function contractionLength(text: string, at: number): number {
  const first = text.charCodeAt(at) | 0x20;
  if (first === 0x73 || first === 0x64 || first === 0x6d || first === 0x74) {
    return 1;
  }
  const second = text.charCodeAt(at + 1) | 0x20;
  const pair = (a: string, b: string) => first === a.charCodeAt(0) && second === b.charCodeAt(0);
  return pair('l', 'l') || pair('v', 'e') || pair('r', 'e') ? 2 : 0;
}

function runEnd(text: string, from: number, cls: number): number {
  let at = from;
  while (classAt(text, at) === cls) {
    at++;
  }
  return at;
}

/** 0 past the end, so no class matches there. */
function classAt(text: string, at: number): number {
  return at < text.length ? CLASSES[text.charCodeAt(at)] : 0;
}
