/**
 * When poll `attempt` (0-based) of a pending order runs, in milliseconds after the order's creation:
 * the delays name the first polls' times, and the last delay repeats. With [30 s, 1 min, 2 min, 5 min]:
 * 30 s, 1 min, 2 min, then every 5 minutes (7, 12, 17 min, …).
 */
export function pollTime(attempt: number, delaysMs: number[]): number {
  const fixed = delaysMs.length - 1;
  if (fixed === 0) {
    return delaysMs[0] * (attempt + 1);
  }
  if (attempt < fixed) {
    return delaysMs[attempt];
  }
  return delaysMs[fixed - 1] + (attempt - fixed + 1) * delaysMs[fixed];
}

/**
 * How long from `now` until poll `attempt` of an order created at `createdAt`: never past its expiry,
 * where one last query decides between paid and closed.
 */
export function delayUntilPoll(
  attempt: number,
  delaysMs: number[],
  createdAt: Date,
  expiresAt: Date,
  now: number,
): number {
  const at = Math.min(createdAt.getTime() + pollTime(attempt, delaysMs), expiresAt.getTime());
  return Math.max(0, at - now);
}
