import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { exportedMetricNames, metricNamesIn } from 'test/deploy/promql-metrics';

const deploy = join(__dirname, '..', '..', 'deploy');

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
    expect(names.filter((name) => !exported.has(name))).toEqual([]);
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
