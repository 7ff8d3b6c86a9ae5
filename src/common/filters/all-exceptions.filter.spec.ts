import { QueryFailedError } from 'typeorm';
import { ErrorKind } from 'src/common/errors/api-error';
import { toApiError } from 'src/common/filters/all-exceptions.filter';

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });

describe(toApiError.name, () => {
  it.each([
    ['a refused connection', refused()],
    ['a query on a connection Postgres closed', new QueryFailedError('SELECT 1', [], refused())],
    ['Postgres shutting down (57P01)', Object.assign(new Error('terminating connection'), { code: '57P01' })],
    ['a dropped connection', new Error('Connection terminated unexpectedly')],
  ])('should answer %s with a 503 to retry, not a 500', (_case, exception) => {
    const error = toApiError(exception);

    expect({ status: error.status, code: error.shape.code, headers: error.headers }).toEqual({
      status: 503,
      code: 'server_overloaded',
      headers: { 'retry-after': '10' },
    });
  });

  it('should keep a failing statement an internal error', () => {
    const unique = new QueryFailedError('INSERT', [], Object.assign(new Error('duplicate key'), { code: '23505' }));

    expect(toApiError(unique).kind).toBe(ErrorKind.Internal);
  });
});
