import { withFields } from 'src/common/with-fields';

describe('withFields', () => {
  it('should give what the spread gives: the same keys, values and order, the fields winning', () => {
    const base = { model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'hi' }] };
    const merged = withFields(base, { model: 'upstream-model', stream_options: { include_usage: true } });

    expect(merged).toEqual({ ...base, model: 'upstream-model', stream_options: { include_usage: true } });
    expect(Object.keys(merged)).toEqual(['model', 'stream', 'messages', 'stream_options']);
    expect(JSON.stringify(merged)).toBe(
      JSON.stringify({ ...base, model: 'upstream-model', stream_options: { include_usage: true } }),
    );
  });

  it('should leave the base unchanged and share its values, as a spread does', () => {
    const base = { messages: [{ role: 'user' }], n: 1 };
    const merged = withFields(base, { n: 2 });

    expect(base).toEqual({ messages: [{ role: 'user' }], n: 1 });
    expect(merged.messages).toBe(base.messages);
    expect(merged.n).toBe(2);
  });

  it('should keep an own __proto__ key of parsed JSON as a key, never as the prototype', () => {
    const upstream = JSON.parse('{"__proto__": {"polluted": true}, "id": "x"}') as Record<string, unknown>;
    const merged = withFields(upstream, { model: 'ours' });

    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect((merged as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.stringify(merged)).toBe('{"__proto__":{"polluted":true},"id":"x","model":"ours"}');
  });
});
