import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { HttpResult, TestGateway } from 'test/support/gateway';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

export interface ExpectedError {
  type?: string;
  /** `undefined` accepts any string or null. */
  code?: string | null;
  /** `undefined` accepts any string or null. */
  param?: string | null;
}

/**
 * The answer is `status` with exactly the error object (docs/errors.md). Status and body are compared together,
 * so a failure shows what the server actually said.
 */
export function expectError(response: HttpResult, status: number, expected: ExpectedError = {}): void {
  const actual = response.body?.error ?? {};
  const stringOrNull = (value: unknown) => (typeof value === 'string' || value === null ? value : '<string or null>');
  expect({ status: response.status, body: response.body }).toEqual({
    status,
    body: {
      error: {
        message: expect.any(String),
        type: expected.type ?? 'invalid_request_error',
        param: expected.param === undefined ? stringOrNull(actual.param) : expected.param,
        code: expected.code === undefined ? stringOrNull(actual.code) : expected.code,
      },
    },
  });
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
}

/** Calls `probe` until `done` accepts its result or `timeoutMs` passes; returns the last result. */
export async function eventually<T>(
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs: number,
  intervalMs = 20,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value) || Date.now() >= deadline) {
      return value;
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export async function openDb(): Promise<Client> {
  const db = new Client({ connectionString: process.env.DATABASE_URL });
  await db.connect();
  return db;
}

/** What a suite that also reads the database runs against: one gateway and a connection to its Postgres. */
export interface GatewayWorld {
  gateway: TestGateway;
  db: Client;
}

/**
 * Starts a gateway (with `env`) and opens the database before the suite's tests, and closes both after
 * them. Call it in the suite's describe block: the fields are set once the hook it registers has run.
 */
export function useGatewayWorld(env: Record<string, string> = {}): GatewayWorld {
  const world = {} as GatewayWorld;
  beforeAll(async () => {
    world.gateway = await TestGateway.start(env);
    world.db = await openDb();
  });
  afterAll(async () => {
    await world.db.end();
    await world.gateway.close();
  });
  return world;
}

export function uniqueEmail(prefix = 'user'): string {
  return `${prefix}-${randomUUID()}@example.com`;
}

export const PASSWORD = 'correct horse battery staple';

export interface Registered {
  token: string;
  account: {
    id: string;
    email: string;
    balance: string;
    referralCode: string;
    emailVerified: boolean;
    createdAt: string;
  };
}

/** Registers through the console and returns the session. */
export async function register(
  gateway: TestGateway,
  email = uniqueEmail(),
  extra: Record<string, unknown> = {},
): Promise<Registered> {
  const response = await gateway.call('POST', '/console/auth/register', {
    body: { email, password: PASSWORD, ...extra },
  });
  expect({ status: response.status, text: response.text }).toEqual({ status: 201, text: expect.any(String) });
  return { token: response.body.accessToken, account: response.body.account };
}
