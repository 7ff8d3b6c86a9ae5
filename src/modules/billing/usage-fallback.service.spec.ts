import { REDIS } from 'src/common/redis/redis.tokens';
import { SettlementBatchService, SettlementResult } from 'src/modules/billing/settlement-batch.service';
import { UsageFallbackService } from 'src/modules/billing/usage-fallback.service';
import { UsageQueueService } from 'src/modules/billing/usage-queue.service';
import { BalanceGateService } from 'src/modules/ledger/balance-gate.service';
import { settlePayload } from 'test/support/settle-payload';
import { newTestService, TestService } from 'test/support/test-service';

describe(UsageFallbackService.name, () => {
  let test: TestService<UsageFallbackService>;
  let sut: UsageFallbackService;
  let batch: jest.Mocked<SettlementBatchService>;
  let usage: jest.Mocked<UsageQueueService>;
  let gate: jest.Mocked<BalanceGateService>;
  /** What the API's Redis client shows of its connection. */
  const redis = { status: 'ready', stream: { writable: true } };
  const payload = settlePayload('payer');
  const settled: SettlementResult = {
    applied: [payload.requestId],
    unknownAccounts: [],
    shortfalls: [],
    snapshots: new Map([
      ['payer', { balance: 900n, version: 4n }],
      ['referrer', { balance: 110n, version: 2n }],
    ]),
    keySpent: new Map(),
  };

  beforeEach(async () => {
    redis.status = 'ready';
    test = await newTestService(UsageFallbackService, {}, [[REDIS, redis]]);
    sut = test.sut;
    batch = test.mock(SettlementBatchService);
    usage = test.mock(UsageQueueService);
    gate = test.mock(BalanceGateService);
    batch.settle.mockResolvedValue(settled);
    usage.releaseMany.mockResolvedValue();
    gate.sync.mockResolvedValue();
  });

  it("should settle the one usage with settlement's transaction, then close its hold with the balances it moved", async () => {
    await sut.settle(payload);

    expect(batch.settle).toHaveBeenCalledWith([payload]);
    expect(usage.releaseMany).toHaveBeenCalledWith([
      { accountId: 'payer', requestId: payload.requestId, snapshot: { balance: 900n, version: 4n } },
    ]);
    expect(gate.sync).toHaveBeenCalledWith('referrer', { balance: 110n, version: 2n });
  });

  it('should reject when Postgres fails, so that the recorder tries again', async () => {
    batch.settle.mockRejectedValue(new Error('connect ECONNREFUSED 127.0.0.1:5432'));

    await expect(sut.settle(payload)).rejects.toThrow('ECONNREFUSED');
    expect(usage.releaseMany).not.toHaveBeenCalled();
  });

  it('should count the usage settled when only closing its hold fails, leaving the hold to the sweeper', async () => {
    redis.status = 'reconnecting';

    await expect(sut.settle(payload)).resolves.toBeUndefined();

    expect(usage.releaseMany).not.toHaveBeenCalled();
    expect(test.logger.warn).toHaveBeenCalledWith(
      expect.objectContaining({ reqId: payload.requestId, err: 'Redis is not connected' }),
      expect.stringContaining('the hold sweeper closes it'),
    );
  });

  it('should not wait past its deadline for Redis to close the hold', async () => {
    usage.releaseMany.mockReturnValue(new Promise(() => undefined));
    const startedAt = Date.now();

    await expect(sut.settle(payload)).resolves.toBeUndefined();

    expect(Date.now() - startedAt).toBeLessThan(5_000);
    expect(test.logger.warn).toHaveBeenCalledWith(
      expect.objectContaining({ err: expect.stringContaining('no reply within') }),
      expect.any(String),
    );
  });
});
