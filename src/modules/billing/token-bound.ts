import { endianness } from 'node:os';
import { asciiClasses, DIGIT, LETTER, LINE_BREAK, OTHER, SPACE, WHITESPACE } from 'src/modules/billing/ascii-classes';
import { cl100kTextTokens, isCl100kToken, nextHash } from 'src/modules/billing/cl100k';

/*
 * An upper bound on text's cl100k count in one pass of table lookups, for text past the exact budget.
 *
 * Why it holds. cl100k splits text into pre-tokens, then merges each from single bytes: it merges an
 * adjacent pair as long as the pair's concatenation is in the vocabulary. So when it stops, no two
 * adjacent tokens form a vocabulary entry. Call a "chain" consecutive bytes of one pre-token whose
 * every adjacent pair is itself a two-byte vocabulary entry. Count tokens by the byte each starts at:
 * three consecutive chain bytes cannot all start tokens (the middle one would be a one-byte token
 * next to another, and the two would merge), so a chain of L bytes starts at most ceil(2L/3) tokens,
 * and any other byte at most one. A pre-token that is a whole vocabulary entry is exactly one token.
 *
 * What the scan knows about pre-tokens (the regex is in ascii-pre-tokens.ts), for ASCII:
 * - letters after a letter belong to its pre-token, except just after an apostrophe (`'s`, `'ll` are
 *   pre-tokens of their own), and a space before a letter starts the letter's pre-token; such a
 *   word, ` ?[A-Za-z]{1,8}` as a whole pre-token, is looked up in the vocabulary: prose is counted
 *   almost exactly;
 * - ASCII digits come in pre-tokens of up to three, each of them a vocabulary entry;
 * - a run of punctuation is one pre-token, with the space before it;
 * - a whitespace run is cut after its last line break and before its last character, which joins
 *   what follows: the spaces between hold one pre-token (a chain of spaces).
 * Everything else counts as its UTF-8 bytes, the bound that always holds. The unit test checks the
 * bound against the tokenizer on random and adversarial text.
 */

const CLASSES = asciiClasses(true);

/** Whether two ASCII characters are one vocabulary entry, at [first * 128 + second]. */
const PAIRS = (() => {
  const table = new Uint8Array(128 * 128);
  for (let first = 0; first < 128; first++) {
    for (let second = 0; second < 128; second++) {
      table[first * 128 + second] = isCl100kToken(String.fromCharCode(first, second)) ? 1 : 0;
    }
  }
  return table;
})();

/**
 * Whether each UTF-16 code unit may be a letter (\p{L}), through which a word's pre-token goes on.
 * A surrogate may be half of one (𝐀 is a letter), so it counts as one.
 */
const UNICODE_LETTERS = (() => {
  const letter = /\p{L}/u;
  const table = new Uint8Array(0x10000);
  for (let code = 0x80; code < table.length; code++) {
    const surrogate = code >= 0xd800 && code <= 0xdfff;
    table[code] = surrogate || letter.test(String.fromCharCode(code)) ? 1 : 0;
  }
  return table;
})();

/*
 * Words (` ?[A-Za-z]{1,15}`) of the vocabulary, in an open-addressing table indexed by a hash taken
 * along the scan (int32 arithmetic only: a double there would be boxed at every letter). A slot holds
 * where the word's characters start in WORD_CHARS (plus one; 0 is empty) and its length, and a
 * candidate is compared character by character, so a hash collision can never count a word as 1.
 */
const MAX_WORD_CHARS = 16;
const HASH_SEED = 17;
const WORD_SLOTS = 1 << 17;
const WORD_STARTS = new Int32Array(WORD_SLOTS);
const WORD_LENGTHS = new Uint8Array(WORD_SLOTS);
const WORDS = cl100kTextTokens().filter((entry) => /^( [A-Za-z]{1,15}|[A-Za-z]{1,16})$/.test(entry));
const WORD_CHARS = new Uint8Array(WORDS.reduce((sum, word) => sum + word.length, 0));

{
  let offset = 0;
  for (const word of WORDS) {
    let hash = HASH_SEED;
    for (let index = 0; index < word.length; index++) {
      hash = nextHash(hash, word.charCodeAt(index));
      WORD_CHARS[offset + index] = word.charCodeAt(index);
    }
    let slot = hash & (WORD_SLOTS - 1);
    while (WORD_STARTS[slot] !== 0) {
      slot = (slot + 1) & (WORD_SLOTS - 1);
    }
    WORD_STARTS[slot] = offset + 1;
    WORD_LENGTHS[slot] = word.length;
    offset += word.length;
  }
}

/** Whether units[end - length, end) is a word of the vocabulary; `hash` is nextHash over its characters. */
function isWord(units: Uint16Array, end: number, length: number, hash: number): boolean {
  for (let slot = hash & (WORD_SLOTS - 1); WORD_STARTS[slot] !== 0; slot = (slot + 1) & (WORD_SLOTS - 1)) {
    if (WORD_LENGTHS[slot] === length && sameChars(units, end - length, WORD_STARTS[slot] - 1, length)) {
      return true;
    }
  }
  return false;
}

function sameChars(units: Uint16Array, from: number, offset: number, length: number): boolean {
  for (let index = 0; index < length; index++) {
    if (units[from + index] !== WORD_CHARS[offset + index]) {
      return false;
    }
  }
  return true;
}

/*
 * The scan reads the text's UTF-16 code units from a typed array, copied in once a call: V8's
 * charCodeAt checks the string's representation at every character, and cost about a quarter more.
 * One array serves every call (the scan is synchronous), grown to the longest text yet: text-tokens.ts
 * hands over 32k characters at a time, so 64 KB.
 */
const LITTLE_ENDIAN = endianness() === 'LE';
let scratchUnits = new Uint16Array(4096);

function codeUnits(text: string, from: number, end: number): Uint16Array {
  if (scratchUnits.length < end - from) {
    scratchUnits = new Uint16Array(Math.max(end - from, 2 * scratchUnits.length));
  }
  const units = scratchUnits;
  if (LITTLE_ENDIAN) {
    // UTF-16LE is the units as they are, lone surrogates included.
    Buffer.from(units.buffer, units.byteOffset, units.byteLength).write(text.slice(from, end), 'utf16le');
  } else {
    for (let at = from; at < end; at++) {
      units[at - from] = text.charCodeAt(at);
    }
  }
  return units;
}

const APOSTROPHE = 0x27;
const NONE = -1;

const classOf = (code: number) => (code < 0x80 ? CLASSES[code] : 0);
const chainTokens = (length: number) => ((2 * length + 2) / 3) | 0;

/**
 * At least the cl100k count of text[start, end). `start` must begin a pre-token and `end` end one: 0
 * and the text's length, or cut points of text-tokens.ts (a letter before, a non-letter at).
 */
export function boundTextTokens(text: string, start = 0, end = text.length): number {
  // The character before `start` is read too: it decides whether a word or a digit run starts there.
  const from = start > 0 ? start - 1 : 0;
  return boundUnits(codeUnits(text, from, end), start - from, end - from);
}

/**
 * The bound of units[start, end), whose units before `start` (one at most) only precede it. One loop
 * over the characters, with the state in locals: this runs over megabytes on the event loop.
 */
function boundUnits(units: Uint16Array, start: number, end: number): number {
  const length = end;
  let tokens = 0;
  let at = start;
  // The last apostrophe: a contraction's pre-token (`'s`, `'ll`) may end one or two letters after it.
  let apostrophe = -4;
  // A space or tab that ended a whitespace run and starts the pre-token of the word or punctuation after it.
  let lead = NONE;
  while (at < length) {
    const code = units[at];
    if (code >= 0x80) {
      // Outside ASCII: its UTF-8 bytes (a surrogate pair is 4 bytes, 2 per unit).
      tokens += code < 0x800 || (code >= 0xd800 && code <= 0xdfff) ? 2 : 3;
      at++;
      continue;
    }
    const cls = CLASSES[code];
    if (cls === LETTER) {
      // A word. Most are a whole pre-token that is one vocabulary entry: hashed along the way, then
      // looked up; any other is counted by its chains in a second pass over its letters.
      const from = at;
      const before = at > start ? units[at - 1] : NONE;
      const beforeClass = before === NONE ? NONE : classOf(before);
      // A whole pre-token from a leading space, or with no leading character.
      const keyed =
        lead === 0x20 ||
        (lead === NONE &&
          at - apostrophe > 3 &&
          (beforeClass === NONE || beforeClass === DIGIT || beforeClass === LINE_BREAK));
      let hash = lead === 0x20 ? nextHash(HASH_SEED, 0x20) : HASH_SEED;
      for (let letter = code; letter < 0x80 && CLASSES[letter] === LETTER;) {
        hash = nextHash(hash, letter);
        at++;
        letter = at < length ? units[at] : 0x80;
      }
      const chars = at - from + (lead === NONE ? 0 : 1);
      // The pre-token ends here unless a letter outside ASCII follows.
      const whole =
        keyed && chars <= MAX_WORD_CHARS && (at >= length || units[at] < 0x80 || UNICODE_LETTERS[units[at]] === 0);
      tokens += whole && isWord(units, at, chars, hash) ? 1 : wordChainTokens(units, from, at, lead, apostrophe);
      lead = NONE;
      continue;
    }
    if (cls === OTHER) {
      // A run of punctuation is one pre-token, with the space before it.
      let chain = lead === NONE ? 0 : 1;
      let previous = lead;
      lead = NONE;
      for (let mark = code; ;) {
        if (mark === APOSTROPHE) {
          apostrophe = at;
        }
        if (chain > 0 && PAIRS[previous * 128 + mark] === 1) {
          chain++;
        } else {
          tokens += chainTokens(chain);
          chain = 1;
        }
        previous = mark;
        at++;
        mark = at < length ? units[at] : 0x80;
        if (mark >= 0x80 || CLASSES[mark] !== OTHER) {
          break;
        }
      }
      tokens += chainTokens(chain);
      continue;
    }
    if (cls === DIGIT) {
      // Cut in threes from the run's start, each a vocabulary entry, unless a character outside ASCII
      // (maybe a numeral, \p{N}) touches the run and may shift the cuts: then each digit counts.
      const from = at;
      while (at < length && isDigit(units[at])) {
        at++;
      }
      const touchesNonAscii = (from > 0 && units[from - 1] >= 0x80) || (at < length && units[at] >= 0x80);
      tokens += touchesNonAscii ? at - from : ((at - from + 2) / 3) | 0;
      continue;
    }
    if (code === 0x20 && at + 1 < length && classOf(units[at + 1]) === LETTER) {
      // The common case, one space before a word: it starts the word's pre-token.
      lead = 0x20;
      at++;
      continue;
    }
    // A whitespace run is cut after its last line break and before its last character. Through the
    // last line break, bytes; the rest but its last character, a chain when it is all spaces.
    const from = at;
    let afterLastBreak = from;
    let spaces = true;
    for (let space = cls; space === SPACE || space === LINE_BREAK || space === WHITESPACE;) {
      if (space === LINE_BREAK) {
        afterLastBreak = at + 1;
        spaces = true;
      } else if (space === WHITESPACE) {
        spaces = false;
      }
      at++;
      const next = at < length ? units[at] : 0x80;
      space = next < 0x80 ? CLASSES[next] : 0;
    }
    tokens += afterLastBreak - from;
    if (at === afterLastBreak) {
      continue;
    }
    const last = units[at - 1];
    // A tab last in the run does not make the chain before it any shorter.
    const chained = spaces || (afterLastBreak < at - 1 && allSpaces(units, afterLastBreak, at - 1));
    tokens += chained ? chainTokens(at - 1 - afterLastBreak) : at - 1 - afterLastBreak;
    const next = at < length ? units[at] : 0x80;
    const nextClass = next < 0x80 ? CLASSES[next] : 0;
    // The last character starts the next pre-token: a word's (with its leading character), or
    // punctuation's (a space only); otherwise it is a pre-token, or the start of one, by itself.
    const leads = nextClass === LETTER || (last === 0x20 && nextClass === OTHER);
    if (leads && PAIRS[last * 128 + next] === 1) {
      lead = last;
    } else {
      tokens += 1;
    }
  }
  return tokens;
}

/**
 * The chain bound of the letters units[from, end), with the space or tab leading them if any: letters
 * chain while each pair is a vocabulary entry and no contraction (a pre-token of its own) ends between.
 */
function wordChainTokens(units: Uint16Array, from: number, end: number, lead: number, apostrophe: number): number {
  let tokens = 0;
  let chain = lead === NONE ? 0 : 1;
  let previous = lead;
  for (let at = from; at < end; at++) {
    const letter = units[at];
    if (chain > 0 && PAIRS[previous * 128 + letter] === 1 && at - apostrophe > 3) {
      chain++;
    } else {
      tokens += chainTokens(chain);
      chain = 1;
    }
    previous = letter;
  }
  return tokens + chainTokens(chain);
}

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

function allSpaces(units: Uint16Array, from: number, end: number): boolean {
  for (let at = from; at < end; at++) {
    if (units[at] !== 0x20) {
      return false;
    }
  }
  return true;
}
