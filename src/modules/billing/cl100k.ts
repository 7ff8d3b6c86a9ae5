import { readFileSync } from 'node:fs';
import { TextDecoder, TextEncoder } from 'node:util';

/*
 * cl100k's vocabulary as one buffer of bytes, and tiktoken's byte-pair merge over it.
 *
 * Why not the tokenizer library's encoder: it holds the vocabulary as 100k JavaScript strings in a
 * rank array and two maps (about 10 MB of the API's heap), and it caches every merged pre-token it
 * has seen, up to 100,000 of them: about 29 MB more once the prompts have been varied (measured with
 * random words), kept for the life of the process. The gateway asks two things of cl100k: whether a
 * pre-token is one token, and how many tokens merging leaves of one that is not. Both are lookups of
 * a byte string's rank. Here the tokens' bytes sit end to end in one buffer, found through an
 * open-addressing table of ranks: about 2 MB outside the heap, and nothing cached.
 *
 * Special-token text ('<|endoftext|>') in a prompt is plain text to the upstream, and so it is here.
 * The data is the library's own file (`<base64 token> <rank>` a line). cl100k.spec.ts compares the
 * vocabulary and the counts with the library's generated module.
 */

interface Vocabulary {
  /** Every token's bytes, end to end. */
  bytes: Buffer;
  /** Where each rank's bytes start in `bytes`, and how many there are (0: no such rank). */
  starts: Uint32Array;
  lengths: Uint16Array;
  /** Open addressing by the hash of a token's bytes: the rank plus one, 0 for an empty slot. */
  slots: Int32Array;
  longest: number;
}

const HASH_SEED = 0x2b5;
// A pair's rank when the pair is not a token: above every rank.
const NO_RANK = 0x7fffffff;

const VOCABULARY = readVocabulary(readFileSync(require.resolve('gpt-tokenizer/data/cl100k_base.tiktoken'), 'latin1'));

function readVocabulary(text: string): Vocabulary {
  const lines = text.split('\n').filter((line) => line !== '');
  const ranks = lines.map((line) => Number(line.slice(line.indexOf(' ') + 1)));
  const size = ranks.reduce((largest, rank) => Math.max(largest, rank), 0) + 1;
  // Base64 of n bytes is at least 4n/3 characters: an upper bound of the bytes, cut to size below.
  const bytes = Buffer.alloc(lines.reduce((sum, line) => sum + line.length, 0));
  const starts = new Uint32Array(size);
  const lengths = new Uint16Array(size);
  let offset = 0;
  let longest = 0;
  lines.forEach((line, index) => {
    const length = bytes.write(line.slice(0, line.indexOf(' ')), offset, 'base64');
    starts[ranks[index]] = offset;
    lengths[ranks[index]] = length;
    longest = Math.max(longest, length);
    offset += length;
  });
  // About 2.5 slots a token, rounded up to a power of two: probes stay short.
  const slots = new Int32Array(1 << Math.ceil(Math.log2(lines.length * 2.5)));
  const vocabulary = { bytes: Buffer.from(bytes.subarray(0, offset)), starts, lengths, slots, longest };
  for (const rank of ranks) {
    const start = vocabulary.starts[rank];
    let slot = slotOf(hashBytes(vocabulary.bytes, start, start + lengths[rank]), slots.length - 1);
    while (slots[slot] !== 0) {
      slot = (slot + 1) & (slots.length - 1);
    }
    slots[slot] = rank + 1;
  }
  return vocabulary;
}

/**
 * One step of the string hash both cl100k tables use (this one's, and token-bound.ts's words), over a
 * byte or a character code. Shifts rather than Math.imul: Math's functions are slow calls where the
 * global Math is wrapped (Jest's sandbox).
 */
export function nextHash(hash: number, byte: number): number {
  return (((hash << 5) - hash) ^ byte) | 0;
}

// xorshift: the short tokens' hashes differ in their low bits only, and the table is indexed by them.
function slotOf(hash: number, mask: number): number {
  hash ^= hash << 13;
  hash ^= hash >>> 17;
  return (hash ^ (hash << 5)) & mask;
}

function hashBytes(source: Uint8Array, start: number, end: number): number {
  let hash = HASH_SEED;
  for (let index = start; index < end; index++) {
    hash = nextHash(hash, source[index]);
  }
  return hash;
}

/** The rank of source[start..end) as one token, or NO_RANK. */
function rankOf(source: Uint8Array, start: number, end: number): number {
  const { bytes, starts, lengths, slots, longest } = VOCABULARY;
  const length = end - start;
  if (length > longest) {
    return NO_RANK;
  }
  const mask = slots.length - 1;
  for (let slot = slotOf(hashBytes(source, start, end), mask); slots[slot] !== 0; slot = (slot + 1) & mask) {
    const rank = slots[slot] - 1;
    if (lengths[rank] === length && sameBytes(source, start, bytes, starts[rank], length)) {
      return rank;
    }
  }
  return NO_RANK;
}

function sameBytes(
  left: Uint8Array,
  leftStart: number,
  right: Uint8Array,
  rightStart: number,
  length: number,
): boolean {
  for (let index = 0; index < length; index++) {
    if (left[leftStart + index] !== right[rightStart + index]) {
      return false;
    }
  }
  return true;
}

/*
 * Scratch space reused by every call (the event loop runs one at a time): the text's UTF-8, and the
 * merge's parts. It grows with the longest pre-token merged so far, up to SCRATCH_LIMIT; a longer
 * one gets arrays of its own.
 */
const SCRATCH_LIMIT = 64 * 1024;
const UTF8 = new TextEncoder();
let utf8Scratch = new Uint8Array(1024);
let boundsScratch = new Int32Array(1024);
let pairRanksScratch = new Int32Array(1024);

/** The text's UTF-8, in a scratch buffer (a lone surrogate as U+FFFD, as every encoder writes it). */
function encodeUtf8(text: string): Uint8Array {
  const room = text.length * 3;
  const target =
    room <= utf8Scratch.length ? utf8Scratch : room <= SCRATCH_LIMIT ? grownUtf8(room) : new Uint8Array(room);
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code >= 0x80) {
      return target.subarray(0, UTF8.encodeInto(text, target).written);
    }
    target[index] = code;
  }
  return target.subarray(0, text.length);
}

function grownUtf8(room: number): Uint8Array {
  utf8Scratch = new Uint8Array(room);
  return utf8Scratch;
}

/**
 * Whether the text is one cl100k token. Called for every pre-token of a prompt, so ASCII (most of
 * them) is hashed and compared straight from the string, without encoding it first.
 */
export function isCl100kToken(text: string): boolean {
  const { bytes, starts, lengths, slots, longest } = VOCABULARY;
  const length = text.length;
  if (length === 0 || length > longest) {
    return false;
  }
  let hash = HASH_SEED;
  for (let index = 0; index < length; index++) {
    const code = text.charCodeAt(index);
    if (code >= 0x80) {
      const utf8 = encodeUtf8(text);
      return rankOf(utf8, 0, utf8.length) !== NO_RANK;
    }
    hash = nextHash(hash, code);
  }
  const mask = slots.length - 1;
  for (let slot = slotOf(hash, mask); slots[slot] !== 0; slot = (slot + 1) & mask) {
    const rank = slots[slot] - 1;
    if (lengths[rank] === length && sameAscii(text, bytes, starts[rank])) {
      return true;
    }
  }
  return false;
}

function sameAscii(text: string, bytes: Uint8Array, start: number): boolean {
  for (let index = 0; index < text.length; index++) {
    if (text.charCodeAt(index) !== bytes[start + index]) {
      return false;
    }
  }
  return true;
}

/**
 * cl100k's token count of one pre-token: 1 when it is a token, else what tiktoken's merge leaves of
 * its bytes. The merge starts from single bytes (each a token) and joins, again and again, the
 * adjacent pair whose concatenation has the lowest rank (the leftmost of equals) until no adjacent
 * pair is a token. Quadratic in the length: text-tokens.ts bounds what it is given.
 */
export function mergedCl100kTokens(preToken: string): number {
  const bytes = encodeUtf8(preToken);
  const length = bytes.length;
  if (length <= 1 || rankOf(bytes, 0, length) !== NO_RANK) {
    return Math.min(length, 1);
  }
  const { bounds, pairRanks } = mergeScratch(length);
  // Part k is bytes[bounds[k], bounds[k + 1]); pairRanks[k] is the rank of parts k and k + 1 joined.
  for (let index = 0; index <= length; index++) {
    bounds[index] = index;
  }
  for (let index = 0; index < length - 1; index++) {
    pairRanks[index] = rankOf(bytes, index, index + 2);
  }
  let parts = length;
  while (parts > 1) {
    let lowest = NO_RANK;
    let at = -1;
    for (let index = 0; index < parts - 1; index++) {
      if (pairRanks[index] < lowest) {
        lowest = pairRanks[index];
        at = index;
      }
    }
    if (at < 0) {
      break;
    }
    // Parts at and at + 1 become one: the bound between them goes, and so does the pair's rank.
    bounds.copyWithin(at + 1, at + 2, parts + 1);
    pairRanks.copyWithin(at + 1, at + 2, parts - 1);
    parts--;
    if (at < parts - 1) {
      pairRanks[at] = rankOf(bytes, bounds[at], bounds[at + 2]);
    }
    if (at > 0) {
      pairRanks[at - 1] = rankOf(bytes, bounds[at - 1], bounds[at + 1]);
    }
  }
  return parts;
}

function mergeScratch(length: number): { bounds: Int32Array; pairRanks: Int32Array } {
  if (length < boundsScratch.length) {
    return { bounds: boundsScratch, pairRanks: pairRanksScratch };
  }
  const size = 2 ** Math.ceil(Math.log2(length + 1));
  if (size > SCRATCH_LIMIT) {
    return { bounds: new Int32Array(length + 1), pairRanks: new Int32Array(length) };
  }
  boundsScratch = new Int32Array(size);
  pairRanksScratch = new Int32Array(size);
  return { bounds: boundsScratch, pairRanks: pairRanksScratch };
}

/** The tokens that are whole UTF-8 text, as strings: for tables built once (token-bound.ts). */
export function cl100kTextTokens(): string[] {
  const { bytes, starts, lengths } = VOCABULARY;
  const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const texts: string[] = [];
  for (let rank = 0; rank < starts.length; rank++) {
    const token = bytes.subarray(starts[rank], starts[rank] + lengths[rank]);
    const text = lengths[rank] === 0 ? undefined : wholeUtf8(strict, token);
    if (text !== undefined) {
      texts.push(text);
    }
  }
  return texts;
}

function wholeUtf8(decoder: TextDecoder, bytes: Uint8Array): string | undefined {
  try {
    return decoder.decode(bytes);
  } catch {
    return undefined;
  }
}
