import { isPoisoned } from 'src/common/http/json-body';

describe(isPoisoned.name, () => {
  it.each([
    ['a __proto__ key at the top', '{"__proto__": {"admin": true}}'],
    ['a __proto__ key deep in an array', '{"messages": [{"content": [{"__proto__": {"x": 1}}]}]}'],
    ['a constructor holding a prototype', '{"a": {"constructor": {"prototype": {"polluted": true}}}}'],
    ['an escaped __proto__ key', '{"\\u005f_proto__": 1}'],
  ])('should find %s', (_name, text) => {
    expect(isPoisoned(JSON.parse(text))).toBe(true);
  });

  it.each([
    ['an ordinary chat body', '{"model": "m", "messages": [{"role": "user", "content": "__proto__ constructor"}]}'],
    ['a constructor key without a prototype', '{"constructor": {"name": "x"}, "prototype": 1}'],
    ['a scalar', '42'],
    ['null', 'null'],
  ])('should accept %s', (_name, text) => {
    expect(isPoisoned(JSON.parse(text))).toBe(false);
  });

  it('should walk a million-element array without exhausting the stack', () => {
    const huge = JSON.parse(`[${'{"a":[1]},'.repeat(1_000_000)}{"__proto__":1}]`) as unknown;
    expect(isPoisoned(huge)).toBe(true);
  });
});
