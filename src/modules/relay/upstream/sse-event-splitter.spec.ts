import {
  eventData,
  MAX_EVENT_BYTES,
  OversizedEventError,
  SseEventSplitter,
} from 'src/modules/relay/upstream/sse-event-splitter';

describe(SseEventSplitter.name, () => {
  it('should return each event as soon as its blank line arrives', () => {
    const sut = new SseEventSplitter();
    expect(sut.push(Buffer.from('data: {"a":1}\n\ndata: {"b"'))).toEqual(['data: {"a":1}']);
    expect(sut.push(Buffer.from(':2}\n\n'))).toEqual(['data: {"b":2}']);
    expect(sut.rest()).toBe('');
  });

  it('should accept CRLF framing and keep multi-byte characters split across chunks whole', () => {
    const sut = new SseEventSplitter();
    const bytes = Buffer.from('data: "héllo"\r\n\r\n');
    expect(sut.push(bytes.subarray(0, 9))).toEqual([]);
    expect(sut.push(bytes.subarray(9))).toEqual(['data: "héllo"']);
  });

  it('should keep what a broken stream left unterminated', () => {
    const sut = new SseEventSplitter();
    sut.push(Buffer.from('data: {"a":1}\n\ndata: {"cut'));
    expect(sut.rest()).toBe('data: {"cut');
  });

  it('should read data lines and ignore comments', () => {
    expect(eventData('data: [DONE]')).toBe('[DONE]');
    expect(eventData('event: x\ndata:{"a":1}')).toBe('{"a":1}');
    expect(eventData(': keep-alive')).toBeNull();
  });
});

describe('SseEventSplitter bounds', () => {
  it('should refuse an event over 1 MB, also when it arrives in small pieces', () => {
    const sut = new SseEventSplitter();
    const piece = Buffer.from('x'.repeat(64 * 1024));
    expect(sut.push(Buffer.from('data: {"a":1}\n\ndata: "'))).toEqual(['data: {"a":1}']);
    expect(() => {
      for (let i = 0; i < 17; i++) {
        sut.push(piece);
      }
    }).toThrow(OversizedEventError);
  });

  it('should measure a finished event in bytes: 400k three-byte characters are over 1 MB', () => {
    const sut = new SseEventSplitter();
    expect(() => sut.push(Buffer.from(`data: "${'好'.repeat(400_000)}"\n\n`))).toThrow(OversizedEventError);
  });

  it('should pass an event just under 1 MB whole', () => {
    const sut = new SseEventSplitter();
    const event = `data: "${'y'.repeat(MAX_EVENT_BYTES - 20)}"`;
    expect(sut.push(Buffer.from(`${event}\n\n`))).toEqual([event]);
  });

  it('should find a separator split across two pieces', () => {
    const sut = new SseEventSplitter();
    expect(sut.push(Buffer.from('data: 1\r\n'))).toEqual([]);
    expect(sut.push(Buffer.from('\r\ndata: 2\n'))).toEqual(['data: 1']);
    expect(sut.push(Buffer.from('\n'))).toEqual(['data: 2']);
  });
});
