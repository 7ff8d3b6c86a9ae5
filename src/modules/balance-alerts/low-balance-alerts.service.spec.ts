import { BalanceAlertsRepository } from 'src/modules/balance-alerts/balance-alerts.repository';
import { LowBalanceAlerts } from 'src/modules/balance-alerts/low-balance-alerts.service';
import { MailQueue } from 'src/modules/mail/mail.queue';
import { newTestService, TestService } from 'test/support/test-service';

describe(LowBalanceAlerts.name, () => {
  let test: TestService<LowBalanceAlerts>;
  let alerts: jest.Mocked<BalanceAlertsRepository>;
  let mail: jest.Mocked<MailQueue>;

  beforeEach(async () => {
    test = await newTestService(LowBalanceAlerts);
    alerts = test.mock(BalanceAlertsRepository);
    mail = test.mock(MailQueue);
  });

  it('should mail each account whose latch this check set, and no other', async () => {
    alerts.latchBelowThreshold.mockResolvedValueOnce(['a']);
    await test.sut.checkAfterSettlement(['a', 'b']);
    expect(mail.sendLowBalanceAlert.mock.calls).toEqual([['a']]);
  });

  it('should ask nothing when the settlement charged no account', async () => {
    await test.sut.checkAfterSettlement([]);
    expect(alerts.latchBelowThreshold).not.toHaveBeenCalled();
  });

  it('should unlatch an alert whose mail could not be enqueued, so that the next settlement tries again', async () => {
    alerts.latchBelowThreshold.mockResolvedValueOnce(['a']);
    mail.sendLowBalanceAlert.mockRejectedValueOnce(new Error('redis down'));
    await expect(test.sut.checkAfterSettlement(['a'])).resolves.toBeUndefined();
    expect(alerts.unlatch).toHaveBeenCalledWith('a');
    expect(test.logger.error).toHaveBeenCalled();
  });
});
