import { ChildProcess, execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Redis from 'ioredis';
import { Client } from 'pg';
import { freePort } from 'test/support/free-port';

const ROOT = join(__dirname, '..', '..');
const run = promisify(execFile);
const REDIS_BASE = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const BANNER = 'Gateway demo is running';

interface DemoRun {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

/** `npm run demo` after its build step: the compiled demo, with these flags and environment. */
function startDemo(args: string[], env: NodeJS.ProcessEnv): DemoRun {
  const child = spawn(process.execPath, [join(ROOT, 'dist-tools', 'tools', 'bin', 'demo.js'), ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** Resolves once the demo printed its banner's last line; rejects if it exits first. */
async function bannerOf(demo: DemoRun, timeoutMs = 90_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (!demo.output().includes('/console/topups')) {
    if (demo.child.exitCode !== null || Date.now() > deadline) {
      throw new Error(`the demo did not start:\n${demo.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return demo.output();
}

/** The exit code, or a failure if the demo still runs after `timeoutMs`. */
async function exitOf(demo: DemoRun, timeoutMs = 20_000): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`the demo is still running:\n${demo.output()}`)), timeoutMs);
  });
  try {
    return await Promise.race([demo.exited, timeout]);
  } finally {
    clearTimeout(timer);
    demo.child.kill('SIGKILL');
  }
}

/** A Redis db index nobody uses, so the demo's worker never meets this run's queues. */
async function claimRedisDb(): Promise<number> {
  for (let db = 15; db >= 1; db--) {
    const redis = new Redis(`${REDIS_BASE}/${db}`);
    const claimed = await redis.set('gateway:test-run', `demo-${process.pid}`, 'EX', 3600, 'NX');
    const keys = await redis.dbsize();
    await redis.quit();
    if (claimed === 'OK' && keys === 1) {
      return db;
    }
  }
  throw new Error('no free Redis db index for the demo');
}

describe('npm run demo, the front door', () => {
  const postgres = new URL(process.env.DATABASE_URL!);
  const database = `gateway_test_demo_${process.pid}`;
  let env: NodeJS.ProcessEnv;
  let redisDb: number;
  let ports: { api: number; mock: number; alipay: number };
  let first: DemoRun;
  let banner: string;

  beforeAll(async () => {
    await run('npm', ['run', 'build'], { cwd: ROOT });
    await run('npm', ['run', 'build:tools'], { cwd: ROOT });
    redisDb = await claimRedisDb();
    postgres.pathname = `/${database}`;
    env = { ...process.env, NODE_ENV: 'development', DATABASE_URL: postgres.toString() };
    env.REDIS_URL = `${REDIS_BASE}/${redisDb}`;
    // The demo's own choices are under test: its random admin token and its quiet log level.
    delete env.ADMIN_TOKEN;
    delete env.LOG_LEVEL;
    ports = { api: await freePort(), mock: await freePort(), alipay: await freePort() };
    const flags = ['--port', String(ports.api), '--mock-port', String(ports.mock)];
    first = startDemo([...flags, '--fake-alipay-port', String(ports.alipay)], env);
    banner = await bannerOf(first);
  }, 300_000);

  afterAll(async () => {
    first?.child.kill('SIGINT');
    await first?.exited;
    const redis = new Redis(`${REDIS_BASE}/${redisDb}`);
    await redis.flushdb();
    await redis.quit();
    const admin = new Client({
      connectionString: process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await admin.end();
  }, 60_000);

  const keyOf = (text: string) => /API key: +(sk-\S+)/.exec(text)![1];
  const chatThroughFirst = () =>
    fetch(`http://127.0.0.1:${ports.api}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keyOf(banner)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello!' }] }),
    });

  it('should show the banner before any start-up line, and use an admin token of its own', async () => {
    const before = banner.slice(0, banner.indexOf(BANNER));
    // Warnings may come first (a fresh Redis says so); Nest's narration and info lines may not.
    const infoLines = before.split('\n').filter((line) => /"level":(10|20|30)\b/.test(line));
    expect(infoLines).toEqual([]);
    expect(before).not.toMatch(/Mapped \{|dependencies initialized|mock upstream listening/);
    const adminToken = /Admin token: +([0-9a-f]+)/.exec(banner)![1];
    expect(adminToken).toMatch(/^[0-9a-f]{48}$/);
    const models = await fetch(`http://127.0.0.1:${ports.api}/admin/models`, {
      headers: { authorization: `Bearer ${adminToken}` },
    });
    expect(models.status).toBe(200);
    expect((await chatThroughFirst()).status).toBe(200);
  });

  it('should serve the API docs it prints, Swagger UI’s files included (through @fastify/static)', async () => {
    const page = await fetch(`http://127.0.0.1:${ports.api}/docs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const stylesheet = /href="\.?\/?([^"]*swagger-ui\.css)"/.exec(html)![1];

    const css = await fetch(`http://127.0.0.1:${ports.api}/docs/${stylesheet.replace(/^docs\//, '')}`);

    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toMatch(/text\/css/);
  });

  it('should refuse a second demo on the same API port with one clear line and a non-zero exit, and the first keeps serving', async () => {
    const second = startDemo(
      [
        '--port',
        String(ports.api),
        '--mock-port',
        String(await freePort()),
        '--fake-alipay-port',
        String(await freePort()),
      ],
      env,
    );

    expect(await exitOf(second)).not.toBe(0);
    expect(second.output().trim()).toBe(
      `demo failed: port ${ports.api} (API) is already in use: stop what holds it, or choose another with --port N or PORT=N`,
    );
    const answer = await chatThroughFirst();
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ choices: [{ message: { content: 'Hello from the mock upstream.' } }] });
  });

  it('should refuse a taken mock upstream port the same way, naming its flag and variable', async () => {
    const second = startDemo(
      [
        '--port',
        String(await freePort()),
        '--mock-port',
        String(ports.mock),
        '--fake-alipay-port',
        String(await freePort()),
      ],
      env,
    );

    expect(await exitOf(second)).not.toBe(0);
    expect(second.output().trim()).toMatch(
      /^demo failed: port \d+ \(mock upstream\) is already in use: .*--mock-port N or MOCK_UPSTREAM_PORT=N$/,
    );
    expect((await chatThroughFirst()).status).toBe(200);
  });

  it('should exit non-zero with one line when the database is unreachable', async () => {
    const unreachable = { ...env, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/gateway_test_nowhere' };
    const demo = startDemo(
      [
        '--port',
        String(await freePort()),
        '--mock-port',
        String(await freePort()),
        '--fake-alipay-port',
        String(await freePort()),
      ],
      unreachable,
    );

    expect(await exitOf(demo)).toBe(1);
    expect(demo.output().trim()).toMatch(
      /^demo failed: cannot reach Postgres at 127\.0\.0\.1:1 \(DATABASE_URL\): .*ECONNREFUSED/,
    );
  });
});
