import { metrics } from 'src/common/metrics/metrics';
import { SettleCompletionPayload } from 'src/common/queue/queue.constants';
import { WindowCorrection } from 'src/common/redis/window-scripts';
import { RecordingTimings, UsageRecorder, UsageSink } from 'src/modules/billing/usage-recorder';
import { settlePayload } from 'test/support/settle-payload';
import { newTestLogger } from 'test/support/test-service';

// Short, so that the tests run in real time; the proportions are production's.
const TIMINGS: RecordingTimings = {
  replyDeadlineMs: 40,
  redisAttempts: 3,
  retryPauseMs: 5,
  fallbackPauseMs: 10,
  fallbackPauseMaxMs: 20,
  giveUpAfterMs: 150,
  hurriedPauseMs: 5,
};

const never = () => new Promise<never>(() => undefined);
const refused = () => Promise.reject(new Error('OOM command not allowed when used memory > maxmemory'));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Counts of gateway_usage_record_failures_total by outcome. */
async function failures(): Promise<Record<string, number>> {
  const { values } = await metrics.usageRecordFailures.get();
  return Object.fromEntries(values.map(({ labels, value }) => [String(labels.outcome), value]));
}

/** What each outcome counted since `before`. */
async function countedSince(before: Record<string, number>): Promise<Record<string, number>> {
  const now = await failures();
  return Object.fromEntries(
    Object.entries(now)
      .map(([outcome, value]) => [outcome, value - (before[outcome] ?? 0)])
      .filter(([, delta]) => delta !== 0),
  );
}

describe(UsageRecorder.name, () => {
  let sink: jest.Mocked<UsageSink>;
  let logger: ReturnType<typeof newTestLogger>;
  let sut: UsageRecorder;
  let usage: SettleCompletionPayload;
  let before: Record<string, number>;

  beforeEach(async () => {
    sink = {
      toRedis: jest.fn<Promise<unknown> | null, [SettleCompletionPayload, WindowCorrection | null]>(() =>
        Promise.resolve(1),
      ),
      toPostgres: jest.fn<Promise<void>, [SettleCompletionPayload]>(() => Promise.resolve()),
    };
    logger = newTestLogger();
    sut = new UsageRecorder(sink, logger, TIMINGS);
    usage = settlePayload('account-1');
    before = await failures();
  });

  /** Until every usage handed over is durable or given up. */
  async function followedUp(timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (sut.inFlight > 0 && Date.now() < deadline) {
      await sleep(2);
    }
    expect(sut.inFlight).toBe(0);
  }

  it('should send the record in the caller turn and count nothing when Redis takes it', async () => {
    expect(sut.record(usage)).toBe(true);
    expect(sink.toRedis).toHaveBeenCalledWith(usage, null);

    await followedUp();
    expect(sink.toRedis).toHaveBeenCalledTimes(1);
    expect(sink.toPostgres).not.toHaveBeenCalled();
    expect(await countedSince(before)).toEqual({});
  });

  it('should say the record did not leave when Redis is not connected, and retry it with its correction', async () => {
    sink.toRedis.mockReturnValueOnce(null);
    const correction = { keys: ['tpm'], delta: -40 };

    expect(sut.record(usage, correction)).toBe(false);

    await followedUp();
    expect(sink.toRedis).toHaveBeenCalledTimes(2);
    expect(sink.toRedis).toHaveBeenLastCalledWith(usage, correction);
    expect(sink.toPostgres).not.toHaveBeenCalled();
    expect(await countedSince(before)).toEqual({ retried_ok: 1 });
  });

  it('should settle in Postgres once, after the bounded attempts on Redis all answered errors', async () => {
    sink.toRedis.mockImplementation(refused);

    sut.record(usage);

    await followedUp();
    expect(sink.toRedis).toHaveBeenCalledTimes(TIMINGS.redisAttempts);
    expect(sink.toPostgres).toHaveBeenCalledTimes(1);
    expect(sink.toPostgres).toHaveBeenCalledWith(usage);
    expect(await countedSince(before)).toEqual({ fallback_settled: 1 });
  });

  it('should count an attempt Redis does not answer within the deadline as failed', async () => {
    sink.toRedis.mockImplementation(never);
    const startedAt = Date.now();

    sut.record(usage);

    await followedUp();
    expect(sink.toRedis).toHaveBeenCalledTimes(TIMINGS.redisAttempts);
    expect(sink.toPostgres).toHaveBeenCalledTimes(1);
    // Every attempt waited its deadline out before the next.
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(TIMINGS.redisAttempts * TIMINGS.replyDeadlineMs);
  });

  it('should not fall back when a late attempt on Redis succeeds', async () => {
    sink.toRedis.mockImplementationOnce(refused).mockImplementationOnce(never);

    sut.record(usage);

    await followedUp();
    expect(sink.toRedis).toHaveBeenCalledTimes(3);
    expect(sink.toPostgres).not.toHaveBeenCalled();
    expect(await countedSince(before)).toEqual({ retried_ok: 1 });
  });

  it('should follow up only the records whose reply never came, among many Redis answered', async () => {
    const usages = Array.from({ length: 20 }, (_, i) => settlePayload(`account-${i}`));
    const silent = new Set([usages[3], usages[11]]);
    // The silent ones never get the first reply; their retries are answered.
    const firstSent = new Set<SettleCompletionPayload>();
    sink.toRedis.mockImplementation((sent) => {
      if (silent.has(sent) && !firstSent.has(sent)) {
        firstSent.add(sent);
        return never();
      }
      return Promise.resolve(1);
    });

    const startedAt = Date.now();
    usages.forEach((each) => sut.record(each));
    await followedUp();

    const sends = (each: SettleCompletionPayload) => sink.toRedis.mock.calls.filter(([sent]) => sent === each).length;
    expect(usages.map(sends)).toEqual(usages.map((each) => (silent.has(each) ? 2 : 1)));
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(TIMINGS.replyDeadlineMs);
    expect(sink.toPostgres).not.toHaveBeenCalled();
    expect(await countedSince(before)).toEqual({ retried_ok: 2 });
  });

  it('should ignore a first reply that comes after its deadline: the retry decides', async () => {
    let answerLate: (value: unknown) => void = () => undefined;
    sink.toRedis
      .mockImplementationOnce(() => new Promise((resolve) => (answerLate = resolve)))
      .mockImplementationOnce(refused)
      .mockImplementationOnce(refused);

    sut.record(usage);
    await sleep(TIMINGS.replyDeadlineMs * 1.5);
    answerLate(1);

    await followedUp();
    expect(sink.toRedis).toHaveBeenCalledTimes(TIMINGS.redisAttempts);
    expect(sink.toPostgres).toHaveBeenCalledTimes(1);
    expect(await countedSince(before)).toEqual({ fallback_settled: 1 });
  });

  it('should keep trying Postgres and Redis while both fail, and stop at the first that takes the usage', async () => {
    sink.toRedis.mockImplementation(refused);
    sink.toPostgres.mockRejectedValueOnce(new Error('connect ECONNREFUSED 127.0.0.1:5432'));
    sink.toPostgres.mockRejectedValueOnce(new Error('connect ECONNREFUSED 127.0.0.1:5432'));

    sut.record(usage);

    await followedUp();
    expect(sink.toPostgres).toHaveBeenCalledTimes(3);
    // Redis is asked again between the Postgres attempts: it may be back first.
    expect(sink.toRedis).toHaveBeenCalledTimes(TIMINGS.redisAttempts + 2);
    expect(await countedSince(before)).toEqual({ fallback_failed: 2, fallback_settled: 1 });
    const failedLines = logger.error.mock.calls.filter(([, message]) => String(message).includes('trying again'));
    expect(failedLines).toHaveLength(2);
    // One structured line each: ids and the error, never the usage's content.
    expect(failedLines[0][0]).toEqual({
      reqId: usage.requestId,
      accountId: usage.accountId,
      round: 1,
      err: 'connect ECONNREFUSED 127.0.0.1:5432',
    });
  });

  it('should end the fallback when Redis comes back before Postgres', async () => {
    sink.toRedis
      .mockImplementationOnce(refused)
      .mockImplementationOnce(refused)
      .mockImplementationOnce(refused)
      .mockResolvedValueOnce(1);
    sink.toPostgres.mockRejectedValue(new Error('Connection terminated unexpectedly'));

    sut.record(usage);

    await followedUp();
    expect(sink.toPostgres).toHaveBeenCalledTimes(1);
    expect(await countedSince(before)).toEqual({ fallback_failed: 1, retried_ok: 1 });
  });

  it('should give a usage up after the bounded time, logging it whole once', async () => {
    sink.toRedis.mockImplementation(refused);
    sink.toPostgres.mockRejectedValue(new Error('connect ECONNREFUSED 127.0.0.1:5432'));

    sut.record(usage);

    await followedUp();
    const calls = sink.toPostgres.mock.calls.length;
    await sleep(TIMINGS.fallbackPauseMaxMs * 3);
    expect(sink.toPostgres).toHaveBeenCalledTimes(calls);
    expect((await countedSince(before)).lost).toBe(1);
    const lost = logger.error.mock.calls.filter(([, message]) => String(message).startsWith('usage lost'));
    expect(lost).toEqual([[expect.objectContaining({ reqId: usage.requestId, usage }), expect.any(String)]]);
  });

  describe('drain', () => {
    it('should return at once when nothing is pending', async () => {
      const startedAt = Date.now();
      await sut.drain(10_000);
      expect(Date.now() - startedAt).toBeLessThan(1_000);
    });

    it('should wait for a pending fallback, going to Postgres without further attempts on Redis', async () => {
      sink.toRedis.mockImplementation(refused);
      let settle: () => void = () => undefined;
      sink.toPostgres.mockImplementation(() => new Promise<void>((resolve) => (settle = resolve)));
      sut.record(usage);
      await sleep(1);

      let drained = false;
      const draining = sut.drain(10_000).then(() => (drained = true));
      await sleep(TIMINGS.replyDeadlineMs * 2);

      expect(sink.toRedis).toHaveBeenCalledTimes(1);
      expect(sink.toPostgres).toHaveBeenCalledTimes(1);
      expect(drained).toBe(false);
      settle();
      await draining;
      expect(sut.inFlight).toBe(0);
      expect(await countedSince(before)).toEqual({ fallback_settled: 1 });
    });

    it('should wait at most its timeout, then log each usage still pending as lost', async () => {
      sink.toRedis.mockImplementation(never);
      sink.toPostgres.mockImplementation(never);
      sut.record(usage);
      const startedAt = Date.now();

      await sut.drain(100);

      expect(Date.now() - startedAt).toBeLessThan(1_000);
      expect(sut.inFlight).toBe(0);
      const lost = logger.error.mock.calls.filter(([, message]) => String(message).startsWith('usage lost'));
      expect(lost).toEqual([[expect.objectContaining({ reqId: usage.requestId, usage }), expect.any(String)]]);
      expect(await countedSince(before)).toEqual({ lost: 1 });
    });
  });
});
