import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { flattenHeaderBlock } from 'src/common/http/header-block';

// A context made while the flag is on has `gc`; turned off again so later test files' contexts do not.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
setFlagsFromString('--no-expose-gc');

/**
 * Two full collections: V8 sweeps after a collection on a helper thread, and counts what it has not
 * swept yet as used; the second collection first finishes the first's sweeping, so the flattened
 * ropes' pieces are no longer counted on a busy machine either.
 */
function collectGarbage(): void {
  gc();
  gc();
}

const RESPONSES = 2_000;

/** A stream's response with its headers written, as the relay writes them. */
function streamResponse(index: number): ServerResponse {
  const response = new ServerResponse(new IncomingMessage(new Socket()));
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
    'x-request-id': `req_${index.toString(36).padStart(12, '0')}`,
    'x-ratelimit-limit-requests': '600',
    'x-ratelimit-remaining-requests': String(599 - (index % 600)),
    'x-ratelimit-reset-requests': '1s',
    'x-ratelimit-limit-tokens': '100000',
    'x-ratelimit-remaining-tokens': String(90_000 + index),
  });
  return response;
}

/** Heap bytes each of RESPONSES open responses keeps, with `prepare` applied to each. */
function retainedPerResponse(prepare: (response: ServerResponse) => void): number {
  const kept: ServerResponse[] = [];
  collectGarbage();
  const before = process.memoryUsage().heapUsed;
  for (let index = 0; index < RESPONSES; index++) {
    const response = streamResponse(index);
    prepare(response);
    kept.push(response);
  }
  collectGarbage();
  const retained = (process.memoryUsage().heapUsed - before) / kept.length;
  kept.length = 0;
  return retained;
}

describe(flattenHeaderBlock.name, () => {
  it('should keep the same header block', () => {
    const response = streamResponse(1);
    const block = (response as unknown as { _header: string })._header;
    const copy = `${block.slice(0, 5)}${block.slice(5)}`;
    flattenHeaderBlock(response);
    expect((response as unknown as { _header: string })._header).toBe(copy);
    expect(copy).toContain('x-request-id: req_000000000001\r\n');
  });

  it('should make an open response keep less memory for its headers', () => {
    // A first batch takes what the first responses allocate once (compiled code, caches).
    retainedPerResponse(flattenHeaderBlock);
    const asWritten = retainedPerResponse(() => undefined);
    const flattened = retainedPerResponse(flattenHeaderBlock);
    // About 1.1 KB less on Node 20: the rope's nodes and pieces are gone, the flat text stays.
    expect(asWritten - flattened).toBeGreaterThan(512);
  });

  it('should do nothing to a response whose headers were not written yet', () => {
    const response = new ServerResponse(new IncomingMessage(new Socket()));
    expect(() => flattenHeaderBlock(response)).not.toThrow();
    expect(response.headersSent).toBe(false);
  });
});
