import { StringDecoder } from 'node:string_decoder';

/**
 * Cuts a server-sent-event byte stream into whole events (the text between blank lines), so each
 * event can be forwarded the moment its last byte arrives, without parsing its JSON.
 */
export class SseEventSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private buffer = '';

  push(chunk: Buffer): string[] {
    this.buffer += this.decoder.write(chunk);
    const events: string[] = [];
    for (;;) {
      const lf = this.buffer.indexOf('\n\n');
      const crlf = this.buffer.indexOf('\r\n\r\n');
      const useCrlf = crlf >= 0 && (lf < 0 || crlf < lf);
      const end = useCrlf ? crlf : lf;
      if (end < 0) {
        return events;
      }
      const event = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + (useCrlf ? 4 : 2));
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
