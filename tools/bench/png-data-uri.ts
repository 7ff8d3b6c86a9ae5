import { crc32, deflateSync } from 'node:zlib';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const RGB = 2;
const BYTES_PER_PIXEL = 3;

/**
 * A real PNG (`width` × `height`, 8-bit RGB, a deterministic pattern) as a base64 data URI. Its pixel
 * data is stored uncompressed, so the URI is ~4/3 × 3 × width × height characters: 512 × 512 makes
 * the ~1 MB image of the image scenario. The gateway reads the size from the IHDR chunk to estimate
 * the image's tokens, so the header must be right; the rest is a valid image any decoder would show.
 */
export function pngDataUri(width: number, height: number): string {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, RGB, 0, 0, 0], 8); // bit depth, colour type, compression, filter, interlace
  const rowBytes = 1 + width * BYTES_PER_PIXEL; // each row starts with its filter type, 0: none
  const pixels = Buffer.alloc(rowBytes * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const at = y * rowBytes + 1 + x * BYTES_PER_PIXEL;
      pixels.set([Math.floor((x * 255) / width), Math.floor((y * 255) / height), (x ^ y) & 0xff], at);
    }
  }
  const png = Buffer.concat([
    SIGNATURE,
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(pixels, { level: 0 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
  return `data:image/png;base64,${png.toString('base64')}`;
}

/** Length, type, data, and the CRC of type and data. */
function chunk(type: string, data: Buffer): Buffer {
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}
