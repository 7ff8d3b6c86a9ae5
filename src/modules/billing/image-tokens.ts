import { ImageFamily, ImageSize, maxImageTokens } from 'src/modules/billing/image-families';

// How each upstream bills an image, and why the hold takes the largest: see image-families.ts.

// Reading a header never decodes more than this, and a JPEG's segments are followed at most this often.
const HEAD_BYTES = 32;
const MAX_JPEG_SEGMENTS = 64;

/**
 * Tokens of an image part's `image_url` object at the most these formulas bill for it: its size read
 * from a data URI's header, or unknown (the formula's worst case) for a URL or anything malformed.
 */
export function imageTokens(imageUrl: unknown, families: readonly ImageFamily[]): number {
  const { url, detail } = (typeof imageUrl === 'object' && imageUrl !== null ? imageUrl : {}) as Record<
    string,
    unknown
  >;
  const size = typeof url === 'string' && url.startsWith('data:') ? dataUriImageSize(url) : null;
  return maxImageTokens(families, size, detail === 'low');
}

/** Width and height from the header of a base64 PNG, GIF, WebP or JPEG data URI; null when unreadable. */
export function dataUriImageSize(uri: string): ImageSize | null {
  const comma = uri.indexOf(',');
  if (comma < 0 || !uri.slice(0, comma).endsWith(';base64')) {
    return null;
  }
  const bytes = (offset: number, length: number) => base64Bytes(uri, comma + 1, offset, length);
  const head = bytes(0, HEAD_BYTES);
  const size = pngSize(head) ?? gifSize(head) ?? webpSize(head) ?? jpegSize(bytes);
  return size && size.width > 0 && size.height > 0 ? size : null;
}

/** `length` decoded bytes at `offset` of the base64 text starting at `start`, decoding only those. */
function base64Bytes(text: string, start: number, offset: number, length: number): Buffer {
  const first = Math.floor(offset / 3) * 4;
  const last = Math.ceil((offset + length) / 3) * 4;
  const decoded = Buffer.from(text.slice(start + first, start + last), 'base64');
  return decoded.subarray(offset % 3, (offset % 3) + length);
}

function pngSize(head: Buffer): ImageSize | null {
  const signature =
    head.length >= 24 && head.readUInt32BE(0) === 0x89504e47 && head.toString('latin1', 12, 16) === 'IHDR';
  return signature ? { width: head.readUInt32BE(16), height: head.readUInt32BE(20) } : null;
}

function gifSize(head: Buffer): ImageSize | null {
  const signature = head.length >= 10 && head.toString('latin1', 0, 4) === 'GIF8';
  return signature ? { width: head.readUInt16LE(6), height: head.readUInt16LE(8) } : null;
}

function webpSize(head: Buffer): ImageSize | null {
  if (head.length < 30 || head.toString('latin1', 0, 4) !== 'RIFF' || head.toString('latin1', 8, 12) !== 'WEBP') {
    return null;
  }
  const chunk = head.toString('latin1', 12, 16);
  if (chunk === 'VP8X') {
    return { width: head.readUIntLE(24, 3) + 1, height: head.readUIntLE(27, 3) + 1 };
  }
  if (chunk === 'VP8L') {
    const bits = head.readUInt32LE(21);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === 'VP8 ') {
    return { width: head.readUInt16LE(26) & 0x3fff, height: head.readUInt16LE(28) & 0x3fff };
  }
  return null;
}

// Start-of-frame markers carry the size; C4 (DHT), C8 (JPG) and CC (DAC) are not frames.
const JPEG_FRAMES = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

/** Follows the segment lengths from SOI to the first frame header, decoding only the few bytes of each. */
function jpegSize(bytes: (offset: number, length: number) => Buffer): ImageSize | null {
  const soi = bytes(0, 2);
  if (soi.length < 2 || soi[0] !== 0xff || soi[1] !== 0xd8) {
    return null;
  }
  let offset = 2;
  for (let segment = 0; segment < MAX_JPEG_SEGMENTS; segment++) {
    const header = bytes(offset, 9);
    if (header.length < 4 || header[0] !== 0xff) {
      return null;
    }
    if (JPEG_FRAMES.has(header[1])) {
      return header.length < 9 ? null : { width: header.readUInt16BE(7), height: header.readUInt16BE(5) };
    }
    offset += 2 + header.readUInt16BE(2);
  }
  return null;
}
