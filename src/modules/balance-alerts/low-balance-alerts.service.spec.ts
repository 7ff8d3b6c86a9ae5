import { LowBalanceAlerts } from 'src/modules/balance-alerts/low-balance-alerts.service';
import { MailQueue } from 'src/modules/mail/mail.queue';
import { newTestService, TestService } from 'test/support/test-service';
import { DataSource } from 'typeorm';

describe(LowBalanceAlerts.name, () => {
  let test: TestService<LowBalanceAlerts>;
  let db: jest.Mocked<DataSource>;
  let mail: jest.Mocked<MailQueue>;

  beforeEach(async () => {
    test = await newTestService(LowBalanceAlerts);
    db = test.mock(DataSource);
    mail = test.mock(MailQueue);
  });

  it('should mail each account whose latch this check set, and no other', async () => {
    db.query.mockResolvedValueOnce([[{ account_id: 'a' }], 1]);
    await test.sut.checkAfterSettlement(['a', 'b']);
    expect(mail.sendLowBalanceAlert.mock.calls).toEqual([['a']]);
  });

  it('should ask nothing when the settlement charged no account', async () => {
    await test.sut.checkAfterSettlement([]);
    expect(db.query).not.toHaveBeenCalled();
  });

  it('should unlatch an alert whose mail could not be enqueued, so that the next settlement tries again', async () => {
    db.query.mockResolvedValueOnce([[{ account_id: 'a' }], 1]).mockResolvedValueOnce([]);
    mail.sendLowBalanceAlert.mockRejectedValueOnce(new Error('redis down'));
    await expect(test.sut.checkAfterSettlement(['a'])).resolves.toBeUndefined();
    expect(db.query).toHaveBeenLastCalledWith(expect.stringContaining('alert_sent = false'), ['a']);
    expect(test.logger.error).toHaveBeenCalled();
  });
});
