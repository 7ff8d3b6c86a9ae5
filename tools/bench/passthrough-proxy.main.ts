import { startMeteredFloorProxy } from 'tools/bench/metered-floor-proxy';
import { startPassthroughProxy } from 'tools/bench/passthrough-proxy';

/**
 * `node dist-tools/tools/bench/passthrough-proxy.main.js --target http://127.0.0.1:9000 --port 9100`: the
 * passthrough proxy as its own process, so like the gateway it has an event loop of its own
 * instead of sharing the load generator's. With `--metered-redis <url>` it is the metered floor instead
 * (metered-floor-proxy.ts).
 */
async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const flag = (name: string) => {
    const index = args.indexOf(name);
    return index >= 0 ? args[index + 1] : undefined;
  };
  const target = flag('--target');
  if (!target) {
    throw new Error('--target <upstream origin> is required');
  }
  const meteredRedis = flag('--metered-redis');
  const port = Number(flag('--port') ?? 0);
  const proxy = meteredRedis
    ? await startMeteredFloorProxy(target, meteredRedis, port)
    : await startPassthroughProxy(target, port);
  process.stdout.write(`passthrough proxy listening on ${proxy.url} -> ${target}\n`);
  const shutdown = (): void => {
    proxy.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

main().catch((error: unknown) => {
  process.stderr.write(`passthrough proxy failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
