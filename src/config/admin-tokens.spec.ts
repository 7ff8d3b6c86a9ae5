import { adminTokensOf } from 'src/config/admin-tokens';
import { ConfigError } from 'src/config/config-error';

const token = (char: string) => char.repeat(20);

describe('adminTokensOf', () => {
  it('should name ADMIN_TOKEN alone default', () => {
    expect(adminTokensOf(token('a'), undefined)).toEqual([{ name: 'default', role: 'admin', token: token('a') }]);
  });

  it('should read named tokens next to ADMIN_TOKEN, splitting at the first colon', () => {
    const tokens = adminTokensOf(token('a'), `ops:${token('b')}, finance:x:${token('c')}`);
    expect(tokens).toEqual([
      { name: 'default', role: 'admin', token: token('a') },
      { name: 'ops', role: 'admin', token: token('b') },
      { name: 'finance', role: 'admin', token: `x:${token('c')}` },
    ]);
  });

  it('should read a role after @, and keep a token without one admin', () => {
    const tokens = adminTokensOf(
      undefined,
      `ops@operator:${token('b')},books@finance:${token('c')},ci@read:${token('d')}`,
    );
    expect(tokens.map(({ name, role }) => `${name}@${role}`)).toEqual(['ops@operator', 'books@finance', 'ci@read']);
    expect(tokens[0].token).toBe(token('b'));
  });

  it('should close /admin when neither is set', () => {
    expect(adminTokensOf(undefined, '')).toEqual([]);
  });

  it.each([
    ['an entry without a name', token('b'), /name:token/],
    ['an upper-case name', `Ops:${token('b')}`, /name:token/],
    ['an unknown role', `ops@root:${token('b')}`, /role of 'ops' must be one of admin, operator, finance, read/],
    ['an empty role', `ops@:${token('b')}`, /role of 'ops'/],
    ['a short token', 'ops:short', /'ops' must be at least 16/],
    ['a name given twice', `ops:${token('b')},ops:${token('c')}`, /'ops' is given twice/],
    ['the default name taken', `default:${token('b')}`, /'default' is given twice/],
    ['a token shared by two names', `ops:${token('a')}`, /also another operator's token/],
  ])('should refuse %s, naming ADMIN_TOKENS', (_case, value, reason) => {
    expect(() => adminTokensOf(token('a'), value)).toThrow(ConfigError);
    expect(() => adminTokensOf(token('a'), value)).toThrow(/^Invalid environment variable ADMIN_TOKENS: /);
    expect(() => adminTokensOf(token('a'), value)).toThrow(reason);
  });
});
