import {
  generateApiKeySecret,
  hashApiKey,
  isIssuableApiKey,
  parseBearerKey,
} from 'src/modules/api-keys/api-key.secret';

describe('api key secrets', () => {
  it('should generate sk- keys with at least 40 base62 characters, never twice the same', () => {
    const keys = new Set(Array.from({ length: 100 }, () => generateApiKeySecret()));
    expect(keys.size).toBe(100);
    for (const key of keys) {
      expect(key).toMatch(/^sk-[0-9A-Za-z]{40,}$/);
    }
  });

  it('should hash with SHA-256', () => {
    expect(hashApiKey('sk-test')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('should accept exactly "Bearer sk-…"', () => {
    expect(parseBearerKey('Bearer sk-abc123')).toBe('sk-abc123');
  });

  it.each([
    [undefined],
    [''],
    ['sk-abc123'],
    ['Bearer  sk-abc123'],
    ['Bearer sk-abc123 '],
    [' Bearer sk-abc123'],
    ['bearer sk-abc123'],
    ['Bearer abc123'],
    ['Basic sk-abc123'],
    ['Bearer sk-abc 123'],
    ['Bearer\tsk-abc123'],
  ])('should reject the malformed header %p', (header) => {
    expect(parseBearerKey(header)).toBeNull();
  });

  it('should recognise every generated key as issuable', () => {
    for (let i = 0; i < 100; i++) {
      expect(isIssuableApiKey(generateApiKeySecret())).toBe(true);
    }
  });

  it.each([
    ['sk-abc123'],
    [`sk-${'a'.repeat(47)}`],
    [`sk-${'a'.repeat(49)}`],
    [`sk-${'a'.repeat(47)}_`],
    [`pk-${'a'.repeat(48)}`],
  ])('should never look up %p, a shape that is never issued', (secret) => {
    expect(isIssuableApiKey(secret)).toBe(false);
  });
});
