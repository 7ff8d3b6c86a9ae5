import { UpstreamBody } from 'src/modules/chat-completions/upstream/upstream-client';

/**
 * An upstream's JSON body, or undefined when it is not JSON or is larger than `limitBytes`: an
 * abnormal answer either way. Reading stops (and the upstream call is cut) at the limit, so a huge
 * answer costs at most `limitBytes` of memory.
 */
export async function readJsonBounded(body: UpstreamBody, limitBytes: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limitBytes) {
        // Leaving the loop destroys the body.
        return undefined;
      }
      chunks.push(chunk);
    }
    return JSON.parse(Buffer.concat(chunks, size).toString('utf8'));
  } catch {
    return undefined;
  }
}
