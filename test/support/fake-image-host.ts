import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';

/** A 1×1 transparent PNG. */
export const TINY_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

const HUGE_CHUNK = Buffer.alloc(64 * 1024, 0x42);

/**
 * A local image host for the image-fetch tests: `/cat.png` (a PNG), `/page.html` (not an image),
 * `/huge.png` (an endless PNG, streamed until the reader hangs up, counting what it sent),
 * `/slow.png` (headers, then silence), `/redirect?to=<url>` (302 there), `/loop` (redirects to itself).
 */
export class FakeImageHost {
  /** Paths requested, in order. */
  readonly requests: string[] = [];
  /** Bytes of `/huge.png` written before the reader hung up. */
  hugeBytesSent = 0;
  /** Set when a `/huge.png` reader hung up. */
  hugeClosed: Promise<void>;
  private markHugeClosed!: () => void;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {
    this.hugeClosed = new Promise((resolve) => (this.markHugeClosed = resolve));
  }

  static async start(host = '127.0.0.1'): Promise<FakeImageHost> {
    // eslint-disable-next-line prefer-const
    let fake: FakeImageHost;
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://fake');
      fake.requests.push(url.pathname);
      switch (url.pathname) {
        case '/cat.png':
          return res.writeHead(200, { 'content-type': 'image/png' }).end(TINY_PNG);
        case '/page.html':
          return res.writeHead(200, { 'content-type': 'text/html' }).end('<html>not an image</html>');
        case '/redirect':
          return res.writeHead(302, { location: url.searchParams.get('to') ?? '/' }).end();
        case '/loop':
          return res.writeHead(302, { location: '/loop' }).end();
        case '/slow.png':
          res.writeHead(200, { 'content-type': 'image/png' });
          return void res.flushHeaders();
        case '/huge.png':
          return fake.streamHuge(res);
        default:
          return res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    const { port } = server.address() as AddressInfo;
    fake = new FakeImageHost(server, `http://${host}:${port}`);
    return fake;
  }

  private streamHuge(res: import('node:http').ServerResponse): void {
    res.writeHead(200, { 'content-type': 'image/png' });
    res.on('close', () => this.markHugeClosed());
    const pump = () => {
      while (!res.destroyed && this.hugeBytesSent < 1024 * 1024 * 1024) {
        this.hugeBytesSent += HUGE_CHUNK.length;
        if (!res.write(HUGE_CHUNK)) {
          return void res.once('drain', pump);
        }
      }
    };
    pump();
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
