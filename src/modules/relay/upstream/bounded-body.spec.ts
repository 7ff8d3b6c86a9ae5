import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { request } from 'undici';
import { readJsonBounded } from 'src/modules/relay/upstream/bounded-body';

/** A local server answering JSON of the requested size, with or without a Content-Length. */
describe('readJsonBounded', () => {
  let server: Server;
  let base: string;

  beforeAll(async () => {
    server = createServer((req, res) => {
      const url = new URL(req.url!, 'http://local');
      const text = JSON.stringify({ pad: 'x'.repeat(Number(url.searchParams.get('size'))) });
      if (url.searchParams.get('chunked')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(text.slice(0, 10));
        res.end(text.slice(10));
      } else {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const read = async (size: number, chunked: boolean, limit: number) => {
    const response = await request(`${base}/?size=${size}${chunked ? '&chunked=1' : ''}`);
    return readJsonBounded(response.body, limit, response.headers['content-length']);
  };

  it.each([false, true])('should parse an answer within the limit (chunked: %s)', async (chunked) => {
    expect(await read(100, chunked, 1_000)).toEqual({ pad: 'x'.repeat(100) });
  });

  it.each([false, true])('should refuse an answer over the limit (chunked: %s)', async (chunked) => {
    expect(await read(5_000, chunked, 1_000)).toBeUndefined();
  });
});
