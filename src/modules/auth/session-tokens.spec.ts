import {
  accessClaimsOf,
  isRefreshTokenShaped,
  newRefreshToken,
  refreshTokenHash,
  sessionUserAgent,
  successorKey,
  successorRefreshToken,
} from 'src/modules/auth/session-tokens';

describe('session tokens', () => {
  describe(newRefreshToken.name, () => {
    it('should make distinct tokens of 256 random bits that pass the shape check', () => {
      const tokens = new Set(Array.from({ length: 1000 }, () => newRefreshToken()));
      expect(tokens.size).toBe(1000);
      for (const token of tokens) {
        expect(isRefreshTokenShaped(token)).toBe(true);
        expect(Buffer.from(token.slice('gwrt_'.length), 'base64url')).toHaveLength(32);
      }
    });
  });

  describe(successorRefreshToken.name, () => {
    const key = successorKey('the deployment secret');

    it('should give a token of the same shape, the same each time for one token and one key', () => {
      const presented = newRefreshToken();
      const next = successorRefreshToken(presented, key);
      expect(isRefreshTokenShaped(next)).toBe(true);
      expect(next).not.toBe(presented);
      expect(successorRefreshToken(presented, key)).toBe(next);
    });

    it('should give another token for another token, or under another secret', () => {
      const presented = newRefreshToken();
      const next = successorRefreshToken(presented, key);
      expect(successorRefreshToken(newRefreshToken(), key)).not.toBe(next);
      expect(successorRefreshToken(presented, successorKey('another secret'))).not.toBe(next);
      // Keyed apart from the JWT signatures: the secret itself is not the key.
      expect(successorRefreshToken(presented, Buffer.from('the deployment secret'))).not.toBe(next);
    });
  });

  describe(refreshTokenHash.name, () => {
    it('should hash to 64 hex characters that do not contain the token', () => {
      const token = newRefreshToken();
      const hash = refreshTokenHash(token);
      expect(hash).toMatch(/^[0-9a-f]{64}$/);
      expect(hash).toBe(refreshTokenHash(token));
      expect(hash).not.toBe(refreshTokenHash(newRefreshToken()));
      expect(hash).not.toContain(token.slice(5, 20));
    });
  });

  describe(isRefreshTokenShaped.name, () => {
    it.each([
      ['empty', ''],
      ['without prefix', 'A'.repeat(43)],
      ['too short', `gwrt_${'A'.repeat(42)}`],
      ['too long', `gwrt_${'A'.repeat(44)}`],
      ['with a foreign character', `gwrt_${'A'.repeat(42)}+`],
      ['an access token', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln'],
    ])('should refuse a token %s', (_case, token) => {
      expect(isRefreshTokenShaped(token)).toBe(false);
    });
  });

  describe(accessClaimsOf.name, () => {
    const sid = '3f1c2a9e-8b4d-4c6e-9a7b-1d2e3f4a5b6c';

    it('should take the account and the session', () => {
      expect(accessClaimsOf({ sub: 'account', sid, iat: 1, exp: 2 })).toEqual({ sub: 'account', sid });
    });

    it.each([
      ['a token from before sessions (no sid)', { sub: 'account' }],
      ['a session id that is not a uuid', { sub: 'account', sid: "x' OR 1=1" }],
      ['a numeric subject', { sub: 7, sid }],
      ['nothing', null],
    ])('should refuse %s', (_case, payload) => {
      expect(accessClaimsOf(payload)).toBeNull();
    });
  });

  describe(sessionUserAgent.name, () => {
    it('should keep a browser user agent as it is', () => {
      expect(sessionUserAgent('Mozilla/5.0 (X11; Linux x86_64)')).toBe('Mozilla/5.0 (X11; Linux x86_64)');
    });

    it('should give null for none or blanks, drop control characters and cut long values', () => {
      expect(sessionUserAgent(undefined)).toBeNull();
      expect(sessionUserAgent('  \t ')).toBeNull();
      expect(sessionUserAgent('a\u0000b\nc')).toBe('abc');
      expect(sessionUserAgent('x'.repeat(1000))).toHaveLength(256);
    });
  });
});
