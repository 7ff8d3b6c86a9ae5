import { once } from 'node:events';
import { ClientRequest, createServer, request as httpRequest, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { DeadlineExceeded, RequestLifetime } from 'src/modules/relay/admission/request-lifetime';

interface Served {
  client: ClientRequest;
  res: ServerResponse;
  lifetime: RequestLifetime;
}

const servers: Server[] = [];

/** One request from a real client to a real server, whose response gets a lifetime; the test answers it. */
async function oneRequest(maxRequestMs: number): Promise<Served> {
  let arrived!: (entry: Omit<Served, 'client'>) => void;
  const served = new Promise<Omit<Served, 'client'>>((resolve) => (arrived = resolve));
  const server = createServer((_req, res) => arrived({ res, lifetime: new RequestLifetime(res, maxRequestMs) }));
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const client = httpRequest({ port, host: '127.0.0.1', method: 'POST', path: '/', agent: false });
  client.on('error', () => undefined);
  client.end('{}');
  return { client, ...(await served) };
}

const abortOf = (lifetime: RequestLifetime) =>
  new Promise<void>((resolve) => lifetime.signal.addEventListener('abort', resolve));

describe('RequestLifetime', () => {
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('aborts with client_closed_request when the client hangs up before the answer', async () => {
    const { client, lifetime } = await oneRequest(60_000);
    const aborted = abortOf(lifetime);
    client.destroy();
    await aborted;
    expect(lifetime.signal.reason).toBeInstanceOf(ApiError);
    expect((lifetime.signal.reason as ApiError).kind).toBe(ErrorKind.ClientClosedRequest);
    lifetime.end();
  });

  it('does not abort when the answer was sent and the connection closes afterwards', async () => {
    const { client, res, lifetime } = await oneRequest(60_000);
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
    const { client, res, lifetime } = await oneRequest(60_000);
    const listeners = res.listenerCount('close');
    lifetime.end();
    expect(res.listenerCount('close')).toBe(listeners - 1);
    const closed = once(res, 'close');
    client.destroy();
    await closed;
    expect(lifetime.signal.aborted).toBe(false);
  });

  it('aborts with the deadline when the request outlives it', async () => {
    const { lifetime } = await oneRequest(30);
    await abortOf(lifetime);
    expect(lifetime.signal.reason).toBeInstanceOf(DeadlineExceeded);
    lifetime.end();
  });
});
