import { workerMetrics } from 'src/common/metrics/worker-metrics';
import { HoldSweeperService } from 'src/modules/billing/hold-sweeper.service';
import { SettlementRepository } from 'src/modules/billing/settlement.repository';
import { UsageQueueService } from 'src/modules/billing/usage-queue.service';
import { BalanceGateService } from 'src/modules/ledger/balance-gate.service';
import { newTestService, TestService } from 'test/support/test-service';

describe(HoldSweeperService.name, () => {
  let test: TestService<HoldSweeperService>;
  let sut: HoldSweeperService;
  let gate: jest.Mocked<BalanceGateService>;
  let usage: jest.Mocked<UsageQueueService>;
  let settlement: jest.Mocked<SettlementRepository>;
  const settledSnapshot = { balance: 900n, version: 7n };

  beforeEach(async () => {
    test = await newTestService(HoldSweeperService, { holdSweepAgeMs: 1_800_000 });
    sut = test.sut;
    gate = test.mock(BalanceGateService);
    usage = test.mock(UsageQueueService);
    settlement = test.mock(SettlementRepository);
    // Three stale holds: one whose usage the API settled in Postgres, an orphan, one with usage recorded in Redis.
    gate.staleHolds.mockResolvedValue([
      ['acct-1', 'req_settled'],
      ['acct-2', 'req_orphan'],
      ['acct-3', 'req_recorded'],
    ]);
    settlement.settledWithBalances.mockResolvedValue(new Map([['req_settled', settledSnapshot]]));
    usage.release.mockImplementation((_, requestId) => Promise.resolve(requestId === 'req_orphan'));
  });

  it('should close a hold whose usage is settled in Postgres as settlement would, pushing its balance', async () => {
    await sut.closeSettled(60_000);

    expect(gate.staleHolds).toHaveBeenCalledWith(60_000, expect.any(Number), 0);
    expect(settlement.settledWithBalances).toHaveBeenCalledWith(['req_settled', 'req_orphan', 'req_recorded']);
    expect(usage.releaseMany).toHaveBeenCalledWith([
      { accountId: 'acct-1', requestId: 'req_settled', snapshot: settledSnapshot },
    ]);
  });

  it('should leave every other hold alone when only closing settled ones', async () => {
    await expect(sut.closeSettled(60_000)).resolves.toBe(1);

    expect(usage.release).not.toHaveBeenCalled();
    expect(usage.releaseMany).toHaveBeenCalledTimes(1);
  });

  it('should release orphans unbilled on a full sweep, but never a settled hold without its balance', async () => {
    await expect(sut.sweep()).resolves.toBe(2);

    expect(gate.staleHolds).toHaveBeenCalledWith(1_800_000, expect.any(Number), 0);
    expect(usage.releaseMany).toHaveBeenCalledWith([
      { accountId: 'acct-1', requestId: 'req_settled', snapshot: settledSnapshot },
    ]);
    expect(usage.release.mock.calls).toEqual([
      ['acct-2', 'req_orphan'],
      ['acct-3', 'req_recorded'],
    ]);
  });

  it("should count what it closed on the worker's metrics, by reason", async () => {
    const released = async () =>
      Object.fromEntries((await workerMetrics.holdsReleased.get()).values.map((v) => [v.labels.reason, v.value]));
    const before = await released();

    await sut.sweep();

    const after = await released();
    expect((after.orphaned ?? 0) - (before.orphaned ?? 0)).toBe(1);
    expect((after.settled ?? 0) - (before.settled ?? 0)).toBe(1);
  });

  it('should release nothing while Postgres cannot say which usage is settled', async () => {
    settlement.settledWithBalances.mockRejectedValue(new Error('connect ECONNREFUSED 127.0.0.1:5432'));

    await expect(sut.sweep()).rejects.toThrow('ECONNREFUSED');

    expect(usage.release).not.toHaveBeenCalled();
    expect(usage.releaseMany).not.toHaveBeenCalled();
  });

  it('should not ask Postgres when no hold is stale', async () => {
    gate.staleHolds.mockResolvedValue([]);

    await expect(sut.sweep()).resolves.toBe(0);

    expect(settlement.settledWithBalances).not.toHaveBeenCalled();
  });
});
