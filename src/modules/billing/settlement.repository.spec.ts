import { isDatabaseUnavailable, isLockTimeout } from 'src/modules/billing/settlement.repository';

describe('settlement failure kinds', () => {
  it.each([
    ['a refused connection', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ['a reset connection', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })],
    ['a connection lost mid-query', new Error('Connection terminated unexpectedly')],
    ['an administrator shutdown', Object.assign(new Error('terminating connection'), { code: '57P01' })],
    ['a connection exception', Object.assign(new Error('connection failure'), { code: '08006' })],
    ['too many connections', Object.assign(new Error('too many clients'), { code: '53300' })],
  ])('should take %s for an unavailable database', (_label, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a bad value', Object.assign(new Error('invalid input syntax for type uuid'), { code: '22P02' })],
    ['a lock timeout', Object.assign(new Error('canceling statement due to lock timeout'), { code: '55P03' })],
    ['a bug', new TypeError("Cannot read properties of undefined (reading 'x')")],
    ['nothing', null],
  ])('should not take %s for an unavailable database', (_label, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });

  it('should tell a lock timeout by its SQLSTATE', () => {
    expect(isLockTimeout({ code: '55P03' })).toBe(true);
    expect(isLockTimeout({ code: 'ECONNREFUSED' })).toBe(false);
  });
});
