/*
 * What an image in a prompt costs, by OpenAI's published formula for its vision models: `detail: low`
 * is 85 tokens; otherwise the image is scaled to fit 2048×2048, then so that its shortest side is at
 * most 768, and costs 85 + 170 per 512-pixel tile. When the size is unknown (an http URL, a header we
 * cannot read) the hold takes the largest: 8 tiles.
 */
const BASE_TOKENS = 85;
const TILE_TOKENS = 170;
const TILE = 512;
const FIT = 2048;
const SHORT_SIDE = 768;
export const WORST_IMAGE_TOKENS = BASE_TOKENS + TILE_TOKENS * 8;

// Reading a header never decodes more than this, and a JPEG's segments are followed at most this often.
const HEAD_BYTES = 32;
const MAX_JPEG_SEGMENTS = 64;

export interface ImageSize {
  width: number;
  height: number;
}

/** Tokens of an image part's `image_url` object; any malformed value costs the worst case. */
export function imageTokens(imageUrl: unknown): number {
  const { url, detail } = (typeof imageUrl === 'object' && imageUrl !== null ? imageUrl : {}) as Record<
    string,
    unknown
  >;
  if (detail === 'low') {
    return BASE_TOKENS;
  }
  const size = typeof url === 'string' && url.startsWith('data:') ? dataUriImageSize(url) : null;
  return size ? tiledImageTokens(size) : WORST_IMAGE_TOKENS;
}

export function tiledImageTokens({ width, height }: ImageSize): number {
  const fit = Math.min(1, FIT / Math.max(width, height));
  const scale = fit * Math.min(1, SHORT_SIDE / (Math.min(width, height) * fit));
  // Sides rounded up, so no rounding of the provider's can make a tile we did not count.
  const tiles = Math.ceil(Math.ceil(width * scale) / TILE) * Math.ceil(Math.ceil(height * scale) / TILE);
  return Math.min(BASE_TOKENS + TILE_TOKENS * tiles, WORST_IMAGE_TOKENS);
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
