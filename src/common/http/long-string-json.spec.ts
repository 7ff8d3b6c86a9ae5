import { getHeapSpaceStatistics } from 'node:v8';
import { transcode } from 'node:buffer';
import {
  LONG_STRING_CHARS,
  LONG_UTF8_STRING_BYTES,
  OFF_HEAP_CHARS,
  parseAsciiJson,
  parseUtf8Json,
} from 'src/common/http/long-string-json';
import { SeededRandom } from 'test/support/seeded-random';

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

  describe('a long string with escapes', () => {
    // ASCII text standing for prose: JSON's escapes, and text outside ASCII only as \u escapes.
    const escaped = (unit: string) => unit.repeat(Math.ceil(LONG_UTF8_STRING_BYTES / unit.length) + 1);
    let toString: jest.SpyInstance;

    beforeEach(() => (toString = jest.spyOn(Buffer.prototype, 'toString')));
    afterEach(() => jest.restoreAllMocks());
    /** Parses `text`: how many times its whole body was decoded, and the value. */
    const parseCountingWholeDecodes = (text: string) => {
      const bytes = Buffer.from(text, 'latin1');
      const value = parseAsciiJson(bytes);
      // The text around long strings is decoded with a range, and the strings from their own bytes.
      const decodes = toString.mock.contexts.filter(
        (context, call) => context === bytes && toString.mock.calls[call].length === 1,
      );
      return { value, decodedWhole: decodes.length };
    };

    it.each([
      ['paragraphs and quotes', `{"text": "${escaped('Line one, \\"quoted\\".\\n\\nNext\\t/ \\\\ ')}"}`],
      [
        'text outside ASCII as \\u escapes',
        `{"text": "${escaped('caf\\u00e9 \\u6771\\u4eac \\ud83d\\ude00 \\u0000 ')}"}`,
      ],
      ['escapes at both ends, beside a short one', `["\\n${escaped('x')}\\u0041", "a\\nb"]`],
    ])('should read one with %s on its own, as JSON.parse reads it', (_name, text) => {
      expect(parseCountingWholeDecodes(text)).toEqual({ value: JSON.parse(text), decodedWhole: 0 });
    });

    it('should read one holding a lone surrogate (UTF-8 cannot carry it) as JSON.parse does, parsed whole', () => {
      const text = `{"text": "${escaped('prose ')}\\ud800 end"}`;

      expect(parseCountingWholeDecodes(text)).toEqual({ value: JSON.parse(text), decodedWhole: 1 });
    });

    it('should leave one shorter than LONG_UTF8_STRING_BYTES to JSON.parse, where it is quicker', () => {
      const text = `{"text": "${'a\\n'.repeat(LONG_STRING_CHARS / 2 + 10)}"}`;

      expect(parseCountingWholeDecodes(text)).toEqual({ value: JSON.parse(text), decodedWhole: 1 });
    });
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

  it('should answer as JSON.parse does for random bodies with long strings, and for each broken a byte at a time', () => {
    expectRandomBodiesReadAsJsonParseReads(parse, {
      seed: 1109,
      rounds: 150,
      // ASCII only, as the parser is only given ASCII (json-body.ts): DEL is a character a string may hold raw.
      breakers: ['"', '\\', '\\"', ',', ':', '{', '}', '[', ']', ' ', '\n', '\u0001', 'A', '\u007f'],
      longFrom: LONG_STRING_CHARS,
      longString: (random) =>
        random.int(0, 3) === 0
          ? 'Prose, "quoted"\n\t\\ '.repeat(LONG_UTF8_STRING_BYTES / 16 + random.int(0, 9))
          : random.pick(['AbC+/', 'x', 'data:image/png;base64,QUJD']).repeat(LONG_STRING_CHARS / 4 + random.int(0, 9)) +
            (random.int(0, 3) === 0 ? random.pick(['\\n', '\\"', '\\u0041']) : ''),
      shortStrings: ['', 'short', 'a"b', 'tab\there'],
    });
  });
});

describe(parseUtf8Json.name, () => {
  const wholeText = jest.fn((bytes: Buffer) => bytes.toString('utf8'));
  const parse = (text: string) => parseUtf8Json(Buffer.from(text, 'utf8'), wholeText);
  // Prose of at least LONG_UTF8_STRING_BYTES, with text outside ASCII and the escapes a prompt has.
  const prose = (unit = 'Ωραία — 東京 😀 "quoted" line\nnext\ttab \\ slash/ ') =>
    unit.repeat(Math.ceil(LONG_UTF8_STRING_BYTES / Buffer.byteLength(unit)) + 1);

  beforeEach(() => wholeText.mockClear());

  it.each([
    ['a prompt with escapes', JSON.stringify({ model: 'm', messages: [{ role: 'user', content: prose() }] })],
    [
      'every escape JSON has and four-byte characters',
      JSON.stringify({ text: prose() + '\b\f\r\u0000\u001f\uD83D\uDE00 \u00e9\uFFFF/ \uFEFF' }),
    ],
    ['a surrogate pair written as two escapes', `{"text": "${prose('東京')}\\ud83d\\ude00 \\uDBFF\\uDFFF"}`],
    ['escapes at both ends', `{"text": "\\n${prose('東京 — \\"q\\" \\/ \\n')}\\u0041"}`],
    ['two long strings and a short one', JSON.stringify([prose('a—'), 'é', { b: prose('ü\n') }])],
    ['a long key beside a long value', JSON.stringify({ [prose('k€')]: prose('v€') })],
  ])('should read %s as JSON.parse does, without decoding the body whole', (_name, text) => {
    expect(parse(text)).toEqual(JSON.parse(text));
    expect(wholeText).not.toHaveBeenCalled();
  });

  it.each([
    ['a lone high surrogate', '\\ud800 x'],
    ['a lone low surrogate', '\\udc00'],
    ['a high surrogate before a character', '\\ud83dx'],
    ['two high surrogates', '\\ud83d\\ud83d'],
  ])(
    'should read a long string holding %s (UTF-8 cannot carry it) as JSON.parse does, parsed whole',
    (_name, escape) => {
      const text = `{"text": "${prose('é')}${escape}"}`;

      expect(parse(text)).toEqual(JSON.parse(text));
      expect(wholeText).toHaveBeenCalledTimes(1);
    },
  );

  it('should give a long string the characters JSON.parse gives, escapes resolved', () => {
    const content = `東京\n"é"\t\\😀\u0041`.repeat(LONG_UTF8_STRING_BYTES / 8);
    const parsed = parse(JSON.stringify({ content })) as { content: string };

    expect(parsed.content).toBe(content);
    expect(parsed.content.length).toBe(content.length);
  });

  it.each([
    ['a control character inside a long string', `{"text": "${prose('é')}\u0001"}`],
    ['an unknown escape', `{"text": "${prose('é')}\\x41"}`],
    ['a cut \\u escape', `{"text": "${prose('é')}\\u12"}`],
    ['a \\u escape with a letter that is not hex', `{"text": "${prose('é')}\\u12G4"}`],
    ['a trailing comma after a long string', `{"text": "${prose('é')}",}`],
    ['an unclosed long string', `{"text": "${prose('é')}}`],
  ])('should reject %s as JSON.parse does', (_name, text) => {
    expect(() => JSON.parse(text)).toThrow(SyntaxError);
    expect(() => parse(text)).toThrow(SyntaxError);
  });

  it('should give a long string whose surrogate pairs straddle every piece it is decoded in', () => {
    // Each pair starts at an odd code unit: any even cut of the UTF-16 falls inside one.
    const content = `a${'😀'.repeat(LONG_UTF8_STRING_BYTES / 2)}`;
    const parsed = parse(JSON.stringify({ content })) as { content: string };

    expect(parsed.content).toBe(content);
    expect(parsed.content.codePointAt(parsed.content.length - 2)).toBe(0x1f600);
  });

  it("should keep long prompts out of V8's large-object pages", () => {
    const prompts = ['Ωραία — 東京 😀 prose ', 'plain English prose, quoted "so" '];
    const bodies = Array.from({ length: 20 }, (_, index) =>
      Buffer.from(JSON.stringify({ messages: [{ content: prose(prompts[index % 2]).repeat(2) + index }] })),
    );
    // Young large objects have a space of their own until a scavenge moves them to the old one.
    const largeObjects = () =>
      getHeapSpaceStatistics()
        .filter((space) => space.space_name.endsWith('large_object_space'))
        .reduce((sum, space) => sum + space.space_used_size, 0);

    // Read around each parse: a collection between two parses may free earlier large objects.
    const parses = bodies.map((bytes) => {
      const before = largeObjects();
      const parsed = parseUtf8Json(bytes, wholeText);
      return { parsed, grown: largeObjects() - before };
    });

    // One string a prompt would be a large object of 256-512 KB each time.
    expect(parses.filter(({ grown }) => grown >= 128 * 1024)).toEqual([]);
    expect(parses.map(({ parsed }) => parsed)).toEqual(
      bodies.map((bytes) => JSON.parse(bytes.toString('utf8')) as unknown),
    );
  });

  it('should keep the body in one string per long value: the text of the body is not decoded whole', () => {
    const content = prose();
    const bytes = Buffer.from(JSON.stringify({ messages: [{ content }] }));
    const viaTranscode = (whole: Buffer) => transcode(whole, 'utf8', 'utf16le').toString('utf16le');

    expect(parseUtf8Json(bytes, viaTranscode)).toEqual({ messages: [{ content }] });
    expect(parseUtf8Json(bytes, wholeText)).toEqual(JSON.parse(viaTranscode(bytes)));
    expect(wholeText).not.toHaveBeenCalled();
  });

  it('should answer as JSON.parse does for random bodies with long strings, and for each broken a byte at a time', () => {
    expectRandomBodiesReadAsJsonParseReads(parse, {
      seed: 2911,
      rounds: 40,
      breakers: ['"', '\\', '\\"', '\\u', ',', ':', '{', '}', '[', ']', ' ', '\n', '\u0001', 'é', '東'],
      // Measured in characters, so the long ones of four-byte characters are the shortest in bytes.
      longFrom: LONG_UTF8_STRING_BYTES / 4,
      longString: (random) =>
        random.pick(['é—東京 ', 'Ω\n', 'a"b\\c/ ', '😀\t']).repeat(LONG_UTF8_STRING_BYTES / 4 + random.int(0, 9)) +
        (random.int(0, 3) === 0 ? random.pick(['\\n', '\\"', '\\u0041', '\\uD83D']) : ''),
      shortStrings: ['', 'short', 'a"b', 'tab\there', 'ü'],
      // A body broken inside a surrogate pair cannot be sent as such: its UTF-8 holds U+FFFD there.
      asSent: (text) => Buffer.from(text, 'utf8').toString('utf8'),
    });
  });
});

describe('a long string of nothing but escapes', () => {
  // A client may send any bytes. A native search and copy for each escape took 5-13 times as long as
  // JSON.parse on such a string (0.9 s for 20 MB): only text between escapes that is long enough to
  // pay for them is searched and copied natively (docs/performance.md, "Large bodies stay bytes").
  afterEach(() => jest.restoreAllMocks());

  it.each([
    ['line breaks, in an ASCII body', '\\n', parseAsciiJson],
    ['a letter and a line break, in an ASCII body', 'a\\n', parseAsciiJson],
    ['\\u escapes, in an ASCII body', '\\u00e9', parseAsciiJson],
    [
      'text outside ASCII and line breaks',
      'é\\n',
      (bytes: Buffer) => parseUtf8Json(bytes, (whole) => whole.toString()),
    ],
  ])('should read one of %s as JSON.parse does, without a native call per escape', (_name, unit, parse) => {
    const text = `{"text": "${unit.repeat((1 << 20) / Buffer.byteLength(unit))}"}`;
    const bytes = Buffer.from(text);
    const searches = jest.spyOn(Buffer.prototype, 'indexOf');
    const copies = jest.spyOn(Buffer.prototype, 'copy');

    expect(parse(bytes)).toEqual(JSON.parse(text));
    // Some 150k-500k escapes.
    expect(searches.mock.calls.length + copies.mock.calls.length).toBeLessThan(100);
  });
});

interface RandomBodies {
  seed: number;
  rounds: number;
  /** What a body is broken with: inserted, or a character deleted instead. */
  breakers: string[];
  /** Characters between two quotes from which a string counts as long (where breaking it matters most). */
  longFrom: number;
  longString: (random: SeededRandom) => string;
  shortStrings: string[];
  /** The text the bytes `parse` reads stand for; the text itself when nothing is lost on the way. */
  asSent?: (text: string) => string;
}

/** `parse` answers as JSON.parse for random bodies with long strings, each also broken where it matters most. */
function expectRandomBodiesReadAsJsonParseReads(parse: (text: string) => unknown, bodies: RandomBodies): void {
  const random = new SeededRandom(bodies.seed);
  const value = (depth: number): unknown => {
    const roll = random.int(0, depth > 2 ? 2 : 4);
    if (roll === 0) {
      return random.int(0, 2) === 0 ? bodies.longString(random) : random.pick(bodies.shortStrings);
    }
    if (roll === 1) {
      return random.pick([0, -1.5, true, null]);
    }
    if (roll === 3) {
      return Array.from({ length: random.int(0, 3) }, () => value(depth + 1));
    }
    const object: Record<string, unknown> = {};
    for (let index = random.int(0, 3); index > 0; index--) {
      object[random.int(0, 5) === 0 ? bodies.longString(random) : `k${random.int(0, 9)}`] = value(depth + 1);
    }
    return object;
  };
  const outcome = (read: () => unknown) => {
    try {
      return { value: read() };
    } catch (error) {
      return { error: (error as Error).name };
    }
  };

  for (let round = 0; round < bodies.rounds; round++) {
    const text = JSON.stringify({ model: 'm', messages: [value(0), value(0)] });
    // Break it where it matters most: inside a long string's end, at or beside a quote, or anywhere.
    const quotes = [...text.matchAll(/"/g)].map((match) => match.index);
    const longEnds = quotes.filter((quote, index) => index > 0 && quote - quotes[index - 1] > bodies.longFrom);
    const at = random.pick([
      () => (longEnds.length > 0 ? random.pick(longEnds) - random.int(0, 1) : 0),
      () => random.pick(quotes) + random.int(-1, 1),
      () => random.int(0, text.length),
    ])();
    const broken =
      random.int(0, 2) > 0
        ? text.slice(0, at) + random.pick(bodies.breakers) + text.slice(at)
        : text.slice(0, at) + text.slice(at + 1);

    for (const candidate of [text, broken]) {
      const sent = bodies.asSent?.(candidate) ?? candidate;
      expect(outcome(() => parse(candidate))).toEqual(outcome(() => JSON.parse(sent) as unknown));
    }
  }
}
