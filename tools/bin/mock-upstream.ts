import { startMockUpstream } from 'tools/mock-upstream/mock-upstream.server';

function readFlag(args: string[], name: string): string | undefined {
  const inline = args.find((arg) => arg.startsWith(`${name}=`));
  if (inline !== undefined) {
    return inline.slice(name.length + 1);
  }
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : undefined;
}

function readInteger(args: string[], name: string, fallback: number): number {
  const raw = readFlag(args, name);
  if (raw === undefined) {
    return fallback;
  }
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isInteger(value) || value < 0) {
    throw new Error(`${name} expects a non-negative integer, got "${raw}"`);
  }
  return value;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const upstream = await startMockUpstream({
    port: readInteger(args, '--port', 9000),
    host: readFlag(args, '--host') ?? '127.0.0.1',
    latencyMs: readInteger(args, '--latency-ms', 0),
    chunkDelayMs: readInteger(args, '--chunk-delay-ms', 0),
    recordRequests: readInteger(args, '--record-requests', 1000),
  });
  process.stdout.write(`mock upstream listening on ${upstream.url}\n`);
  const shutdown = (): void => {
    upstream.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

main().catch((error: unknown) => {
  process.stderr.write(`mock upstream failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
