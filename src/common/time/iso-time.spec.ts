import { isoTime } from 'src/common/time/iso-time';

describe('isoTime', () => {
  it('writes what Date writes, across milliseconds, seconds, days and years', () => {
    const starts = [0, 999, 1_000, Date.UTC(2026, 11, 31, 23, 59, 59, 990), Date.UTC(1999, 1, 28), Date.now()];
    for (const start of starts) {
      for (let ms = start; ms < start + 2_500; ms += 7) {
        expect(isoTime(ms)).toBe(new Date(ms).toISOString());
      }
    }
  });

  it('gives the right text when times go back and forth between seconds', () => {
    const times = [1_700_000_000_123, 1_700_000_001_004, 1_700_000_000_999, 1_700_000_001_050, 5];
    for (const ms of times) {
      expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    }
  });

  it('leaves what it does not cache to Date: fractions, negative times, years past 9999', () => {
    for (const ms of [1_700_000_000_123.6, -1, -86_400_001, 253_402_300_800_000, 8.64e15]) {
      expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    }
  });
});
