import { lookup as dnsLookup, LookupAddress } from 'node:dns';
import { IncomingMessage, request as httpRequest, RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, LookupFunction, Socket } from 'node:net';
import { AppConfig } from 'src/config/app-config';
import { isPrivateAddress } from 'src/modules/relay/upstream/image-fetch/address-policy';
import { CancelSignal, followedSignal } from 'src/common/http/cancel-signal';
import { withFields } from 'src/common/with-fields';

/** What the operator allows (IMAGE_FETCH_* in src/config). */
export type ImageFetchLimits = AppConfig['imageFetch'];

export interface InlineImage {
  mimeType: string;
  /** base64 */
  data: string;
}

/** Why an image URL was refused; the message is shown to the client (it names no internal detail). */
export class ImageRefused extends Error {}

const MAX_REDIRECTS = 3;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** Images of one request fetched at once. */
export const IMAGE_FETCH_CONCURRENCY = 4;

/** The byte budget of one request's images, shared by its concurrent fetches. */
export class ByteBudget {
  private used = 0;
  constructor(readonly limit: number) {}

  /** Takes `bytes`; false (and nothing taken) once over the limit. */
  take(bytes: number): boolean {
    if (this.used + bytes > this.limit) {
      return false;
    }
    this.used += bytes;
    return true;
  }
}

/**
 * Fetches the distinct `urls` of one request for inlining, at most IMAGE_FETCH_CONCURRENCY at once,
 * within one deadline and one byte budget for them all. The first refusal stops the others.
 */
export async function fetchImages(
  urls: string[],
  limits: ImageFetchLimits,
  signal: CancelSignal,
  refuses: AddressRule = limits.allowPrivate ? () => false : isPrivateAddress,
): Promise<Map<string, InlineImage>> {
  const stop = new AbortController();
  const request = followedSignal(signal);
  const deadline = AbortSignal.any([request.signal, stop.signal, AbortSignal.timeout(limits.timeoutMs)]);
  const budget = new ByteBudget(limits.maxBytes);
  const images = new Map<string, InlineImage>();
  const pending = [...new Set(urls)];
  const worker = async () => {
    for (let url = pending.shift(); url !== undefined; url = pending.shift()) {
      images.set(url, await fetchImage(url, { limits, refuses, budget, deadline }));
    }
  };
  const workers = Array.from({ length: Math.min(IMAGE_FETCH_CONCURRENCY, pending.length) }, () =>
    worker().catch((error: unknown) => {
      pending.length = 0;
      stop.abort(error);
      throw error;
    }),
  );
  const results = await Promise.allSettled(workers);
  request.unfollow();
  const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed) {
    // The first refusal, not the aborts it caused in the other fetches.
    throw stop.signal.aborted ? (stop.signal.reason as Error) : (failed.reason as Error);
  }
  return images;
}

/**
 * Fetches one image: https only (unless allowed otherwise), `image/*` only, within the byte budget
 * and the deadline, refusing private addresses. The address is checked where the socket is opened
 * (the lookup the connection uses, and the socket's own remote address), so a name that resolves to
 * a public address when checked and a private one when connected cannot slip through. Each redirect
 * is a new URL checked the same way. The bytes are only kept in memory for the request.
 */
async function fetchImage(url: string, fetch: OneFetch): Promise<InlineImage> {
  const { limits, budget, deadline } = fetch;
  let current = parseUrl(url, fetch);
  for (let hop = 0; ; hop++) {
    const response = await get(current, fetch);
    if (REDIRECTS.has(response.statusCode ?? 0) && typeof response.headers.location === 'string') {
      response.destroy();
      if (hop >= MAX_REDIRECTS) {
        throw new ImageRefused(`it redirects more than ${MAX_REDIRECTS} times`);
      }
      current = parseUrl(new URL(response.headers.location, current).toString(), fetch);
      continue;
    }
    return readImage(response, budget, deadline, limits.timeoutMs);
  }
}

/** Whether an IP address must not be connected to. */
export type AddressRule = (address: string) => boolean;

interface OneFetch {
  limits: ImageFetchLimits;
  refuses: AddressRule;
  budget: ByteBudget;
  deadline: AbortSignal;
}

function parseUrl(text: string, { limits, refuses }: OneFetch): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ImageRefused('it is not a valid URL');
  }
  const schemeAllowed = url.protocol === 'https:' || (limits.allowHttp && url.protocol === 'http:');
  if (!schemeAllowed) {
    throw new ImageRefused(limits.allowHttp ? 'only http(s) URLs are fetched' : 'only https URLs are fetched');
  }
  if (url.username || url.password) {
    throw new ImageRefused('URLs with credentials are not fetched');
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0 && refuses(host)) {
    throw new ImageRefused('its address is private');
  }
  return url;
}

/** The lookup the socket connects with: every address it may use is checked first. */
function checkedLookup(refuses: AddressRule): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, withFields(options, { all: true } as const), (error, addresses: LookupAddress[]) => {
      if (error) {
        return callback(error, '', 4);
      }
      const usable = addresses.filter((entry) => !refuses(entry.address));
      if (usable.length === 0) {
        return callback(new ImageRefused('its address is private'), '', 4);
      }
      if (options.all) {
        return (callback as unknown as (e: null, all: LookupAddress[]) => void)(null, usable);
      }
      callback(null, usable[0].address, usable[0].family);
    });
  };
}

function get(url: URL, { limits, refuses, deadline: signal }: OneFetch): Promise<IncomingMessage> {
  const options: RequestOptions = {
    method: 'GET',
    agent: false,
    lookup: checkedLookup(refuses),
    headers: { accept: 'image/*', 'user-agent': 'llm-gateway-image-fetch' },
    signal,
  };
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(url, options, resolve);
    request.on('socket', (socket: Socket) => {
      // The last word: the address actually connected to, whatever resolved it.
      socket.once('connect', () => {
        if (refuses(socket.remoteAddress ?? '')) {
          request.destroy(new ImageRefused('its address is private'));
        }
      });
    });
    request.on('error', (error) => reject(refusalOf(error, signal, limits.timeoutMs)));
    request.end();
  });
}

async function readImage(
  response: IncomingMessage,
  budget: ByteBudget,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<InlineImage> {
  const status = response.statusCode ?? 0;
  const mimeType = (response.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  const declared = Number(response.headers['content-length'] ?? NaN);
  const refuse = (reason: string) => {
    response.destroy();
    return new ImageRefused(reason);
  };
  if (status < 200 || status > 299) {
    throw refuse(`its server answered HTTP ${status}`);
  }
  if (!/^image\/[\w.+-]+$/.test(mimeType)) {
    throw refuse('it is not an image (its content type is not image/*)');
  }
  if (declared > budget.limit) {
    throw refuse(`the images are larger than ${budget.limit} bytes`);
  }
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of response as AsyncIterable<Buffer>) {
      if (!budget.take(chunk.length)) {
        throw refuse(`the images are larger than ${budget.limit} bytes`);
      }
      chunks.push(chunk);
    }
  } catch (error) {
    throw refusalOf(error, signal, timeoutMs);
  }
  return { mimeType, data: Buffer.concat(chunks).toString('base64') };
}

function refusalOf(error: unknown, signal: AbortSignal, timeoutMs: number): Error {
  if (error instanceof ImageRefused) {
    return error;
  }
  if (signal.aborted) {
    const reason: unknown = signal.reason;
    // The client's own abort passes through as it is; the deadline is the image's fault.
    return reason instanceof DOMException && reason.name === 'TimeoutError'
      ? new ImageRefused(`fetching it took longer than ${timeoutMs} ms`)
      : (reason as Error);
  }
  const cause = error instanceof Error && error.cause instanceof ImageRefused ? error.cause : null;
  return cause ?? new ImageRefused('it could not be fetched');
}
