import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { metricsRegistry } from 'src/common/metrics/metrics';
import { exportedMetricNames, metricNamesIn } from 'test/deploy/promql-metrics';

const root = join(__dirname, '..', '..');
const deploy = join(root, 'deploy');
/** Series Prometheus writes itself for every target it scrapes. */
const PROMETHEUS_SERIES = new Set(['up']);

/** GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9 _-]/g, '')
    .replace(/ /g, '-');

interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

interface Panel {
  title: string;
  type: string;
  targets?: { expr: string }[];
}

describe(metricNamesIn.name, () => {
  it('should find the metrics and skip functions, keywords, labels, ranges and numbers', () => {
    expect(
      metricNamesIn(
        'histogram_quantile(0.95, sum by (le, channel) (rate(a_seconds_bucket{job="x",le=~"1e+3"}[5m]))) > 2 * b_total offset 5m and on (pod) c',
      ).sort(),
    ).toEqual(['a_seconds_bucket', 'b_total', 'c']);
    expect(metricNamesIn('time() - max(x_timestamp_seconds) > 26 * 3600')).toEqual(['x_timestamp_seconds']);
  });
});

describe('deploy/prometheus/alerts.yml', () => {
  const file = parse(readFileSync(join(deploy, 'prometheus', 'alerts.yml'), 'utf8')) as {
    groups: { name: string; rules: AlertRule[] }[];
  };
  const rules = file.groups.flatMap((group) => group.rules);
  const exported = exportedMetricNames();

  it('should have the alerts an operator of the gateway needs', () => {
    expect(rules.map((rule) => rule.alert)).toEqual(
      expect.arrayContaining([
        'GatewaySettlementLagging',
        'GatewayChannelBreakerOpen',
        'GatewayLedgerVerificationFailed',
        'GatewayRedisPersistenceOff',
      ]),
    );
    for (const rule of rules) {
      expect(rule).toEqual(expect.objectContaining({ alert: expect.any(String), expr: expect.any(String) }));
      expect(rule.annotations?.summary).toEqual(expect.any(String));
    }
  });

  it.each(rules.map((rule) => [rule.alert, rule.expr]))('%s should read only metrics the code exports', (_, expr) => {
    const names = metricNamesIn(expr);
    expect(names.length).toBeGreaterThan(0);
    expect(names.filter((name) => !exported.has(name) && !PROMETHEUS_SERIES.has(name))).toEqual([]);
  });

  it('should alert on availability, errors, shedding, lost usage, watchers, partitions, keys and Redis', () => {
    expect(rules.map((rule) => rule.alert)).toEqual(
      expect.arrayContaining([
        'GatewayApiDown',
        'GatewayCompletionErrorsHigh',
        'GatewayOverloadShedding',
        'GatewayRateLimiterRedisErrors',
        'GatewayUsageRecordsLost',
        'GatewayChainWatcherStale',
        'GatewayPartitionMaintenanceStale',
        'GatewayPartitionsRunningOut',
        'GatewayChannelKeysUnreadable',
        'GatewayWorkerGaugesStale',
        'GatewayRedisEvictionPolicy',
      ]),
    );
    expect(new Set(rules.map((rule) => rule.alert)).size).toBe(rules.length);
    for (const rule of rules) {
      expect(['page', 'warn']).toContain(rule.labels?.severity);
    }
  });

  it('should read `up` only of the jobs scrape.yml defines', () => {
    const scrape = parse(readFileSync(join(deploy, 'prometheus', 'scrape.yml'), 'utf8')) as {
      scrape_configs: { job_name: string }[];
    };
    const jobs = scrape.scrape_configs.map((config) => config.job_name);
    const named = rules.flatMap((rule) =>
      [...rule.expr.matchAll(/\bup\{job=~?"([^"]+)"\}/g)].flatMap((match) => match[1].split('|')),
    );
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter((job) => !jobs.includes(job))).toEqual([]);
  });

  describe('docs/runbooks.md', () => {
    const runbooks = readFileSync(join(root, 'docs', 'runbooks.md'), 'utf8');
    /** Each `## ` section by its anchor. */
    const sections = new Map(
      runbooks
        .split(/^## /m)
        .slice(1)
        .map((section) => [anchorOf(section.split('\n')[0]), section]),
    );

    it.each(rules.map((rule) => [rule.alert, rule]))(
      '%s should link its own section, which says what it means, what to check and what to do',
      (alert, rule) => {
        expect(rule.annotations?.runbook_url).toBe(`docs/runbooks.md#${anchorOf(alert)}`);
        const section = sections.get(anchorOf(alert));
        expect(section).toBeDefined();
        for (const part of ['**What it means.**', '**What to check.**', '**What to do.**']) {
          expect(section).toContain(part);
        }
      },
    );
  });

  describe('alerts.test.yml', () => {
    const tests = (
      parse(readFileSync(join(deploy, 'prometheus', 'alerts.test.yml'), 'utf8')) as {
        tests: { alert_rule_test: { alertname: string; exp_alerts?: unknown[] }[] }[];
      }
    ).tests.flatMap((test) => test.alert_rule_test);

    it.each(rules.map((rule) => [rule.alert]))(
      '%s should have a case where it fires and one where it does not',
      (alert) => {
        const cases = tests.filter((test) => test.alertname === alert);
        expect(cases.some((test) => (test.exp_alerts ?? []).length > 0)).toBe(true);
        expect(cases.some((test) => (test.exp_alerts ?? []).length === 0)).toBe(true);
      },
    );
  });

  it('should export the lost usage records at 0 from the start, so the first one shows as an increase', async () => {
    const text = await metricsRegistry.getSingleMetricAsString('gateway_usage_record_failures_total');
    expect(text).toContain('gateway_usage_record_failures_total{outcome="lost"} 0');
  });

  it('should page on settlement lag over 60 s and on a breaker not closed for 5 minutes', () => {
    const byName = new Map(rules.map((rule) => [rule.alert, rule]));
    expect(byName.get('GatewaySettlementLagging')!.expr).toMatch(/gateway_settlement_oldest_unsettled_seconds\) > 60$/);
    expect(byName.get('GatewayChannelBreakerOpen')!.expr).toContain('min_over_time(gateway_channel_breaker_state[5m])');
  });
});

describe('deploy/grafana/gateway.json', () => {
  const dashboard = JSON.parse(readFileSync(join(deploy, 'grafana', 'gateway.json'), 'utf8')) as {
    title: string;
    uid: string;
    panels: Panel[];
  };
  const exported = exportedMetricNames();
  const targets = dashboard.panels.flatMap((panel) =>
    (panel.targets ?? []).map((target) => [panel.title, target.expr]),
  );

  it('should be an importable dashboard with panels on the API and the worker', () => {
    expect(dashboard).toEqual(expect.objectContaining({ title: expect.any(String), uid: 'llm-gateway' }));
    expect(targets.length).toBeGreaterThan(20);
    const read = new Set(targets.flatMap(([, expr]) => metricNamesIn(expr)));
    for (const name of [
      'gateway_completions_total',
      'gateway_settlement_oldest_unsettled_seconds',
      'gateway_worker_job_failures_total',
    ]) {
      expect(read).toContain(name);
    }
  });

  it.each(targets)('"%s" should query only metrics the code exports: %s', (_, expr) => {
    const names = metricNamesIn(expr);
    expect(names.length).toBeGreaterThan(0);
    expect(names.filter((name) => !exported.has(name))).toEqual([]);
  });
});
