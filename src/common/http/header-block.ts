import { ServerResponse } from 'node:http';

/**
 * Makes the header block a response keeps for its life one string instead of a tree of pieces.
 *
 * Node builds the block by appending each header's name, separator, value and line end to a string,
 * and keeps the result on the response (`_header`) until the response is collected. V8 makes each
 * append a rope node (a "cons string") pointing at its two halves, so a stream's nine or ten headers
 * stay as some fifty nodes and their pieces: about 1.1 KB more than the flat block, kept for as long
 * as the stream runs (a thousand slow streams: ~1.4 MB of the API's live heap, docs/performance.md,
 * "Memory"). Reading one character makes V8 flatten a rope in place: the root then holds the
 * flat text, and the nodes and pieces below it are garbage.
 *
 * `_header` is Node's own field, not an API; where it is not a string this does nothing.
 */
export function flattenHeaderBlock(response: ServerResponse): void {
  const block = (response as unknown as { _header?: unknown })._header;
  if (typeof block === 'string' && block.length > 0) {
    block.charCodeAt(0);
  }
}
