import { inflateSync } from 'node:zlib';
import { dataUriImageSize } from 'src/modules/billing/image-tokens';
import { PROMPTS, userContent } from 'tools/bench/bench-prompts';
import { pngDataUri } from 'tools/bench/png-data-uri';
import { seededProse } from 'tools/bench/seeded-prose';

describe('seededProse', () => {
  it.each([1024, 32 * 1024, 256 * 1024])('should fill %i bytes to within a sentence, the same each time', (bytes) => {
    const prose = seededProse(bytes, bytes);
    const size = Buffer.byteLength(prose);
    expect(size).toBeLessThanOrEqual(bytes);
    expect(size).toBeGreaterThan(bytes - 300);
    expect(seededProse(bytes, bytes)).toBe(prose);
    expect(seededProse(bytes, bytes + 1)).not.toBe(prose);
  });

  it('should read as prose: words and spaces, punctuation, a little outside ASCII', () => {
    const prose = seededProse(32 * 1024, 1);
    const words = prose.split(/\s+/);
    expect(words.length).toBeGreaterThan((32 * 1024) / 8);
    expect(prose).toMatch(/^[A-Z]/);
    expect(prose).toMatch(/[a-z], [a-z]/);
    expect(prose).toMatch(/[a-z]\. [A-Z]/);
    expect(prose).toContain('\n\n');
    const outsideAscii = [...prose].filter((char) => char.charCodeAt(0) > 0x7f).length;
    expect(outsideAscii).toBeGreaterThan(0);
    expect(outsideAscii).toBeLessThan(prose.length / 20);
  });
});

describe('pngDataUri', () => {
  const uri = pngDataUri(512, 512);
  const png = Buffer.from(uri.slice(uri.indexOf(',') + 1), 'base64');

  it('should be about a megabyte of base64 whose header the gateway reads', () => {
    expect(uri).toMatch(/^data:image\/png;base64,[A-Za-z0-9+/]+={0,2}$/);
    expect(uri.length).toBeGreaterThan(1_000_000);
    expect(uri.length).toBeLessThan(1_100_000);
    expect(dataUriImageSize(uri)).toEqual({ width: 512, height: 512 });
  });

  it('should hold every row of pixels in its image data', () => {
    const idat = png.indexOf('IDAT');
    const length = png.readUInt32BE(idat - 4);
    const pixels = inflateSync(png.subarray(idat + 4, idat + 4 + length));
    expect(pixels.length).toBe(512 * (1 + 512 * 3));
    expect(png.subarray(png.length - 12, png.length - 4).toString('latin1')).toBe('\0\0\0\0IEND');
  });
});

describe('userContent', () => {
  it('should build each prompt once, so every target gets the same bytes', () => {
    for (const prompt of PROMPTS) {
      expect(userContent(prompt)).toBe(userContent(prompt));
    }
    expect(userContent(undefined)).toBe('Hello');
  });
});
