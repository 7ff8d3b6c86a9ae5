const WINDOW_MS = 60_000;
/** Addresses tracked at once; past it the oldest window is forgotten (that address starts afresh). */
const MAX_ADDRESSES = 10_000;

interface Window {
  used: number;
  resetsAt: number;
}

/**
 * How many database lookups of keys this process does not know each client address may cause per
 * minute. A lookup is counted before it runs (so a burst of concurrent made-up keys cannot overrun
 * it) and given back when the key turns out to exist, so only unknown keys use it up. In memory: a
 * cached valid key never reaches it, and each process bounds the queries it sends itself.
 */
export class LookupBudget {
  private readonly windows = new Map<string, Window>();

  constructor(private readonly perMinute: number) {}

  /** Counts one lookup for `address`; null when allowed, else the milliseconds until its window resets. */
  take(address: string, now = Date.now()): number | null {
    let window = this.windows.get(address);
    if (!window || window.resetsAt <= now) {
      this.windows.delete(address);
      while (this.windows.size >= MAX_ADDRESSES) {
        this.windows.delete(this.windows.keys().next().value as string);
      }
      window = { used: 0, resetsAt: now + WINDOW_MS };
      this.windows.set(address, window);
    }
    if (window.used >= this.perMinute) {
      return window.resetsAt - now;
    }
    window.used++;
    return null;
  }

  /** Gives a lookup back (the key existed). A window that was reset meanwhile is left alone. */
  refund(address: string): void {
    const window = this.windows.get(address);
    if (window && window.used > 0) {
      window.used--;
    }
  }
}
