import pino from 'pino';
import { ApiError } from 'src/common/errors/api-error';
import { metrics } from 'src/common/metrics/metrics';
import { LimiterFailurePolicy } from 'src/modules/rate-limits/limiter-failure.policy';

const redisDown = () => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6379'));
const errorCount = async () => (await metrics.limiterErrors.get()).values[0]?.value ?? 0;

describe(LimiterFailurePolicy.name, () => {
  it('should refuse with 503 server_overloaded and retry-after when Redis cannot answer, and count the failure', async () => {
    const sut = new LimiterFailurePolicy(pino({ level: 'silent' }));
    const before = await errorCount();

    const refusal = await sut.check(redisDown).catch((error: unknown) => error);

    expect(refusal).toBeInstanceOf(ApiError);
    expect((refusal as ApiError).toBody().error).toMatchObject({ type: 'server_error', code: 'server_overloaded' });
    expect((refusal as ApiError).status).toBe(503);
    expect(await errorCount()).toBe(before + 1);
  });

  it('should pass a limit decision through untouched and recover on the next check', async () => {
    const sut = new LimiterFailurePolicy(pino({ level: 'silent' }));
    const limited = ApiError.invalid('over the limit');
    await expect(sut.check(() => Promise.reject(limited))).rejects.toBe(limited);
    await expect(sut.check(() => Promise.resolve('checked'))).resolves.toBe('checked');
  });
});
