import { isBase64, isBase64DataUri } from 'src/modules/relay/chat-request/base64-text';
import { SeededRandom } from 'test/support/seeded-random';

const DATA_URI = /^data:[\w.+-]+\/[\w.+-]+;base64,[A-Za-z0-9+/]+={0,2}$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

describe('base64 shape checks', () => {
  it('should agree with the anchored regexes on every mix of characters', () => {
    const random = new SeededRandom(20261124);
    const pieces = [
      'A',
      'z',
      '0',
      '+',
      '/',
      '=',
      '==',
      '===',
      '-',
      '_',
      ' ',
      '\n',
      'é',
      // Above U+00FF, with an alphabet letter as the low byte ('A', '+'): must not pass for one.
      '\u0141',
      '\u012b',
      '\ud83d\ude00',
      'data:',
      'image/png',
      ';base64,',
    ];
    const differing: string[] = [];
    for (let round = 0; round < 20_000; round++) {
      const tail = Array.from({ length: random.int(0, 8) }, () => random.pick(pieces)).join('');
      const uri = random.int(0, 3) === 0 ? tail : `data:image/png;base64,${tail}`;
      if (isBase64DataUri(uri) !== DATA_URI.test(uri) || isBase64(tail) !== BASE64.test(tail)) {
        differing.push(uri);
      }
    }
    expect(differing.slice(0, 5)).toEqual([]);
  });

  it('should accept a real image payload and refuse a media type with no subtype', () => {
    const payload = Buffer.from(new SeededRandom(1).chars(3000, 0, 255), 'latin1').toString('base64');
    expect(isBase64DataUri(`data:image/png;base64,${payload}`)).toBe(true);
    expect(isBase64DataUri(`data:image;base64,${payload}`)).toBe(false);
    expect(isBase64DataUri(`data:image/png;base64,${payload}!`)).toBe(false);
  });

  it('should find a character outside the alphabet at any place in a block of 16 or in the tail', () => {
    const payload = 'QUJD'.repeat(17);
    const differing: [number, string][] = [];
    for (let at = 0; at < payload.length; at++) {
      for (const wrong of ['-', '\n', '\u0141', '\u00c1', '=']) {
        const text = payload.slice(0, at) + wrong + payload.slice(at + 1);
        if (isBase64(text) !== BASE64.test(text)) {
          differing.push([at, wrong]);
        }
      }
    }
    expect(differing).toEqual([]);
    expect(isBase64(payload)).toBe(true);
  });

  it('should check payloads longer than one chunk to their last character', () => {
    const payload = 'QUJD'.repeat(700_000);
    expect(isBase64(payload)).toBe(true);
    expect(isBase64(`${payload}==`)).toBe(true);
    expect(isBase64(`${payload.slice(0, -1)}!`)).toBe(false);
    expect(isBase64(`${payload.slice(0, -1)}\u0141`)).toBe(false);
    expect(isBase64(`${payload.slice(0, 1_500_000)}-${payload.slice(1_500_001)}`)).toBe(false);
  });
});
