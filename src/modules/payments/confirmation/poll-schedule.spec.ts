import { delayUntilPoll, pollTime } from 'src/modules/payments/confirmation/poll-schedule';

const MINUTE = 60_000;
const DEFAULT = [30_000, MINUTE, 2 * MINUTE, 5 * MINUTE];

describe('poll schedule', () => {
  it('should poll at 30 s, 1 min, 2 min, then every 5 min', () => {
    expect([0, 1, 2, 3, 4, 5].map((attempt) => pollTime(attempt, DEFAULT))).toEqual([
      30_000,
      MINUTE,
      2 * MINUTE,
      7 * MINUTE,
      12 * MINUTE,
      17 * MINUTE,
    ]);
  });

  it('should repeat a single delay', () => {
    expect([0, 1, 2].map((attempt) => pollTime(attempt, [500]))).toEqual([500, 1000, 1500]);
  });

  it('should never schedule past the expiry, where the last query runs', () => {
    const createdAt = new Date(0);
    const expiresAt = new Date(10 * MINUTE);
    expect(delayUntilPoll(3, DEFAULT, createdAt, expiresAt, 3 * MINUTE)).toBe(4 * MINUTE);
    expect(delayUntilPoll(4, DEFAULT, createdAt, expiresAt, 7 * MINUTE)).toBe(3 * MINUTE);
    expect(delayUntilPoll(5, DEFAULT, createdAt, expiresAt, 11 * MINUTE)).toBe(0);
  });
});
