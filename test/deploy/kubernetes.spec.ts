import { PATH_METADATA } from '@nestjs/common/constants';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from 'src/config/app-config';
import { HealthController } from 'src/modules/health/health.controller';
import { WORKER_HEALTH_PATH, WORKER_READY_PATH } from 'src/modules/health/worker-metrics.server';
import { parseAllDocuments } from 'yaml';

const root = join(__dirname, '..', '..');
const k8s = join(root, 'deploy', 'k8s');
const KUSTOMIZATIONS = ['base', 'migrate', 'overlays/production', 'overlays/production-migrate'];

/** How src/main.ts stops after SHUTDOWN_GRACE_MS: cut streams record (2 s), usage records become durable (≤ 10 s), connections close (1 s). */
const API_STOP_AFTER_GRACE_SECONDS = 2 + 10 + 1;
/** Left to the kubelet beyond the sum, so the SIGKILL never lands mid-shutdown. */
const MARGIN_SECONDS = 5;

type Doc = Record<string, any>;

/** `kubectl kustomize <dir>`, run without a shell, parsed into its documents. */
async function render(dir: string): Promise<Doc[]> {
  const { stdout } = await promisify(execFile)('kubectl', ['kustomize', join(k8s, dir)], { maxBuffer: 8 << 20 });
  return parseAllDocuments(stdout).map((document) => {
    expect(document.errors).toEqual([]);
    return document.toJS() as Doc;
  });
}

/** The kubernetes-models class of a document's apiVersion and kind (`apps/v1` Deployment: apps/v1/Deployment). */
function modelOf(doc: Doc): new (data: Doc) => { validate(): void } {
  const path = `kubernetes-models/${doc.apiVersion}/${doc.kind}`;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const module = require(path) as Record<string, new (data: Doc) => { validate(): void }>;
    return module[doc.kind];
  } catch {
    throw new Error(`unknown kind ${doc.apiVersion} ${doc.kind}: no schema to validate it against`);
  }
}

const routeOf = (method: keyof HealthController) =>
  `/${Reflect.getMetadata(PATH_METADATA, HealthController)}/${Reflect.getMetadata(PATH_METADATA, HealthController.prototype[method])}`;

describe('deploy/k8s', () => {
  const rendered = new Map<string, Doc[]>();

  beforeAll(async () => {
    for (const dir of KUSTOMIZATIONS) {
      rendered.set(dir, await render(dir));
    }
  }, 30_000);

  const production = () => rendered.get('overlays/production')!;
  const find = (docs: Doc[], kind: string, name: string) => {
    const doc = docs.find((d) => d.kind === kind && d.metadata.name === name);
    expect(doc).toBeDefined();
    return doc!;
  };
  /** The generated ConfigMap (gateway-config-<hash>) of a render. */
  const configMapOf = (docs: Doc[]) => {
    const maps = docs.filter((d) => d.kind === 'ConfigMap' && /^gateway-config-[a-z0-9]+$/.test(d.metadata.name));
    expect(maps).toHaveLength(1);
    return maps[0];
  };
  const config = () => configMapOf(production()).data as Record<string, string>;
  /** The production settings as the processes read them (secrets left out: none is needed here). */
  const appConfig = () => loadConfig({ ...config(), NODE_ENV: 'test' });
  /** Every pod template of a render, with the kind and name of what owns it. */
  const podsOf = (docs: Doc[]) =>
    docs
      .filter((d) => ['Deployment', 'Job', 'CronJob'].includes(d.kind))
      .map((d) => ({
        owner: `${d.kind}/${d.metadata.name}`,
        template: (d.kind === 'CronJob' ? d.spec.jobTemplate.spec.template : d.spec.template) as Doc,
      }));
  const selects = (selector: Record<string, string>, labels: Record<string, string>) =>
    Object.entries(selector).every(([key, value]) => labels[key] === value);
  const container = (deployment: Doc) => deployment.spec.template.spec.containers[0] as Doc;
  const portNamed = (c: Doc, name: string) => (c.ports as Doc[]).find((port) => port.name === name)?.containerPort;

  it.each(KUSTOMIZATIONS)('%s should render into documents valid against the Kubernetes schemas', (dir) => {
    const docs = rendered.get(dir)!;
    expect(docs.length).toBeGreaterThan(0);
    for (const doc of docs) {
      const Model = modelOf(doc);
      expect(() => new Model(doc).validate()).not.toThrow();
    }
  });

  it('should refuse a manifest that breaks the schema (the validation bites)', () => {
    const worker = find(production(), 'Deployment', 'gateway-worker');
    const broken = { ...worker, spec: { ...worker.spec, replicas: 'three' } };
    expect(() => new (modelOf(broken))(broken).validate()).toThrow();
    expect(() => modelOf({ apiVersion: 'example.com/v1', kind: 'Unknown' })).toThrow('unknown kind');
    for (const [kind, name, spec] of [
      ['NetworkPolicy', 'gateway-egress', { policyTypes: 'Egress' }],
      ['Ingress', 'gateway-api', { rules: [{ http: { paths: [{ path: '/' }] } }] }],
      ['PodDisruptionBudget', 'gateway-api', { maxUnavailable: true }],
    ] as const) {
      const doc = find(production(), kind, name);
      const bad = { ...doc, spec: { ...doc.spec, ...spec } };
      expect(() => new (modelOf(doc))(doc).validate()).not.toThrow();
      expect(() => new (modelOf(bad))(bad).validate()).toThrow();
    }
  });

  it('should hold the API and the worker apart, an autoscaler on the API, Services and disruption budgets', () => {
    const docs = production();
    const api = find(docs, 'Deployment', 'gateway-api');
    const worker = find(docs, 'Deployment', 'gateway-worker');
    expect(container(api).command).toEqual(expect.arrayContaining(['dist/main.js']));
    expect(container(worker).command).toEqual(['node', 'dist/worker.js']);
    const hpa = find(docs, 'HorizontalPodAutoscaler', 'gateway-api');
    expect(hpa.apiVersion).toBe('autoscaling/v2');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'gateway-api' });
    expect(api.spec.replicas).toBeUndefined();
    for (const deployment of [api, worker]) {
      const labels = deployment.spec.template.metadata.labels as Record<string, string>;
      const selects = (selector: Record<string, string>) =>
        Object.entries(selector).every(([key, value]) => labels[key] === value);
      expect(docs.some((d) => d.kind === 'Service' && selects(d.spec.selector))).toBe(true);
      expect(docs.some((d) => d.kind === 'PodDisruptionBudget' && selects(d.spec.selector.matchLabels))).toBe(true);
    }
  });

  it("should probe the API's real liveness and readiness routes on its real port", () => {
    const api = container(find(production(), 'Deployment', 'gateway-api'));
    expect(portNamed(api, 'http')).toBe(Number(config().PORT));
    expect(api.livenessProbe.httpGet).toEqual({ path: routeOf('getLiveness'), port: 'http' });
    expect(api.readinessProbe.httpGet).toEqual({ path: routeOf('getReadiness'), port: 'http' });
    expect(routeOf('getReadiness')).toBe('/health/ready');
  });

  it("should probe the worker's liveness and readiness on WORKER_METRICS_PORT", () => {
    const worker = container(find(production(), 'Deployment', 'gateway-worker'));
    expect(portNamed(worker, 'metrics')).toBe(Number(config().WORKER_METRICS_PORT));
    expect(worker.livenessProbe.httpGet).toEqual({ path: WORKER_HEALTH_PATH, port: 'metrics' });
    expect(worker.readinessProbe.httpGet).toEqual({ path: WORKER_READY_PATH, port: 'metrics' });
  });

  it('should give the API time for preStop, SHUTDOWN_GRACE_MS and the rest of its shutdown before the SIGKILL', () => {
    const pod = find(production(), 'Deployment', 'gateway-api').spec.template.spec;
    const [sleep, seconds] = pod.containers[0].lifecycle.preStop.exec.command as string[];
    expect(sleep).toBe('sleep');
    const preStopSeconds = Number(seconds);
    expect(preStopSeconds).toBeGreaterThanOrEqual(3);
    const graceSeconds = Number(config().SHUTDOWN_GRACE_MS) / 1000;
    expect(graceSeconds).toBeGreaterThan(0);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(
      preStopSeconds + graceSeconds + API_STOP_AFTER_GRACE_SECONDS + MARGIN_SECONDS,
    );
  });

  it('should reference secrets without committing any, and set requests and memory limits everywhere', () => {
    for (const docs of rendered.values()) {
      expect(docs.filter((doc) => doc.kind === 'Secret')).toEqual([]);
      for (const doc of docs.filter((d) => ['Deployment', 'Job', 'CronJob'].includes(d.kind))) {
        const pod = doc.kind === 'CronJob' ? doc.spec.jobTemplate.spec.template.spec : doc.spec.template.spec;
        for (const c of pod.containers as Doc[]) {
          expect(c.env ?? []).toEqual([]);
          expect(c.envFrom).toContainEqual({ secretRef: { name: 'gateway-secrets' } });
          expect(c.resources.requests).toEqual({ cpu: expect.any(String), memory: expect.any(String) });
          expect(c.resources.limits.memory).toEqual(expect.any(String));
        }
      }
    }
  });

  it('should migrate with the same command as `npm run migration:run`, in the same image as the release', () => {
    const job = find(rendered.get('overlays/production-migrate')!, 'Job', 'gateway-migrate');
    const script = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
      .scripts['migration:run'];
    expect(script).toBe('typeorm migration:run -d dist/database/data-source.js');
    expect(job.spec.template.spec.containers[0].command).toEqual([
      'node',
      'node_modules/typeorm/cli.js',
      'migration:run',
      '-d',
      'dist/database/data-source.js',
    ]);
    expect(existsSync(join(root, 'node_modules', 'typeorm', 'cli.js'))).toBe(true);
    const images = (docs: Doc[]) =>
      new Set(
        docs.flatMap(
          (doc) =>
            JSON.stringify(doc)
              .match(/"image":"[^"]+"/g)
              ?.map((image) => image.slice(9, -1)) ?? [],
        ),
      );
    const release = images(production());
    expect(release.size).toBe(1);
    expect([...release][0]).toMatch(/^[^:]+\/llm-gateway:[\w.-]+$/);
    expect(images(rendered.get('overlays/production-migrate')!)).toEqual(release);
  });

  it('should drain the API long enough for its longest completion, so a rollout cuts no stream', () => {
    const settings = appConfig();
    expect(settings.shutdownGraceMs).toBeGreaterThanOrEqual(settings.relay.maxRequestMs);
  });

  it('should run every pod without privileges, under the runtime seccomp profile, without a service-account token', () => {
    for (const docs of rendered.values()) {
      for (const { owner, template } of podsOf(docs)) {
        const pod = template.spec as Doc;
        expect({ owner, automount: pod.automountServiceAccountToken }).toEqual({ owner, automount: false });
        expect(pod.securityContext).toEqual(
          expect.objectContaining({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } }),
        );
        for (const c of pod.containers as Doc[]) {
          expect(c.securityContext).toEqual({
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ['ALL'] },
          });
        }
      }
    }
  });

  it('should spread the API and the worker over zones and nodes, and budget disruptions as a share', () => {
    const docs = production();
    for (const name of ['gateway-api', 'gateway-worker']) {
      const template = find(docs, 'Deployment', name).spec.template as Doc;
      const spread = template.spec.topologySpreadConstraints as Doc[];
      expect(spread.map((constraint) => constraint.topologyKey).sort()).toEqual([
        'kubernetes.io/hostname',
        'topology.kubernetes.io/zone',
      ]);
      for (const constraint of spread) {
        expect(selects(constraint.labelSelector.matchLabels, template.metadata.labels)).toBe(true);
      }
      const budget = find(docs, 'PodDisruptionBudget', name).spec;
      expect(budget.minAvailable).toBeUndefined();
      expect(budget.maxUnavailable).toMatch(/^\d+%$/);
    }
  });

  it('should name the ConfigMap after its content, so a changed setting rolls the pods that read it', () => {
    const base = configMapOf(rendered.get('base')!);
    const overlay = configMapOf(production());
    // The production overlay adds TRUST_PROXY: other content, other name.
    expect(overlay.data).not.toEqual(base.data);
    expect(overlay.metadata.name).not.toBe(base.metadata.name);
    for (const name of ['gateway-api', 'gateway-worker']) {
      expect(container(find(production(), 'Deployment', name)).envFrom).toContainEqual({
        configMapRef: { name: overlay.metadata.name },
      });
    }
  });

  describe('network policies', () => {
    const policies = () => production().filter((d) => d.kind === 'NetworkPolicy');
    const policiesOf = (labels: Record<string, string>, type: 'Ingress' | 'Egress') =>
      policies().filter(
        (policy) =>
          selects(policy.spec.podSelector.matchLabels ?? {}, labels) &&
          (policy.spec.policyTypes as string[]).includes(type),
      );
    /** Each rule's sources (namespace names) and ports, over every Ingress policy selecting these labels. */
    const admitted = (labels: Record<string, string>) =>
      policiesOf(labels, 'Ingress').flatMap((policy) =>
        ((policy.spec.ingress ?? []) as Doc[]).map((rule) => ({
          from: ((rule.from ?? []) as Doc[]).map(
            (peer) => peer.namespaceSelector.matchLabels['kubernetes.io/metadata.name'],
          ),
          ports: ((rule.ports ?? []) as Doc[]).map((port) => port.port),
        })),
      );

    it("should close every pod of the gateway by default, and only the gateway's", () => {
      for (const docs of [production(), rendered.get('overlays/production-migrate')!]) {
        for (const { owner, template } of podsOf(docs)) {
          const types = new Set(
            [...policiesOf(template.metadata.labels, 'Ingress'), ...policiesOf(template.metadata.labels, 'Egress')]
              .filter((policy) => !policy.spec.ingress && !policy.spec.egress)
              .flatMap((policy) => policy.spec.policyTypes as string[]),
          );
          expect({ owner, types: [...types].sort() }).toEqual({ owner, types: ['Egress', 'Ingress'] });
        }
      }
      for (const policy of policies()) {
        expect(policy.spec.podSelector.matchLabels).toEqual(
          expect.objectContaining({ 'app.kubernetes.io/name': 'llm-gateway' }),
        );
      }
    });

    it("should admit the API's port from the ingress controller and Prometheus, the worker's metrics from Prometheus only", () => {
      const api = find(production(), 'Deployment', 'gateway-api').spec.template.metadata.labels;
      const worker = find(production(), 'Deployment', 'gateway-worker').spec.template.metadata.labels;
      expect(admitted(api)).toEqual([{ from: ['ingress-nginx', 'monitoring'], ports: ['http'] }]);
      expect(admitted(worker)).toEqual([{ from: ['monitoring'], ports: ['metrics'] }]);
    });

    it('should let the pods out to DNS, Postgres, Redis and HTTPS only', () => {
      const worker = find(production(), 'Deployment', 'gateway-worker').spec.template.metadata.labels;
      const ports = policiesOf(worker, 'Egress').flatMap((policy) =>
        ((policy.spec.egress ?? []) as Doc[]).flatMap((rule) =>
          (rule.ports as Doc[]).map((port) => port.port as number),
        ),
      );
      expect(ports).toEqual(expect.arrayContaining([53, 5432, 6379, 443]));
      expect(ports.every((port) => [53, 5432, 6379, 443, 465, 587].includes(port))).toBe(true);
    });
  });

  it('should route the Ingress to the API unbuffered, with timeouts past MAX_REQUEST_MS, and trust its proxies', () => {
    const ingress = find(production(), 'Ingress', 'gateway-api');
    const annotations = ingress.metadata.annotations as Record<string, string>;
    const settings = appConfig();
    expect(annotations['nginx.ingress.kubernetes.io/proxy-buffering']).toBe('off');
    for (const timeout of ['proxy-read-timeout', 'proxy-send-timeout']) {
      expect(Number(annotations[`nginx.ingress.kubernetes.io/${timeout}`])).toBeGreaterThan(
        settings.relay.maxRequestMs / 1000,
      );
    }
    expect(annotations['nginx.ingress.kubernetes.io/proxy-body-size']).toBe(`${settings.bodyLimitBytes >> 20}m`);
    const backend = ingress.spec.rules[0].http.paths[0].backend.service;
    const service = find(production(), 'Service', backend.name);
    expect(service.spec.ports).toContainEqual(expect.objectContaining({ name: backend.port.name }));
    expect(settings.trustedProxies.length).toBeGreaterThan(0);
  });
});
