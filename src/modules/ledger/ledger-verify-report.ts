/**
 * `ledger:verify --record` leaves its result in Redis under this key (no expiry; the next run replaces
 * it), where every worker's /metrics reads it: the verification runs as a scheduled job that exits,
 * so it cannot be scraped itself, and no Pushgateway is needed.
 */
export const LEDGER_VERIFY_REPORT_KEY = 'gw:ledger-verify:last';

export interface LedgerVerifyReport {
  /** When the run finished, epoch ms. */
  finishedAtMs: number;
  /** Balances, top-up orders and chain deposits that disagree with the ledger. */
  mismatches: number;
}

/** The stored report, or null when absent or unreadable (then the metrics say "never ran"). */
export function parseLedgerVerifyReport(stored: string | null): LedgerVerifyReport | null {
  if (stored === null) {
    return null;
  }
  try {
    const report = JSON.parse(stored) as Partial<LedgerVerifyReport>;
    const valid = Number.isSafeInteger(report.finishedAtMs) && Number.isSafeInteger(report.mismatches);
    return valid ? (report as LedgerVerifyReport) : null;
  } catch {
    return null;
  }
}
