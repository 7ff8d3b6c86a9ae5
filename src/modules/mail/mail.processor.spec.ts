import { Job } from 'bullmq';
import { MailJob } from 'src/common/queue/queue.constants';
import { MailComposer } from 'src/modules/mail/mail-composer';
import { MailProcessor } from 'src/modules/mail/mail.processor';
import { MailTransport } from 'src/modules/mail/mail-transport';
import { newTestService, TestService } from 'test/support/test-service';

const job = (name: MailJob, data: object) => ({ name, data, id: '1', opts: { attempts: 3 } }) as unknown as Job;
const message = { to: 'ada@example.com', subject: 'Confirm your e-mail address', text: 'secret-token-link' };

describe(MailProcessor.name, () => {
  let test: TestService<MailProcessor>;
  let composer: jest.Mocked<MailComposer>;
  let transport: jest.Mocked<MailTransport>;
  const setEnabled = (enabled: boolean) =>
    Object.defineProperty(transport, 'enabled', { value: enabled, configurable: true });

  beforeEach(async () => {
    test = await newTestService(MailProcessor);
    composer = test.mock(MailComposer);
    transport = test.mock(MailTransport);
    setEnabled(true);
  });

  it('should drop the job, composing nothing, when no SMTP server is configured', async () => {
    setEnabled(false);
    await expect(test.sut.process(job(MailJob.VerifyEmail, { accountId: 'a' }))).resolves.toBe('dropped');
    expect(composer.compose).not.toHaveBeenCalled();
    expect(test.logger.warn).toHaveBeenCalled();
  });

  it('should end quietly when there is nothing to send (no such address, verified meanwhile)', async () => {
    composer.compose.mockResolvedValue(null);
    await expect(test.sut.process(job(MailJob.PasswordReset, { email: 'x@example.com' }))).resolves.toBe(
      'nothing to send',
    );
    expect(transport.send).not.toHaveBeenCalled();
  });

  it('should discard the minted token and throw (so BullMQ retries) when sending fails', async () => {
    const discard = jest.fn().mockResolvedValue(undefined);
    composer.compose.mockResolvedValue({ message, discard });
    transport.send.mockRejectedValue(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNECTION' }));
    await expect(test.sut.process(job(MailJob.VerifyEmail, { accountId: 'a' }))).rejects.toThrow('ECONNREFUSED');
    expect(discard).toHaveBeenCalled();
  });

  it('should log a failed try by job and error code, never the address or the text', () => {
    const error = Object.assign(new Error('550 rejected ada@example.com'), { code: 'EENVELOPE', responseCode: 550 });
    test.sut.onFailed({ ...job(MailJob.VerifyEmail, { accountId: 'a' }), attemptsMade: 3 } as Job, error);
    expect(test.logger.error).toHaveBeenCalledTimes(1);
    const logged = JSON.stringify(test.logger.error.mock.calls[0]);
    expect(logged).toContain('EENVELOPE');
    expect(logged).not.toContain('ada@example.com');
  });
});
