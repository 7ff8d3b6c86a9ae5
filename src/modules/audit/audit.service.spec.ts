import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { AuditRepository } from 'src/modules/audit/audit.repository';
import { AuditService, changedSecrets } from 'src/modules/audit/audit.service';
import { newTestService } from 'test/support/test-service';

describe('changedSecrets', () => {
  it('should name the secrets that appeared, went or changed, and no value', () => {
    expect(changedSecrets({}, { apiKey: 'a' })).toEqual(['apiKey']);
    expect(changedSecrets({ apiKey: 'a' }, {})).toEqual(['apiKey']);
    expect(changedSecrets({ apiKey: 'a', token: 't' }, { apiKey: 'b', token: 't' })).toEqual(['apiKey']);
    expect(changedSecrets({ apiKey: 'a' }, { apiKey: 'a' })).toEqual([]);
  });
});

describe(AuditService.name, () => {
  const change = {
    actor: 'ops',
    actorRole: 'operator' as const,
    method: 'POST',
    route: '/admin/redemption-codes',
    params: {},
  };

  it('should refuse the change (503) when its entry cannot be written', async () => {
    const { sut, mock } = await newTestService(AuditService);
    mock(AuditRepository).insertPending.mockRejectedValue(new Error('connection terminated'));

    const refusal = await sut.begin(change).catch((error: unknown) => error);

    expect(refusal).toBeInstanceOf(ApiError);
    expect((refusal as ApiError).kind).toBe(ErrorKind.Overloaded);
  });

  it('should complete an entry after the change, and only log when that fails: the change is done', async () => {
    const { sut, mock, logger } = await newTestService(AuditService);
    const repository = mock(AuditRepository);
    repository.insertPending.mockResolvedValue('41');
    const entry = await sut.begin(change);

    await sut.finish(entry, 'applied', 201);
    expect(repository.complete).toHaveBeenCalledWith('41', 'applied', 201, null, []);

    repository.complete.mockRejectedValue(new Error('connection terminated'));
    await expect(sut.finish(entry, 'failed', 400)).resolves.toBeUndefined();
    expect(logger.error).toHaveBeenCalledWith(
      { auditId: '41', err: 'connection terminated' },
      'could not complete an audit entry',
    );
  });
});
