import { SettlementBatchService } from 'src/modules/billing/settlement-batch.service';
import { SettlementRepository } from 'src/modules/billing/settlement.repository';
import { LedgerRepository } from 'src/modules/ledger/ledger.repository';
import { settlePayload } from 'test/support/settle-payload';
import { newTestService } from 'test/support/test-service';
import { EntityManager } from 'typeorm';

const payload = (requestId: string, accountId: string) => settlePayload(accountId, { requestId });

describe(SettlementBatchService.name, () => {
  const manager = {} as EntityManager;

  async function setup() {
    const { sut, mock } = await newTestService(SettlementBatchService, { settlementLeaseMs: 5_000 });
    const repository = mock(SettlementRepository);
    const ledger = mock(LedgerRepository);
    repository.inTransaction.mockImplementation((_lockTimeoutMs, work) => work(manager));
    repository.findReferrers.mockResolvedValue(new Map([['a', null]]));
    repository.findSettled.mockResolvedValue(new Set(['req_before']));
    repository.findRouteCosts.mockResolvedValue(new Map());
    ledger.lockBalances.mockResolvedValue(new Map([['a', { balance: 1_000n, version: 4n }]]));
    return { sut, repository, ledger };
  }

  it('should wait for row locks a tenth of the lease, and charge only what was not settled before', async () => {
    const { sut, repository, ledger } = await setup();
    ledger.postMany.mockResolvedValue({
      balances: new Map([['a', { balance: 900n, version: 5n }]]),
      refused: new Map(),
    });
    const [before, fresh, stranger] = [payload('req_before', 'a'), payload('req_fresh', 'a'), payload('req_x', 'gone')];

    const result = await sut.settle([before, fresh, stranger, fresh]);

    expect(repository.inTransaction).toHaveBeenCalledWith(500, expect.any(Function));
    expect(ledger.postMany).toHaveBeenCalledWith(manager, [
      { accountId: 'a', kind: 'usage', amount: -100n, reference: 'req_fresh' },
    ]);
    expect(repository.insertUsageRecords).toHaveBeenCalledWith(
      manager,
      [fresh],
      new Map([['req_fresh', { cost: 100n, charged: 100n }]]),
    );
    expect(result).toEqual({
      applied: ['req_fresh'],
      unknownAccounts: ['req_x'],
      shortfalls: [],
      snapshots: new Map([['a', { balance: 900n, version: 5n }]]),
    });
  });

  it('should fail the whole transaction when the ledger refuses a posting', async () => {
    const { sut, repository, ledger } = await setup();
    ledger.postMany.mockResolvedValue({
      balances: new Map(),
      refused: new Map([[0, { outcome: 'insufficient_balance' as const }]]),
    });

    await expect(sut.settle([payload('req_fresh', 'a')])).rejects.toThrow(
      'the ledger refused 1 settlement postings, first req_fresh: insufficient_balance',
    );
    expect(repository.addUsageDaily).not.toHaveBeenCalled();
  });

  it('should write nothing when every payload was settled before', async () => {
    const { sut, repository, ledger } = await setup();

    const result = await sut.settle([payload('req_before', 'a')]);

    expect(result.applied).toEqual([]);
    expect(result.snapshots).toEqual(new Map([['a', { balance: 1_000n, version: 4n }]]));
    expect(repository.insertUsageRecords).not.toHaveBeenCalled();
    expect(ledger.postMany).not.toHaveBeenCalled();
  });
});
