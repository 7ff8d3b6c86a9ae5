import { once } from 'node:events';
import { AddressInfo, createServer } from 'node:net';

/** A port free now, for a server whose own URL must be configured before it listens. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
