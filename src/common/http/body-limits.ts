import { IncomingMessage } from 'node:http';

/** Login and registration take an e-mail and a password: nothing larger is ever legitimate. */
export const CONSOLE_AUTH_BODY_LIMIT_BYTES = 16 * 1024;
/** Every other route outside /v1 (console, admin, webhooks) takes small JSON documents. */
export const SMALL_BODY_LIMIT_BYTES = 64 * 1024;
/**
 * An operator's price book: LiteLLM's whole price file (about a megabyte, growing) with room to
 * spare. The one large body outside /v1; as on /v1, the token is checked from the headers before
 * the body is read (registerEdgeHooks), so nobody else can make the API buffer it.
 */
export const PRICE_BOOK_BODY_LIMIT_BYTES = 4 * 1024 * 1024;
/** How long a client still sending a body we already answered may keep sending, like nginx's lingering_time. */
export const LINGER_MS = 30_000;

/**
 * The largest body a route accepts. Only /v1, authenticated before its body is read, gets the large
 * limit (BODY_LIMIT_BYTES, for images); unauthenticated routes cannot make the server buffer megabytes.
 */
export function bodyLimitFor(path: string, completionBodyLimit: number): number {
  if (path.startsWith('/v1/')) {
    return completionBodyLimit;
  }
  if (path === '/admin/price-books') {
    return PRICE_BOOK_BODY_LIMIT_BYTES;
  }
  return path.startsWith('/console/auth/') ? CONSOLE_AUTH_BODY_LIMIT_BYTES : SMALL_BODY_LIMIT_BYTES;
}

/**
 * Reads and throws away the rest of a body that was answered before it was read (413, 401, 503). Closing
 * the socket instead would reset the connection under a client that is still writing, and the client
 * would see EPIPE instead of our answer. Bounded in bytes and time, then the socket is cut.
 */
export function discardUnreadBody(raw: IncomingMessage, maxBytes: number, maxMs = LINGER_MS): void {
  if (raw.complete || raw.destroyed) {
    return;
  }
  let received = 0;
  const cut = () => raw.socket?.destroy();
  const timer = setTimeout(cut, maxMs).unref();
  raw.on('data', (chunk: Buffer) => {
    received += chunk.length;
    if (received > maxBytes) {
      clearTimeout(timer);
      cut();
    }
  });
  raw.once('end', () => clearTimeout(timer));
  raw.resume();
}
