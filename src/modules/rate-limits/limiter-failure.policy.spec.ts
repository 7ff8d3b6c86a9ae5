import pino from 'pino';
import { ApiError } from 'src/common/errors/api-error';
import { RequestTrace } from 'src/common/http/request-trace';
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

  it("should write the failure on the request's own logger, with its reqId, when a request is checked", async () => {
    const lines: Record<string, unknown>[] = [];
    const root = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const sut = new LimiterFailurePolicy(root);
    const request = new RequestTrace('req_1', 'client-7', root);

    await sut.check(redisDown, request).catch(() => undefined);

    expect(lines).toEqual([
      expect.objectContaining({ msg: 'rate limiter unavailable', reqId: 'req_1', clientReqId: 'client-7' }),
    ]);
  });
});
