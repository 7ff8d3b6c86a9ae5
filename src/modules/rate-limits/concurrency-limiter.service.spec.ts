import { ApiError, clientClosed } from 'src/common/errors/api-error';
import { loadConfig } from 'src/config/app-config';
import { ConcurrencyLimiter } from 'src/modules/rate-limits/concurrency-limiter.service';

function limiter(env: Record<string, string>): ConcurrencyLimiter {
  return new ConcurrencyLimiter(loadConfig({ NODE_ENV: 'test', ...env }));
}

describe(ConcurrencyLimiter.name, () => {
  it('should give a queued place back at once when its client hangs up', async () => {
    const sut = limiter({ MAX_CONCURRENT_COMPLETIONS: '1', MAX_QUEUED_COMPLETIONS: '1', QUEUE_WAIT_MS: '60000' });
    const release = await sut.acquire('a', new AbortController().signal);
    const gone = new AbortController();
    const waiting = sut.acquire('b', gone.signal);
    gone.abort(clientClosed());
    await expect(waiting).rejects.toMatchObject({ status: 499 });

    // The queue has room again, and the next waiter gets the slot as soon as it is free.
    const next = sut.acquire('c', new AbortController().signal);
    release();
    await expect(next).resolves.toEqual(expect.any(Function));
  });

  it('should refuse an account past MAX_CONCURRENT_PER_ACCOUNT with 503 while others are served', async () => {
    const sut = limiter({ MAX_CONCURRENT_COMPLETIONS: '10', MAX_CONCURRENT_PER_ACCOUNT: '2' });
    const signal = new AbortController().signal;
    const first = await sut.acquire('a', signal);
    await sut.acquire('a', signal);
    const refused = await sut.acquire('a', signal).catch((error: ApiError) => error);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).toBody().error).toMatchObject({ type: 'server_error', code: 'server_overloaded' });
    expect((refused as ApiError).headers['retry-after']).toBe('1');
    await expect(sut.acquire('b', signal)).resolves.toEqual(expect.any(Function));

    first();
    await expect(sut.acquire('a', signal)).resolves.toEqual(expect.any(Function));
  });
});
