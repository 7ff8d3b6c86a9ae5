import { once } from 'node:events';
import { createServer, request as httpRequest, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { DeadlineExceeded, RequestLifetime } from 'src/modules/chat-completions/request-lifetime';

/** A real server whose every request gets a lifetime; the test decides when to answer. */
async function serve(maxRequestMs: number): Promise<{
  server: Server;
  port: number;
  next: () => Promise<{ lifetime: RequestLifetime; res: ServerResponse }>;
}> {
  const waiting: ((value: { lifetime: RequestLifetime; res: ServerResponse }) => void)[] = [];
  const arrived: { lifetime: RequestLifetime; res: ServerResponse }[] = [];
  const server = createServer((_req, res) => {
    const entry = { lifetime: new RequestLifetime(res, maxRequestMs), res };
    const waiter = waiting.shift();
    if (waiter) {
      waiter(entry);
    } else {
      arrived.push(entry);
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const next = () =>
    arrived.length > 0
      ? Promise.resolve(arrived.shift()!)
      : new Promise<(typeof arrived)[number]>((r) => waiting.push(r));
  return { server, port: (server.address() as AddressInfo).port, next };
}

function send(port: number): ReturnType<typeof httpRequest> {
  const client = httpRequest({ port, host: '127.0.0.1', method: 'POST', path: '/', agent: false });
  client.on('error', () => undefined);
  client.end('{}');
  return client;
}

describe('RequestLifetime', () => {
  let server: Server | undefined;

  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = undefined;
  });

  it('aborts with client_closed_request when the client hangs up before the answer', async () => {
    const served = await serve(60_000);
    server = served.server;
    const client = send(served.port);
    const { lifetime } = await served.next();
    const aborted = new Promise<void>((resolve) => lifetime.signal.addEventListener('abort', resolve));
    client.destroy();
    await aborted;
    expect(lifetime.signal.reason).toBeInstanceOf(ApiError);
    expect((lifetime.signal.reason as ApiError).kind).toBe(ErrorKind.ClientClosedRequest);
    lifetime.end();
  });

  it('does not abort when the answer was sent and the connection closes afterwards', async () => {
    const served = await serve(60_000);
    server = served.server;
    const client = send(served.port);
    const { lifetime, res } = await served.next();
    const closed = once(res, 'close');
    const answered = once(client, 'response');
    res.end('ok');
    const [response] = (await answered) as [NodeJS.ReadableStream];
    response.resume();
    await closed;
    expect(lifetime.signal.aborted).toBe(false);
    lifetime.end();
  });

  it('once ended, no longer listens: a later hang-up aborts nothing', async () => {
    const served = await serve(60_000);
    server = served.server;
    const client = send(served.port);
    const { lifetime, res } = await served.next();
    const listeners = res.listenerCount('close');
    lifetime.end();
    expect(res.listenerCount('close')).toBe(listeners - 1);
    const closed = once(res, 'close');
    client.destroy();
    await closed;
    expect(lifetime.signal.aborted).toBe(false);
  });

  it('aborts with the deadline when the request outlives it', async () => {
    const served = await serve(30);
    server = served.server;
    send(served.port);
    const { lifetime } = await served.next();
    await new Promise<void>((resolve) => lifetime.signal.addEventListener('abort', resolve));
    expect(lifetime.signal.reason).toBeInstanceOf(DeadlineExceeded);
    lifetime.end();
  });
});
