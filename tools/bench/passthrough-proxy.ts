import { Agent, createServer, request, Server } from 'node:http';
import { AddressInfo } from 'node:net';

export interface PassthroughProxy {
  url: string;
  close(): Promise<void>;
}

/**
 * The floor for any Node gateway on this machine: a bare `node:http` reverse proxy that forwards
 * every request to one upstream over keep-alive connections and pipes both bodies through
 * untouched — no parsing, no auth, no accounting. What the gateway costs beyond this is the price
 * of its own per-request work; what this costs beyond a direct call is the price of one more hop.
 */
export function startPassthroughProxy(target: string, port = 0, host = '127.0.0.1'): Promise<PassthroughProxy> {
  const upstream = new URL(target);
  // Unbounded sockets: a pool cap here would queue requests and measure the cap, not Node.
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 1024 });
  const server = createServer((req, res) => {
    const forward = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
        agent,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => {
      if (res.headersSent) {
        res.destroy();
      } else {
        res.writeHead(502).end();
      }
    });
    // A client that goes away mid-stream must not leave the upstream request running.
    res.on('close', () => {
      if (!res.writableFinished) {
        forward.destroy();
      }
    });
    req.pipe(forward);
  });
  // Longer than any idle gap between benchmark requests, so the client's keep-alive sockets survive.
  server.keepAliveTimeout = 65_000;
  return listen(server, port, host).then((address) => ({
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      }),
  }));
}

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}
