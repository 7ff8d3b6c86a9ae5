/**
 * The API's longest event-loop delay in the measured window, from its own /metrics: prom-client's
 * default `nodejs_eventloop_lag_max_seconds` is the maximum of a `monitorEventLoopDelay` histogram that
 * prom-client resets at every scrape. So a scrape as the window opens discards the warm-up's delays,
 * and one as it closes reads the window's. Nothing else scrapes the bench's API.
 *
 * The histogram times a 10 ms timer: an idle loop reads ~10 ms, and a reading of R ms above that
 * means the loop was blocked once for between R − 10 and R ms (a shorter block between two ticks may
 * not show at all).
 */
export class EventLoopMaxProbe {
  private opened: Promise<number | null> | undefined;
  private closed: Promise<number | null> | undefined;

  constructor(private readonly apiOrigin: string) {}

  open(): void {
    this.opened = scrapeLoopMaxMs(this.apiOrigin);
  }

  close(): void {
    this.closed = scrapeLoopMaxMs(this.apiOrigin);
  }

  /** The window's maximum in ms; null unless both scrapes were made and answered. */
  async windowMaxMs(): Promise<number | null> {
    const [opened, closed] = await Promise.all([this.opened, this.closed]);
    return opened === null || opened === undefined ? null : (closed ?? null);
  }
}

const LOOP_MAX = /^nodejs_eventloop_lag_max_seconds(?:\{[^}]*\})? (\S+)$/m;
const SCRAPE_TIMEOUT_MS = 5_000;

/** The maximum since the previous scrape, in ms (and, by scraping, the start of the next interval). */
async function scrapeLoopMaxMs(origin: string): Promise<number | null> {
  try {
    const response = await fetch(`${origin}/metrics`, { signal: AbortSignal.timeout(SCRAPE_TIMEOUT_MS) });
    const match = LOOP_MAX.exec(await response.text());
    const seconds = match ? Number(match[1]) : NaN;
    return response.ok && Number.isFinite(seconds) ? Math.round(seconds * 10_000) / 10 : null;
  } catch {
    return null;
  }
}
