import { UpstreamBody } from 'src/modules/relay/upstream/upstream-client';

/**
 * An upstream's JSON body, or undefined when it is not JSON or is larger than `limitBytes`: an
 * abnormal answer either way. Reading stops (and the upstream call is cut) at the limit, so a huge
 * answer costs at most `limitBytes` of memory.
 */
export async function readJsonBounded(
  body: UpstreamBody,
  limitBytes: number,
  declaredLength?: string | string[],
): Promise<unknown> {
  const declared = typeof declaredLength === 'string' ? Number(declaredLength) : NaN;
  if (declared > limitBytes) {
    // Destroying emits an abort error; nobody else listens to this body any more.
    body.on('error', () => undefined).destroy();
    return undefined;
  }
  try {
    // A declared length within the limit is enforced by undici itself (a longer body is an error),
    // and its own reader is cheaper than iterating the stream; chunked answers are counted here.
    return Number.isInteger(declared) ? await body.json() : await readCounted(body, limitBytes);
  } catch {
    return undefined;
  }
}

async function readCounted(body: UpstreamBody, limitBytes: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limitBytes) {
      // Leaving the loop destroys the body.
      return undefined;
    }
    chunks.push(chunk);
  }
  return JSON.parse(Buffer.concat(chunks, size).toString('utf8'));
}
