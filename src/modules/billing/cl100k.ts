import type { RawBytePairRanks } from 'gpt-tokenizer/cjs/BytePairEncodingCore';
import { GptEncoding } from 'gpt-tokenizer/cjs/GptEncoding';
import { readFileSync } from 'node:fs';
import { TextDecoder } from 'node:util';

/*
 * cl100k's ranks, read from the tokenizer's own data file (`<base64 token> <rank>` a line) rather
 * than from its generated 1 MB JavaScript module: V8 compiling that one array literal grew the API's
 * resident memory by about 19 MB that it never gave back, for data that takes a few MB as values.
 * The ranks are built exactly as that module's generator builds them (a token that is whole UTF-8
 * as its string, any other as its bytes), so the encoder is the same; text-tokens.spec.ts and
 * token-bound.spec.ts compare counts with the library's own module.
 */
function readRanks(): RawBytePairRanks {
  const strict = new TextDecoder('utf-8', { fatal: true });
  const ranks: (string | number[])[] = [];
  const text = readFileSync(require.resolve('gpt-tokenizer/data/cl100k_base.tiktoken'), 'latin1');
  for (const line of text.split('\n')) {
    if (line === '') {
      continue;
    }
    const [token, rank] = line.split(' ');
    const bytes = Buffer.from(token, 'base64');
    ranks[Number(rank)] = wholeUtf8(strict, bytes) ?? Array.from(bytes);
  }
  return ranks;
}

/** The bytes as a string when they are whole UTF-8 that encodes back to the same length; else undefined. */
function wholeUtf8(decoder: TextDecoder, bytes: Buffer): string | undefined {
  try {
    const text = decoder.decode(bytes);
    return Buffer.byteLength(text, 'utf8') === bytes.length ? text : undefined;
  } catch {
    return undefined;
  }
}

/** The ranks as the library's generated module holds them: index the rank, a string or bytes. */
export const CL100K_RANKS = readRanks();

const CL100K = GptEncoding.getEncodingApi('cl100k_base', () => CL100K_RANKS);

/** cl100k's token count of `text` (special-token text counted as plain text when the options say so). */
export function countCl100kTokens(text: string, options: Parameters<GptEncoding['countTokens']>[1]): number {
  return CL100K.countTokens(text, options);
}

/** Pre-tokens that are one token by themselves: the vocabulary's entries that are whole UTF-8 strings. */
export const CL100K_VOCABULARY: ReadonlySet<string> = new Set(
  CL100K_RANKS.filter((entry): entry is string => typeof entry === 'string'),
);
