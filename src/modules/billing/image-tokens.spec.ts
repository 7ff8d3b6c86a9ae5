import { dataUriImageSize, imageTokens } from 'src/modules/billing/image-tokens';

const dataUri = (type: string, bytes: Buffer) => `data:image/${type};base64,${bytes.toString('base64')}`;

function png(width: number, height: number): Buffer {
  const header = Buffer.alloc(33);
  header.writeUInt32BE(0x89504e47, 0);
  header.writeUInt32BE(0x0d0a1a0a, 4);
  header.write('IHDR', 12, 'latin1');
  header.writeUInt32BE(width, 16);
  header.writeUInt32BE(height, 20);
  return header;
}

function gif(width: number, height: number): Buffer {
  const header = Buffer.alloc(13);
  header.write('GIF89a', 0, 'latin1');
  header.writeUInt16LE(width, 6);
  header.writeUInt16LE(height, 8);
  return header;
}

function webpExtended(width: number, height: number): Buffer {
  const header = Buffer.alloc(30);
  header.write('RIFF', 0, 'latin1');
  header.write('WEBPVP8X', 8, 'latin1');
  header.writeUIntLE(width - 1, 24, 3);
  header.writeUIntLE(height - 1, 27, 3);
  return header;
}

/** A JPEG whose frame header comes after an EXIF segment of `exifBytes`, as cameras write them. */
function jpeg(width: number, height: number, exifBytes: number): Buffer {
  const exif = Buffer.alloc(4 + exifBytes);
  exif.writeUInt16BE(0xffe1, 0);
  exif.writeUInt16BE(exifBytes + 2, 2);
  const frame = Buffer.from([0xff, 0xc0, 0x00, 0x11, 0x08, 0, 0, 0, 0, 0x03]);
  frame.writeUInt16BE(height, 5);
  frame.writeUInt16BE(width, 7);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), exif, frame, Buffer.alloc(100)]);
}

describe(dataUriImageSize.name, () => {
  it.each([
    ['png', png(640, 480)],
    ['gif', gif(640, 480)],
    ['webp', webpExtended(640, 480)],
    ['jpeg', jpeg(640, 480, 30_001)],
  ])('should read the size from a %s header', (type, bytes) => {
    expect(dataUriImageSize(dataUri(type, bytes))).toEqual({ width: 640, height: 480 });
  });

  it('should give up on what it cannot read instead of guessing', () => {
    expect(dataUriImageSize('data:image/png;base64,AAAA')).toBeNull();
    expect(dataUriImageSize(dataUri('jpeg', jpeg(640, 480, 10).subarray(0, 20)))).toBeNull();
    expect(dataUriImageSize(dataUri('png', png(0, 480)))).toBeNull();
  });
});

describe(imageTokens.name, () => {
  const url = dataUri('png', png(1024, 1024));

  it('should price an image of known size by its detail', () => {
    expect(imageTokens({ url, detail: 'high' }, ['gpt-4o'])).toBe(765);
    expect(imageTokens({ url, detail: 'low' }, ['gpt-4o'])).toBe(85);
    expect(imageTokens({ url, detail: 'low' }, ['gpt-4o-mini'])).toBe(2833);
  });

  it('should price a URL or a malformed part at the worst case', () => {
    expect(imageTokens({ url: 'https://example.com/cat.png' }, ['gpt-4o'])).toBe(1445);
    expect(imageTokens('not an object', ['gpt-4o'])).toBe(1445);
    expect(imageTokens({ url: 'data:image/png;base64,AAAA' }, ['anthropic'])).toBe(1600);
  });
});
