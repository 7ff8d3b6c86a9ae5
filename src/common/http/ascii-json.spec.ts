import { getHeapSpaceStatistics } from 'node:v8';
import { LONG_STRING_CHARS, OFF_HEAP_CHARS, parseAsciiJson } from 'src/common/http/ascii-json';

const image = (fill: string, chars = OFF_HEAP_CHARS) =>
  `data:image/png;base64,${fill.repeat(Math.ceil(chars / fill.length))}`;
const parse = (text: string) => parseAsciiJson(Buffer.from(text, 'latin1'));

describe(parseAsciiJson.name, () => {
  it.each([
    ['a small body', '{"model": "m", "messages": [{"role": "user", "content": "hi \\"there\\""}]}'],
    [
      'two images and some text',
      JSON.stringify({
        model: 'm',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'look' },
              { type: 'image_url', image_url: { url: image('AbC+') } },
            ],
          },
          { role: 'user', content: [{ type: 'image_url', image_url: { url: image('Zz9/'), detail: 'low' } }] },
        ],
      }),
    ],
    ['an image just long enough to be read on its own', JSON.stringify({ url: image('Ab', LONG_STRING_CHARS) })],
    [
      'a string just too short to be',
      JSON.stringify({ url: image('Ab', LONG_STRING_CHARS - 40), pad: image('x', LONG_STRING_CHARS) }),
    ],
    ['long strings in an array', JSON.stringify([image('A'), 'short', image('B'), [image('C')]])],
    ['a long string with escapes', JSON.stringify({ text: `${'line\n"quoted"\\'.repeat(OFF_HEAP_CHARS / 10)}` })],
    ['a long key', JSON.stringify({ [image('K')]: 1, after: 'x' })],
    ['a long string that is the whole body', JSON.stringify(image('Q'))],
    ['spaces around a long value', `{ "a" :\n\t"${image('W')}"  ,"b":[ "${image('V')}" ] }`],
  ])('should read %s as JSON.parse does', (_name, text) => {
    expect(parse(text)).toEqual(JSON.parse(text));
  });

  it.each([
    ['a control character inside a long string', `{"url": "${image('A')}\u0001"}`],
    ['a trailing comma after a long string', `{"url": "${image('A')}",}`],
    ['an unclosed long string', `{"url": "${image('A')}}`],
    ['a long string where a key belongs', `{"a": 1, "${image('A')}"}`],
  ])('should reject %s as JSON.parse does', (_name, text) => {
    expect(() => JSON.parse(text)).toThrow(SyntaxError);
    expect(() => parse(text)).toThrow(SyntaxError);
  });

  it('should keep an image out of the heap while the parsed body is held', () => {
    const bodies = Array.from({ length: 40 }, (_, index) =>
      Buffer.from(JSON.stringify({ messages: [{ content: [{ image_url: { url: image(`A${index % 10}==`) } }] }] })),
    );
    const largeObjects = () => getHeapSpaceStatistics().find((space) => space.space_name === 'large_object_space');
    const before = largeObjects()?.space_used_size ?? 0;

    const held = bodies.map((bytes) => parseAsciiJson(bytes));

    // Forty 1 MB images on the heap would be 40 MB of large objects.
    expect((largeObjects()?.space_used_size ?? 0) - before).toBeLessThan(10 * 1024 * 1024);
    expect(held).toEqual(bodies.map((bytes) => JSON.parse(bytes.toString('latin1')) as unknown));
  });
});
