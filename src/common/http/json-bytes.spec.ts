import { hasControlByte } from 'src/common/http/json-bytes';

describe(hasControlByte.name, () => {
  // One backing buffer, so that views start at every offset a word view must align to.
  const backing = Buffer.alloc(96, 'x');

  it.each([0, 1, 2, 3])('should find a control byte at any place of a view starting %i bytes into a word', (offset) => {
    for (let length = 0; length <= 40; length++) {
      const view = backing.subarray(offset, offset + length);
      expect(hasControlByte(view)).toBe(false);
      for (let at = 0; at < length; at++) {
        for (const control of [0x00, 0x09, 0x0a, 0x1f]) {
          view[at] = control;
          expect(hasControlByte(view)).toBe(true);
          view[at] = 0x78;
        }
      }
    }
  });

  it('should not take a space, a top-bit byte or any other byte from 0x20 on for a control character', () => {
    const everyOther = Buffer.from(Array.from({ length: 256 - 0x20 }, (_, index) => 0x20 + index));

    expect(hasControlByte(everyOther)).toBe(false);
    expect(hasControlByte(Buffer.from('Ωραία — 東京 😀 prose, and an image: data:image/png;base64,QUJD'))).toBe(false);
    expect(hasControlByte(Buffer.from([0x80, 0x80, 0x80, 0x80, 0xff, 0x20, 0x20, 0x20, 0x1f]))).toBe(true);
  });
});
