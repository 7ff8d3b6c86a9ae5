import { workerScrapeRegistry } from 'src/common/metrics/worker-metrics';

/** PromQL's words that are not metric names: keywords, aggregation modifiers and operators. */
const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
]);

/**
 * The metric names a PromQL expression reads: identifiers that are not a function or aggregation
 * (followed by `(`), not a keyword, not inside a label matcher `{…}`, a grouping `by (…)` or a
 * range `[…]`, and not in a string.
 */
export function metricNamesIn(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, '');
  const names = new Set<string>();
  for (const match of stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const after = stripped.slice(match.index + match[0].length).trimStart();
    const isNumberSuffix = match.index > 0 && /[0-9.]/.test(stripped[match.index - 1]);
    if (!after.startsWith('(') && !KEYWORDS.has(match[0]) && !isNumberSuffix) {
      names.add(match[0]);
    }
  }
  return [...names];
}

/** Every series name the API and the worker export: counters as named, histograms with their suffixes. */
export function exportedMetricNames(): Set<string> {
  const names = new Set<string>();
  for (const metric of workerScrapeRegistry.getMetricsAsArray()) {
    const { name, type } = metric as unknown as { name: string; type: string };
    names.add(name);
    if (type === 'histogram') {
      ['_bucket', '_sum', '_count'].forEach((suffix) => names.add(name + suffix));
    }
  }
  return names;
}
