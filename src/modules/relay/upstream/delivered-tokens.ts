import { lastCutPoint } from 'src/modules/billing/text-tokens';
import { countCompletionTokens } from 'src/modules/billing/token-estimator';

/** Text is counted in pieces of at most this many characters: the memory of a stream stays flat. */
const PIECE_CHARS = 2048;

/**
 * A running count of the completion tokens a client received, for billing when the upstream
 * reports no usage. It keeps at most one piece of text: each full piece is counted and dropped.
 * A piece ends where a letter is followed by a non-letter: cl100k always ends a pre-token there and
 * never looks across it, so the pieces' counts add up to exactly the whole text's count. A piece
 * with no such point counts as its UTF-8 bytes (a token is at least one byte). The total is never
 * below the tokenizer's count of the whole delivered text: an upper bound, exact for prose.
 */
export class DeliveredTokens {
  private counted = 0;
  private pending = '';

  add(text: string): void {
    this.pending += text;
    while (this.pending.length >= PIECE_CHARS) {
      const cut = lastCutPoint(this.pending);
      if (cut > 0) {
        this.counted += countCompletionTokens(this.pending.slice(0, cut));
        this.pending = this.pending.slice(cut);
      } else {
        this.counted += Buffer.byteLength(this.pending);
        this.pending = '';
      }
    }
  }

  total(): number {
    return this.counted + countCompletionTokens(this.pending);
  }
}
