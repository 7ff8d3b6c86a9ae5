import { ApiError } from 'src/common/errors/api-error';

/** A keyset position (the sort key of the last row of a page), opaque to clients. */
export type Cursor = string[];

export function encodeCursor(position: Cursor): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

/** The position a cursor of this API encodes, checked by `valid`; 400 naming `cursor` otherwise. */
export function decodeCursor(text: string | undefined, valid: (position: Cursor) => boolean): Cursor | null {
  if (text === undefined) {
    return null;
  }
  try {
    const position: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (Array.isArray(position) && position.every((part) => typeof part === 'string') && valid(position)) {
      return position;
    }
  } catch {
    // fall through
  }
  throw ApiError.invalid('cursor is not a cursor this API returned.', 'cursor');
}
