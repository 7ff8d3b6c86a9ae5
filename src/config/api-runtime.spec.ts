import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { API_NODE_FLAGS } from 'src/config/api-runtime';

const root = join(__dirname, '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

// A process holding ~40 MB live, as the API does at rest, then serving ten 1 MB "image requests", one
// per event-loop turn, each leaving ~3 MB of garbage outside the heap: the body as received, its
// concatenation, and the image as a string.
const IMAGE_REQUESTS = `
  const live = Array.from({ length: 5 }, () => new Array(1 << 20).fill(1.5));
  globalThis.gc();
  console.log('requests start');
  let served = 0;
  function serve() {
    const received = Buffer.allocUnsafeSlow(1 << 20).fill(65);
    const body = Buffer.concat([received, Buffer.from('x')]);
    if (body.toString('latin1').length !== (1 << 20) + 1) throw new Error('unreachable');
    if (++served < 10) setImmediate(serve);
    else console.log('requests end', live.length);
  }
  serve();
`;

/**
 * Full collections V8 starts while the requests above run under `flags`: an incremental one by its
 * start, since on a busy machine it may end after them, and an atomic one by its line.
 */
function fullCollectionsDuringRequests(flags: string[]): number {
  const traces = ['--trace-gc', '--trace-incremental-marking'];
  const run = spawnSync(process.execPath, [...flags, '--expose-gc', ...traces, '-e', IMAGE_REQUESTS], {
    encoding: 'utf8',
  });
  expect(run.status).toBe(0);
  const during = run.stdout.slice(run.stdout.indexOf('requests start'), run.stdout.indexOf('requests end'));
  expect(during).not.toBe('');
  const started = (line: string) =>
    line.includes('[IncrementalMarking] Start marking') ||
    (line.includes('Mark-Compact') && !line.includes('since start of marking'));
  return during.split('\n').filter(started).length;
}

/** Threads of a node process started with `flags`, counted once it is up (Linux's /proc). */
function threadsUnder(flags: string[]): number {
  const count = `setTimeout(() => console.log(require('fs').readdirSync('/proc/self/task').length), 50)`;
  const run = spawnSync(process.execPath, [...flags, '-e', count], { encoding: 'utf8' });
  expect(run.status).toBe(0);
  return Number(run.stdout.trim());
}

describe('API_NODE_FLAGS', () => {
  it('should be the flags of every production start of the API', () => {
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;

    expect(scripts['start:prod']).toBe(`node ${API_NODE_FLAGS.join(' ')} dist/main.js`);
    expect(read('docker/Dockerfile')).toContain(
      `CMD [${['node', ...API_NODE_FLAGS, 'dist/main.js'].map((part) => JSON.stringify(part)).join(', ')}]`,
    );
    // A YAML flow list, however Prettier wraps it: compared without whitespace or a trailing comma.
    const flowList = (text: string) => text.replace(/\s+/g, '').replace(/,\]/g, ']');
    const yamlCommand = `command:[${['node', ...API_NODE_FLAGS, 'dist/main.js'].map((part) => `'${part}'`).join(',')}]`;
    expect(flowList(read('docker/compose.yaml'))).toContain(yamlCommand);
    expect(flowList(read('deploy/k8s/base/api.yaml'))).toContain(yamlCommand);
  });

  it('should let large bodies come and go without a full collection, which 20 % growth alone runs', () => {
    const withoutFloor = API_NODE_FLAGS.filter((flag) => !flag.startsWith('--initial-old-space-size'));

    expect(fullCollectionsDuringRequests(API_NODE_FLAGS)).toBe(0);
    expect(fullCollectionsDuringRequests(withoutFloor)).toBeGreaterThan(0);
  });

  it('should leave V8 one background thread of its default four, whose buffers would stay resident', () => {
    const defaultPool = API_NODE_FLAGS.filter((flag) => !flag.startsWith('--v8-pool-size'));

    expect(threadsUnder(defaultPool) - threadsUnder(API_NODE_FLAGS)).toBe(3);
  });
});
