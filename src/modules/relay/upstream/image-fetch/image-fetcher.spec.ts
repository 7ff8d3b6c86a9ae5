import { FakeImageHost, TINY_PNG } from 'test/support/fake-image-host';
import { fetchImages, ImageFetchLimits, ImageRefused } from 'src/modules/relay/upstream/image-fetch/image-fetcher';
import { isPrivateAddress } from 'src/modules/relay/upstream/image-fetch/address-policy';

const LIMITS: ImageFetchLimits = { maxBytes: 1024 * 1024, timeoutMs: 2_000, allowPrivate: true, allowHttp: true };

describe('fetchImages against a local image host', () => {
  let host: FakeImageHost;
  beforeEach(async () => {
    host = await FakeImageHost.start();
  });
  afterEach(() => host.close());

  const fetch = (urls: string[], limits = LIMITS, refuses?: (address: string) => boolean) =>
    fetchImages(urls, limits, new AbortController().signal, refuses);
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => {
        throw new Error('fetched');
      },
      (error: Error) => {
        expect(error).toBeInstanceOf(ImageRefused);
        return error.message;
      },
    );

  it('should inline a PNG as base64 with its media type, once per distinct URL', async () => {
    const url = `${host.url}/cat.png`;
    const images = await fetch([url, url]);
    expect(images.get(url)).toEqual({ mimeType: 'image/png', data: TINY_PNG.toString('base64') });
    expect(host.requests).toEqual(['/cat.png']);
  });

  it('should refuse what is not an image', async () => {
    expect(await refusal(fetch([`${host.url}/page.html`]))).toMatch(/not an image/);
  });

  it('should stop reading a body at the byte limit, not after it', async () => {
    expect(await refusal(fetch([`${host.url}/huge.png`]))).toMatch(/larger than 1048576 bytes/);
    await host.hugeClosed;
    // What the server managed to write before the hang-up: the limit and the sockets' buffers, far below 1 GB.
    expect(host.hugeBytesSent).toBeLessThan(16 * 1024 * 1024);
  });

  it('should give up at the deadline', async () => {
    expect(await refusal(fetch([`${host.url}/slow.png`], { ...LIMITS, timeoutMs: 200 }))).toMatch(/longer than 200 ms/);
  });

  it('should refuse a private address without connecting to it', async () => {
    const strict = { ...LIMITS, allowPrivate: false };
    expect(await refusal(fetch([`${host.url}/cat.png`], strict))).toMatch(/private/);
    expect(await refusal(fetch([`http://localhost:${new URL(host.url).port}/cat.png`], strict))).toMatch(/private/);
    expect(await refusal(fetch([`http://[::ffff:127.0.0.1]:${new URL(host.url).port}/cat.png`], strict))).toMatch(
      /private/,
    );
    expect(host.requests).toEqual([]);
  });

  it('should check every redirect hop: a redirect to a refused address is not followed', async () => {
    // 127.0.0.1 stands for a public host here; 127.0.0.2 (the same machine) for the private one.
    const refuses = (address: string) => address !== '127.0.0.1' && isPrivateAddress(address);
    const target = `http://127.0.0.2:${new URL(host.url).port}/cat.png`;
    const url = `${host.url}/redirect?to=${encodeURIComponent(target)}`;
    expect(await refusal(fetch([url], LIMITS, refuses))).toMatch(/private/);
    expect(host.requests).toEqual(['/redirect']);
  });

  it('should follow a few redirects and refuse more', async () => {
    const url = `${host.url}/redirect?to=${encodeURIComponent('/cat.png')}`;
    expect((await fetch([url])).get(url)?.mimeType).toBe('image/png');
    expect(await refusal(fetch([`${host.url}/loop`]))).toMatch(/redirects more than 3 times/);
    expect(host.requests.filter((path) => path === '/loop')).toHaveLength(4);
  });

  it('should refuse http unless allowed, and other schemes always', async () => {
    expect(await refusal(fetch([`${host.url}/cat.png`], { ...LIMITS, allowHttp: false }))).toMatch(/only https/);
    const url = `${host.url}/redirect?to=${encodeURIComponent('file:///etc/passwd')}`;
    expect(await refusal(fetch([url]))).toMatch(/only http\(s\)/);
  });

  it('should share one byte budget between the images of a request', async () => {
    const small = { ...LIMITS, maxBytes: TINY_PNG.length + 10 };
    const urls = [`${host.url}/cat.png`, `${host.url}/redirect?to=%2Fcat.png`];
    expect(await refusal(fetch(urls, small))).toMatch(/larger than/);
  });
});
