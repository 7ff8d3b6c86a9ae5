/** A cell of a CSV table: written as its text, null and undefined as an empty cell. */
export type CsvCell = string | number | null | undefined;

export const CSV_CONTENT_TYPE = 'text/csv; charset=utf-8';

/**
 * An RFC 4180 table: a header row, CRLF after every record, and a field quoted (its quotes doubled)
 * only when it holds a comma, a quote, CR or LF.
 */
export function toCsv(header: string[], rows: CsvCell[][]): string {
  return [header, ...rows].map((row) => row.map(csvField).join(',') + '\r\n').join('');
}

function csvField(cell: CsvCell): string {
  const text = cell === null || cell === undefined ? '' : String(cell);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * A cell a spreadsheet will show as text, never run as a formula: one that begins with =, +, -, @,
 * a tab or CR gets a leading apostrophe (OWASP's CSV injection advice). For files meant for
 * spreadsheets; the console's CSV keeps its numbers as they are.
 */
export function spreadsheetSafe(cell: CsvCell): CsvCell {
  return typeof cell === 'string' && /^[=+\-@\t\r]/.test(cell) ? `'${cell}` : cell;
}

/**
 * Whether an Accept header prefers CSV to JSON: text/csv is acceptable (q > 0) and neither
 * application/json nor a wildcard is preferred over it. Without an Accept header, JSON.
 */
export function prefersCsv(accept: string | undefined): boolean {
  if (!accept) {
    return false;
  }
  const quality = new Map<string, number>();
  for (const range of accept.split(',')) {
    const [type, ...params] = range.trim().toLowerCase().split(';');
    const q = params.map((param) => /^\s*q=([\d.]+)\s*$/.exec(param)?.[1]).find((value) => value !== undefined);
    quality.set(type.trim(), q === undefined ? 1 : Number(q));
  }
  const csv = quality.get('text/csv') ?? 0;
  const json = Math.max(quality.get('application/json') ?? 0, quality.get('application/*') ?? 0);
  return csv > 0 && csv >= json;
}
