import { createServer } from 'node:net';

/** A refusal the demo prints as one line before exiting non-zero. */
export class DemoError extends Error {}

/** One port the demo listens on: its flag, its variable, and the default. */
interface PortSetting {
  name: string;
  flag: string;
  variable: string;
  fallback: number;
}

export const DEMO_PORTS = {
  api: { name: 'API', flag: '--port', variable: 'PORT', fallback: 3000 },
  mock: { name: 'mock upstream', flag: '--mock-port', variable: 'MOCK_UPSTREAM_PORT', fallback: 9000 },
  fakeAlipay: { name: 'fake Alipay', flag: '--fake-alipay-port', variable: 'FAKE_ALIPAY_PORT', fallback: 9100 },
} as const satisfies Record<string, PortSetting>;

export type DemoPortName = keyof typeof DEMO_PORTS;
export type DemoPorts = Record<DemoPortName, number>;

/**
 * The demo's ports: each from its flag (`--port 3100` or `--port=3100`), else its variable, else its
 * default. A value that is not a port, or a flag the demo does not know, is a DemoError.
 */
export function readDemoPorts(args: readonly string[], env: NodeJS.ProcessEnv): DemoPorts {
  const settings = Object.entries(DEMO_PORTS) as [DemoPortName, PortSetting][];
  const known = new Set(settings.map(([, setting]) => setting.flag));
  const flags = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i].split(/=(.*)/s, 2);
    if (!known.has(flag)) {
      throw new DemoError(`unknown option ${flag}; the demo takes ${[...known].join(', ')} (each followed by a port)`);
    }
    flags.set(flag, inline ?? args[++i] ?? '');
  }
  const ports = {} as DemoPorts;
  for (const [key, setting] of settings) {
    const fromFlag = flags.get(setting.flag);
    const raw = fromFlag ?? env[setting.variable];
    ports[key] =
      raw === undefined ? setting.fallback : parsePort(raw, fromFlag === undefined ? setting.variable : setting.flag);
  }
  return ports;
}

function parsePort(raw: string, source: string): number {
  const port = Number(raw);
  if (raw.trim() === '' || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new DemoError(`${source} must be a port from 1 to 65535, got "${raw}"`);
  }
  return port;
}

/**
 * Refuses a port something already listens on (on any address, as the API binds 0.0.0.0), so the demo
 * never starts beside, or seeds, a gateway it did not start.
 */
export function assertPortFree(port: number, name: DemoPortName): Promise<void> {
  const { flag, variable } = DEMO_PORTS[name];
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => {
      const taken = error.code === 'EADDRINUSE' || error.code === 'EACCES';
      reject(
        taken
          ? new DemoError(
              `port ${port} (${DEMO_PORTS[name].name}) is ${error.code === 'EACCES' ? 'not allowed' : 'already in use'}: ` +
                `stop what holds it, or choose another with ${flag} N or ${variable}=N`,
            )
          : error,
      );
    });
    probe.listen({ port, host: '0.0.0.0', exclusive: true }, () => probe.close(() => resolve()));
  });
}
