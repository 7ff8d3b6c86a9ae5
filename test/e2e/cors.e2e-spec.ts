import { register } from 'test/e2e/e2e-helpers';
import { TestGateway } from 'test/support/gateway';

const CONSOLE = 'https://console.example.com';
const DEV_CONSOLE = 'http://localhost:5173';
const APP = 'https://app.example.com';
const STRANGER = 'https://evil.example.net';

describe('CORS', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await TestGateway.start({ CONSOLE_ORIGINS: `${CONSOLE},${DEV_CONSOLE}`, V1_CORS_ORIGINS: APP });
  });
  afterAll(() => gateway.close());

  const preflight = (path: string, origin: string, method = 'POST', headers = 'authorization,content-type') =>
    gateway.raw('OPTIONS', path, {
      origin,
      'access-control-request-method': method,
      'access-control-request-headers': headers,
    });
  const allowOrigin = (response: { headers: Headers }) => response.headers.get('access-control-allow-origin');

  describe('the console', () => {
    it.each(['/console/keys', '/console/auth/login', '/console/auth/register', '/console/usage?groupBy=day'])(
      'should answer a preflight for %s from an allowed origin with 204, without a session',
      async (path) => {
        const response = await preflight(path, CONSOLE, 'PATCH', 'authorization,content-type,idempotency-key');

        expect(response.status).toBe(204);
        expect(allowOrigin(response)).toBe(CONSOLE);
        expect(response.headers.get('access-control-allow-credentials')).toBe('true');
        expect(response.headers.get('access-control-allow-methods')).toContain('PATCH');
        const allowed = response.headers.get('access-control-allow-headers')!.toLowerCase().split(/,\s*/);
        expect(allowed).toEqual(expect.arrayContaining(['authorization', 'content-type', 'idempotency-key']));
        expect(response.headers.get('vary')).toContain('Origin');
        expect(response.text).toBe('');
      },
    );

    it('should answer a preflight without reading the body it carries', async () => {
      const response = await gateway.raw(
        'OPTIONS',
        '/console/keys',
        { origin: DEV_CONSOLE, 'access-control-request-method': 'POST', 'content-type': 'application/json' },
        '{"not": json',
      );
      expect(response.status).toBe(204);
      expect(allowOrigin(response)).toBe(DEV_CONSOLE);
    });

    it('should give an allowed origin the headers on the answer itself, errors included', async () => {
      const owner = await register(gateway);
      const listed = await gateway.call('GET', '/console/keys', {
        token: owner.token,
        headers: { origin: CONSOLE },
      });
      expect(listed.status).toBe(200);
      expect(allowOrigin(listed)).toBe(CONSOLE);
      expect(listed.headers.get('access-control-allow-credentials')).toBe('true');
      expect(listed.headers.get('access-control-expose-headers')).toContain('x-request-id');

      const refused = await gateway.call('GET', '/console/keys', { headers: { origin: CONSOLE } });
      expect(refused.status).toBe(401);
      expect(allowOrigin(refused)).toBe(CONSOLE);
    });

    it('should give an origin it does not know no CORS headers, on the preflight or the answer', async () => {
      const preflighted = await preflight('/console/keys', STRANGER);
      expect(preflighted.status).toBe(204);
      expect(allowOrigin(preflighted)).toBeNull();
      expect(preflighted.headers.get('access-control-allow-methods')).toBeNull();

      const owner = await register(gateway);
      const answered = await gateway.call('GET', '/console/keys', {
        token: owner.token,
        headers: { origin: STRANGER },
      });
      expect(answered.status).toBe(200);
      expect(allowOrigin(answered)).toBeNull();
      // The /v1 origin is not the console's.
      expect(allowOrigin(await preflight('/console/keys', APP))).toBeNull();
    });

    it('should never open /admin to the console origin', async () => {
      const adminPreflight = await preflight('/admin/accounts', CONSOLE, 'GET');
      expect(allowOrigin(adminPreflight)).toBeNull();
      expect(adminPreflight.status).not.toBe(204);
      const admin = await gateway.call('GET', '/admin/accounts?email=a@example.com', {
        token: gateway.adminToken,
        headers: { origin: CONSOLE },
      });
      expect(admin.status).toBe(200);
      expect(allowOrigin(admin)).toBeNull();
    });
  });

  describe('/v1', () => {
    it('should allow its own origins, with the headers an SDK asks for and no credentials', async () => {
      const response = await preflight(
        '/v1/chat/completions',
        APP,
        'POST',
        'authorization,content-type,x-stainless-os',
      );

      expect(response.status).toBe(204);
      expect(allowOrigin(response)).toBe(APP);
      expect(response.headers.get('access-control-allow-headers')).toBe('authorization,content-type,x-stainless-os');
      expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    });

    it('should answer a preflight without an API key, and refuse the console origin', async () => {
      const consoleOrigin = await preflight('/v1/models', CONSOLE, 'GET');
      expect(consoleOrigin.status).toBe(204);
      expect(allowOrigin(consoleOrigin)).toBeNull();

      const customer = await gateway.newCustomer();
      const models = await gateway.call('GET', '/v1/models', { token: customer.key, headers: { origin: APP } });
      expect(models.status).toBe(200);
      expect(allowOrigin(models)).toBe(APP);
    });
  });

  describe('unset', () => {
    it('should send no CORS headers at all when neither variable is set', async () => {
      const plain = await TestGateway.start();
      try {
        const response = await plain.raw('OPTIONS', '/console/keys', {
          origin: CONSOLE,
          'access-control-request-method': 'POST',
        });
        expect(allowOrigin(response)).toBeNull();
        expect(response.status).not.toBe(204);
        const owner = await register(plain);
        const listed = await plain.call('GET', '/console/keys', { token: owner.token, headers: { origin: CONSOLE } });
        expect(listed.status).toBe(200);
        expect(allowOrigin(listed)).toBeNull();
      } finally {
        await plain.close();
      }
    });
  });
});
