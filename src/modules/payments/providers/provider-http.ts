import { request } from 'undici';

/** A wallet's answer: small JSON documents, so anything larger is refused unread. */
const MAX_ANSWER_BYTES = 256 * 1024;
const TIMEOUT_MS = 10_000;

export interface ProviderAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The exact bytes, decoded as UTF-8: answer signatures cover them. */
  text: string;
}

/**
 * One HTTP call to a wallet, bounded in time and in the bytes read; any failure to get a whole answer
 * (refused, timed out, too large) is an Error whose message names no key or body.
 */
export async function callProvider(
  url: string,
  init: { method: 'GET' | 'POST'; headers?: Record<string, string>; body?: string },
  limits: { timeoutMs?: number; maxBytes?: number } = {},
): Promise<ProviderAnswer> {
  const timeoutMs = limits.timeoutMs ?? TIMEOUT_MS;
  const maxBytes = limits.maxBytes ?? MAX_ANSWER_BYTES;
  const response = await request(url, {
    method: init.method,
    headers: init.headers,
    body: init.body,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    signal: AbortSignal.timeout(timeoutMs),
  });
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      // Leaving the loop destroys the body.
      throw new Error(`the answer is larger than ${maxBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return { status: response.statusCode, headers: response.headers, text: Buffer.concat(chunks, size).toString('utf8') };
}
