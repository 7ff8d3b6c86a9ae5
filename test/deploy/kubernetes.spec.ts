import { PATH_METADATA } from '@nestjs/common/constants';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { HealthController } from 'src/modules/health/health.controller';
import { WORKER_HEALTH_PATH } from 'src/modules/health/worker-metrics.server';
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
  const config = () => find(production(), 'ConfigMap', 'gateway-config').data as Record<string, string>;
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

  it("should probe the worker's /health on WORKER_METRICS_PORT", () => {
    const worker = container(find(production(), 'Deployment', 'gateway-worker'));
    expect(portNamed(worker, 'metrics')).toBe(Number(config().WORKER_METRICS_PORT));
    expect(worker.livenessProbe.httpGet).toEqual({ path: WORKER_HEALTH_PATH, port: 'metrics' });
    expect(worker.readinessProbe.httpGet).toEqual({ path: WORKER_HEALTH_PATH, port: 'metrics' });
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
});
