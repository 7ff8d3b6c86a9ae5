import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface RawExchange {
  status: number | null;
  headers: Record<string, string>;
  body: any;
  /** Body bytes written when the first byte of the answer arrived (null: no answer). */
  sentBeforeAnswer: number | null;
  /** Body bytes written in all. */
  sent: number;
  /** A socket error the client saw (EPIPE, ECONNRESET), or null. */
  error: string | null;
}

export interface LargeBodyRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  /** Bytes of body to send (JSON-looking filler). */
  bodyBytes: number;
  /** Send it chunked, without a Content-Length. */
  chunked?: boolean;
  /** Stop writing once the answer arrived (otherwise the whole body is written, as a naive client does). */
  stopWhenAnswered?: boolean;
  chunkBytes?: number;
  /** Pause between chunks, so the client is still writing long after the server could answer. */
  pauseMs?: number;
}

/**
 * A raw HTTP/1.1 client that writes a large body slowly over one socket and reads the answer whenever
 * it comes, like an SDK uploading images: tells whether the answer arrived before the body was sent
 * and whether the connection was reset under the writer.
 */
export async function sendLargeBody(baseUrl: string, request: LargeBodyRequest): Promise<RawExchange> {
  const { port, hostname } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  const result: RawExchange = {
    status: null,
    headers: {},
    body: undefined,
    sentBeforeAnswer: null,
    sent: 0,
    error: null,
  };
  let received = Buffer.alloc(0);
  let complete = false;
  let closed = false;
  socket.on('data', (chunk: Buffer) => {
    result.sentBeforeAnswer ??= result.sent;
    received = Buffer.concat([received, chunk]);
    complete = parseAnswer(received, result);
  });
  socket.on('error', (error: NodeJS.ErrnoException) => (result.error ??= error.code ?? error.message));
  socket.on('close', () => (closed = true));
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));

  const framing: Record<string, string> = request.chunked
    ? { 'transfer-encoding': 'chunked' }
    : { 'content-length': String(request.bodyBytes) };
  const head = Object.entries({ host: `${hostname}:${port}`, ...request.headers, ...framing })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.write(`${request.method} ${request.path} HTTP/1.1\r\n${head}\r\n`);

  const chunkBytes = request.chunkBytes ?? 64 * 1024;
  const filler = Buffer.alloc(chunkBytes, 'a');
  while (result.sent < request.bodyBytes && !closed && result.error === null) {
    if (request.stopWhenAnswered && result.sentBeforeAnswer !== null) {
      break;
    }
    const piece = filler.subarray(0, Math.min(chunkBytes, request.bodyBytes - result.sent));
    const framed = request.chunked
      ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')])
      : piece;
    if (!socket.write(framed)) {
      await new Promise((resolve) => socket.once('drain', resolve).once('close', resolve));
    }
    result.sent += piece.length;
    if (request.pauseMs) {
      await sleep(request.pauseMs);
    }
  }
  if (request.chunked && result.sent >= request.bodyBytes && !closed) {
    socket.write('0\r\n\r\n');
  }
  const deadline = Date.now() + 10_000;
  while (!complete && !closed && Date.now() < deadline) {
    await sleep(20);
  }
  // Anything the server does wrong after the body (a late reset) shows up here too.
  await sleep(50);
  socket.destroy();
  return result;
}

/** Fills `result` from the bytes received so far; true once the whole (Content-Length) answer is there. */
function parseAnswer(received: Buffer, result: RawExchange): boolean {
  const end = received.indexOf('\r\n\r\n');
  if (end < 0) {
    return false;
  }
  const [statusLine, ...lines] = received.subarray(0, end).toString('latin1').split('\r\n');
  result.status = Number(statusLine.split(' ')[1]);
  result.headers = Object.fromEntries(
    lines.map((line) => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
    }),
  );
  const length = Number(result.headers['content-length'] ?? 0);
  const body = received.subarray(end + 4);
  if (body.length < length) {
    return false;
  }
  const text = body.subarray(0, length).toString('utf8');
  try {
    result.body = JSON.parse(text);
  } catch {
    result.body = text;
  }
  return true;
}
