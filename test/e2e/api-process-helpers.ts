import { ChildProcess } from 'node:child_process';
import { Agent, request as httpRequest } from 'node:http';
import { spawnEntrypoint, stopEntrypoint, untilPrinted } from 'test/support/entrypoint-process';
import { freePort } from 'tools/bench/child-processes';

/** The real API entrypoint (src/main.ts, compiled) in a process of its own, on this run's Postgres and Redis. */
export interface ApiProcess {
  child: ChildProcess;
  url: string;
  /** Its stdout and stderr so far, for failure messages. */
  output(): string;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
}

export async function startApiProcess(env: Record<string, string>): Promise<ApiProcess> {
  const port = await freePort();
  const api = spawnEntrypoint('main', { LOG_LEVEL: 'info', PORT: String(port), ...env });
  await untilPrinted(api, 'api listening');
  return { child: api.child, url: `http://127.0.0.1:${port}`, output: api.output, exited: api.exited };
}

/** SIGKILLs the process if it still runs, and waits for it to be gone. */
export async function killApiProcess(api: ApiProcess | null): Promise<void> {
  await stopEntrypoint(api?.child);
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: any;
}

/** One HTTP exchange; a refused or reset connection resolves as its error code instead of an answer. */
export function exchange(
  url: string,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: unknown; agent?: Agent },
): Promise<Answer | { error: string }> {
  return new Promise((resolve) => {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    const headers = { ...options.headers, ...(payload ? { 'content-type': 'application/json' } : {}) };
    const request = httpRequest(
      url + options.path,
      { method: options.method ?? 'GET', headers, agent: options.agent ?? false },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          let body: any = text;
          try {
            body = JSON.parse(text);
          } catch {
            // event streams stay text
          }
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text, body });
        });
        response.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
      },
    );
    request.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    request.end(payload);
  });
}

/** A streaming completion whose first bytes are reported at once, while the rest keeps arriving. */
export function startStream(
  url: string,
  key: string,
  body: Record<string, unknown>,
): { firstBytes: Promise<void>; done: Promise<Answer | { error: string }> } {
  let onFirst: () => void = () => undefined;
  const firstBytes = new Promise<void>((resolve) => (onFirst = resolve));
  const done = new Promise<Answer | { error: string }>((resolve) => {
    const request = httpRequest(
      `${url}/v1/chat/completions`,
      { method: 'POST', agent: false, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
          onFirst();
        });
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, text, body: text }),
        );
        response.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
      },
    );
    request.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    request.end(JSON.stringify(body));
  });
  return { firstBytes, done };
}
