import { eventData, SseEventSplitter } from 'src/modules/chat-completions/upstream/sse-event-splitter';

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
