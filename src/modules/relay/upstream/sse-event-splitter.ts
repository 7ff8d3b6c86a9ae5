import { StringDecoder } from 'node:string_decoder';

/** No real event comes near it; an upstream sending one is broken or hostile. */
export const MAX_EVENT_BYTES = 1024 * 1024;
/** A UTF-8 character takes at most 3 bytes per UTF-16 unit: text this short cannot exceed the limit. */
const SAFE_CHARS = Math.floor(MAX_EVENT_BYTES / 3);

/** An upstream event over MAX_EVENT_BYTES: an abnormal answer. */
export class OversizedEventError extends Error {
  constructor() {
    super(`upstream event over ${MAX_EVENT_BYTES} bytes`);
  }
}

/**
 * Cuts a server-sent-event byte stream into whole events (the text between blank lines), so each
 * event can be forwarded the moment its last byte arrives, without parsing its JSON. An event over
 * MAX_EVENT_BYTES, or an unfinished one over as many characters, throws: an upstream cannot make it
 * hold unbounded text.
 */
export class SseEventSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private buffer = '';

  push(chunk: Buffer): string[] {
    // The text before the new chunk held no separator: searching resumes just before its end.
    let from = Math.max(0, this.buffer.length - 3);
    this.buffer += this.decoder.write(chunk);
    const events: string[] = [];
    for (;;) {
      const lf = this.buffer.indexOf('\n\n', from);
      const crlf = this.buffer.indexOf('\r\n\r\n', from);
      const useCrlf = crlf >= 0 && (lf < 0 || crlf < lf);
      const end = useCrlf ? crlf : lf;
      if (end < 0) {
        // Unfinished: counted in characters (cheap), each at least one byte.
        if (this.buffer.length > MAX_EVENT_BYTES) {
          throw new OversizedEventError();
        }
        return events;
      }
      const event = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + (useCrlf ? 4 : 2));
      from = 0;
      assertBounded(event);
      if (event.trim() !== '') {
        events.push(event);
      }
    }
  }

  /** An unterminated event left when the stream ended (a broken stream), or ''. */
  rest(): string {
    return (this.buffer + this.decoder.end()).trim();
  }
}

/** The payload of an event's `data:` lines, or null for comments and other fields. */
export function eventData(event: string): string | null {
  if (event.startsWith('data: ') && !event.includes('\n')) {
    return event.slice(6);
  }
  const lines = event
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5));
  return lines.length ? lines.join('\n') : null;
}

// Bytes are only counted for an event long enough to possibly exceed the limit: never on the hot path.
function assertBounded(text: string): void {
  if (text.length > SAFE_CHARS && Buffer.byteLength(text) > MAX_EVENT_BYTES) {
    throw new OversizedEventError();
  }
}
