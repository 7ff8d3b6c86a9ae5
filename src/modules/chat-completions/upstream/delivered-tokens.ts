import { countCompletionTokens } from 'src/modules/billing/token-estimator';

/**
 * Text is counted in pieces of at most this many characters: the memory of a stream stays flat, and
 * the tokenizer, whose cost grows with the square of a run without spaces, only sees short runs.
 */
const PIECE_CHARS = 2048;

/**
 * A running count of the completion tokens a client received, for billing when the upstream
 * reports no usage. It keeps at most one piece of text: each full piece is counted and dropped.
 * Pieces are cut before a space where there is one (where the tokenizer splits words anyway), and a
 * token never spans a cut, so the total is never below the count of the whole text: an upper bound.
 */
export class DeliveredTokens {
  private counted = 0;
  private pending = '';

  add(text: string): void {
    this.pending += text;
    while (this.pending.length >= PIECE_CHARS) {
      const cut = cutPoint(this.pending);
      this.counted += countCompletionTokens(this.pending.slice(0, cut));
      this.pending = this.pending.slice(cut);
    }
  }

  total(): number {
    return this.counted + countCompletionTokens(this.pending);
  }
}

function cutPoint(text: string): number {
  const space = text.lastIndexOf(' ', PIECE_CHARS - 1);
  if (space > PIECE_CHARS / 2) {
    return space;
  }
  // No space near the end: cut anyway, but never between the two halves of a surrogate pair.
  const high = text.charCodeAt(PIECE_CHARS - 1);
  return high >= 0xd800 && high <= 0xdbff ? PIECE_CHARS - 1 : PIECE_CHARS;
}
