import { createServer, Server } from 'node:net';
import { assertPortFree, DemoError, readDemoPorts } from 'tools/demo/demo-options';

describe(readDemoPorts.name, () => {
  it('should take the defaults, then the variables, then the flags', () => {
    expect(readDemoPorts([], {})).toEqual({ api: 3000, mock: 9000, fakeAlipay: 9100 });
    expect(readDemoPorts([], { PORT: '3100', MOCK_UPSTREAM_PORT: '9200', FAKE_ALIPAY_PORT: '9300' })).toEqual({
      api: 3100,
      mock: 9200,
      fakeAlipay: 9300,
    });
    expect(readDemoPorts(['--port', '4000', '--mock-port=4001'], { PORT: '3100' })).toEqual({
      api: 4000,
      mock: 4001,
      fakeAlipay: 9100,
    });
  });

  it('should refuse a value that is not a port, naming where it came from', () => {
    expect(() => readDemoPorts(['--port', 'abc'], {})).toThrow(
      new DemoError('--port must be a port from 1 to 65535, got "abc"'),
    );
    expect(() => readDemoPorts([], { MOCK_UPSTREAM_PORT: '70000' })).toThrow(/MOCK_UPSTREAM_PORT must be a port/);
    expect(() => readDemoPorts(['--port'], {})).toThrow(/--port must be a port/);
  });

  it('should refuse an unknown option and list the known ones', () => {
    expect(() => readDemoPorts(['--api-port', '1'], {})).toThrow(/unknown option --api-port; the demo takes --port/);
  });
});

describe(assertPortFree.name, () => {
  let holder: Server;

  afterEach(() => new Promise<void>((resolve) => (holder ? holder.close(() => resolve()) : resolve())));

  it('should refuse a port already listened on, even on the loopback address only, with the flag and variable to change it', async () => {
    holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as { port: number };

    await expect(assertPortFree(port, 'mock')).rejects.toThrow(
      new DemoError(
        `port ${port} (mock upstream) is already in use: stop what holds it, or choose another with --mock-port N or MOCK_UPSTREAM_PORT=N`,
      ),
    );
  });

  it('should let a free port through and leave it free', async () => {
    holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const { port } = holder.address() as { port: number };
    await new Promise<void>((resolve) => holder.close(() => resolve()));

    await expect(assertPortFree(port, 'api')).resolves.toBeUndefined();
    await expect(assertPortFree(port, 'api')).resolves.toBeUndefined();
    holder = createServer();
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
  });
});
