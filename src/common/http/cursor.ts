import { ApiError } from 'src/common/errors/api-error';

/** Keyset position in a list ordered by (created_at DESC, id DESC); opaque to clients. */
export interface Cursor {
  /** created_at as Postgres prints it, so the microseconds survive the round trip. */
  createdAt: string;
  id: string;
}

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(JSON.stringify([cursor.createdAt, cursor.id])).toString('base64url');
}

export function decodeCursor(text: string | undefined): Cursor | null {
  if (text === undefined) {
    return null;
  }
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown[];
    if (typeof createdAt === 'string' && typeof id === 'string' && !Number.isNaN(Date.parse(createdAt))) {
      return { createdAt, id };
    }
  } catch {
    // fall through
  }
  throw ApiError.invalid('cursor is not a cursor this API returned.', 'cursor');
}
