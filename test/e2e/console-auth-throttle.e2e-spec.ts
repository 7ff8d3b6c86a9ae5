import Redis from 'ioredis';
import { randomInt } from 'node:crypto';
import { eventually, expectError, PASSWORD, uniqueEmail } from 'test/e2e/e2e-helpers';
import { TcpProxy, throughProxy } from 'test/e2e/outage-helpers';
import { HttpResult, TestGateway } from 'test/support/gateway';

/** A fresh client address each call, as a proxy in front of the gateway would report it. */
const newIp = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

function expectThrottled(response: HttpResult, maxRetryAfterSec: number): number {
  expectError(response, 429, { type: 'requests', code: 'rate_limit_exceeded', param: null });
  expect(response.text).not.toContain('accessToken');
  const retryAfter = Number(response.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(maxRetryAfterSec);
  expect(response.body.error.message).toContain(`Retry after ${retryAfter}s`);
  return retryAfter;
}

describe('console auth throttles', () => {
  const login = (gateway: TestGateway, email: string, password: string, ip?: string) =>
    gateway.call('POST', '/console/auth/login', {
      body: { email, password },
      headers: ip ? { 'x-forwarded-for': ip } : {},
    });
  const registerFrom = (gateway: TestGateway, email: string, ip?: string) =>
    gateway.call('POST', '/console/auth/register', {
      body: { email, password: PASSWORD },
      headers: ip ? { 'x-forwarded-for': ip } : {},
    });

  describe('behind a trusted proxy', () => {
    let gateway: TestGateway;
    /** A new account, registered from an address of its own. */
    const newUser = async () => {
      const email = uniqueEmail();
      expect((await registerFrom(gateway, email, newIp())).status).toBe(201);
      return email;
    };

    beforeAll(async () => {
      gateway = await TestGateway.start({
        TRUST_PROXY: '127.0.0.1',
        AUTH_ATTEMPTS_PER_IP: '5',
        AUTH_FAILURES_PER_IP: '4',
      });
    });
    afterAll(() => gateway.close());

    it('should refuse a login with 429 after 10 wrong passwords for one e-mail, from any address', async () => {
      const victim = await newUser();
      for (let attempt = 0; attempt < 10; attempt++) {
        expectError(await login(gateway, victim, `wrong-${attempt}`, newIp()), 401, {
          code: 'invalid_credentials',
        });
      }

      // Even the right password, from an address never seen: the e-mail's window is full for 15 minutes.
      const retryAfter = expectThrottled(await login(gateway, victim, PASSWORD, newIp()), 900);
      expect(retryAfter).toBeGreaterThan(600);
      expectThrottled(await login(gateway, victim.toUpperCase(), PASSWORD, newIp()), 900);

      expect((await login(gateway, await newUser(), PASSWORD, newIp())).status).toBe(200);
    });

    it('should not count successful logins against the e-mail', async () => {
      const user = await newUser();
      for (let attempt = 0; attempt < 12; attempt++) {
        expect((await login(gateway, user, PASSWORD, newIp())).status).toBe(200);
      }
      expectError(await login(gateway, user, 'wrong-password', newIp()), 401);
    });

    it('should limit the attempts of one client address, counted by its proxy-reported address', async () => {
      const client = newIp();
      for (let attempt = 0; attempt < 5; attempt++) {
        expect((await registerFrom(gateway, uniqueEmail(), client)).status).toBe(201);
      }
      expectThrottled(await registerFrom(gateway, uniqueEmail(), client), 60);
      expectThrottled(await login(gateway, uniqueEmail(), PASSWORD, client), 60);
      // A spoofed X-Forwarded-For sent through the proxy: the proxy appends the real address, which counts.
      expectThrottled(await login(gateway, uniqueEmail(), PASSWORD, `${newIp()}, ${client}`), 60);

      expect((await registerFrom(gateway, uniqueEmail(), newIp())).status).toBe(201);
    });

    it('should stop one address from probing which e-mails have accounts through 409 email_taken', async () => {
      const taken = await Promise.all([0, 1, 2, 3, 4].map(() => newUser()));
      const prober = newIp();
      for (const email of taken.slice(0, 4)) {
        expectError(await registerFrom(gateway, email, prober), 409, { code: 'email_taken' });
      }
      expectThrottled(await registerFrom(gateway, taken[4], prober), 3600);
      expectThrottled(await registerFrom(gateway, uniqueEmail(), prober), 3600);
      // Probing with wrong passwords counts in the same window.
      expectThrottled(await login(gateway, taken[4], 'wrong-password', prober), 3600);
    });
  });

  describe('without a trusted proxy (the default)', () => {
    let gateway: TestGateway;
    let redis: Redis;

    beforeAll(async () => {
      gateway = await TestGateway.start({ AUTH_ATTEMPTS_PER_IP: '5' });
      redis = new Redis(process.env.REDIS_URL as string);
      // Every other test of this run also signs in from 127.0.0.1; start its window afresh.
      await redis.del('gw:{auth}:ip:127.0.0.1');
    });
    afterAll(async () => {
      await redis.quit();
      await gateway.close();
    });

    it('should ignore X-Forwarded-For, so a client cannot pick the address it is counted under', async () => {
      for (let attempt = 0; attempt < 5; attempt++) {
        expectError(await login(gateway, uniqueEmail(), PASSWORD, newIp()), 401);
      }
      expectThrottled(await login(gateway, uniqueEmail(), PASSWORD, newIp()), 60);
      expectThrottled(await registerFrom(gateway, uniqueEmail(), newIp()), 60);
    });
  });

  describe('password hashing under a flood', () => {
    let gateway: TestGateway;

    beforeAll(async () => {
      // Production's hash cost: the flood must outrun one hash at a time.
      gateway = await TestGateway.start({
        PASSWORD_HASH_COST: '15',
        PASSWORD_HASH_CONCURRENCY: '1',
        PASSWORD_HASH_QUEUE: '2',
        AUTH_FAILURES_PER_EMAIL: '30',
      });
    });
    afterAll(() => gateway.close());

    it('should answer 503 at once past the hashing queue, without counting it as a failed attempt', async () => {
      const email = uniqueEmail();
      expect((await registerFrom(gateway, email)).status).toBe(201);
      const answers = await Promise.all(Array.from({ length: 30 }, () => login(gateway, email, 'wrong-password')));

      const statuses = answers.map((answer) => answer.status);
      expect(statuses.filter((status) => status !== 401 && status !== 503)).toEqual([]);
      const refused = answers.filter((answer) => answer.status === 503);
      expect(refused.length).toBeGreaterThanOrEqual(10);
      for (const answer of refused) {
        expectError(answer, 503, { type: 'server_error', code: 'server_overloaded', param: null });
        expect(answer.headers.get('retry-after')).toBe('1');
      }
      // Only the passwords actually checked used up the e-mail's 30 allowed failures.
      const checked = statuses.filter((status) => status === 401).length;
      for (let attempt = checked; attempt < 30; attempt++) {
        expectError(await login(gateway, email, 'wrong-password'), 401);
      }
      expectThrottled(await login(gateway, email, PASSWORD), 900);
    }, 90_000); // up to 30 password checks one after another, at low priority on a busy machine
  });

  describe('while Redis cannot answer', () => {
    let gateway: TestGateway;
    let proxy: TcpProxy;
    let email: string;

    beforeAll(async () => {
      const redisUrl = process.env.REDIS_URL as string;
      proxy = await TcpProxy.start(Number(new URL(redisUrl).port || 6379));
      // Completions keep being served during an outage; sign-ins must not go unthrottled with them.
      gateway = await TestGateway.start({
        REDIS_URL: throughProxy(redisUrl, proxy),
        TRUST_PROXY: '127.0.0.1',
      });
      email = uniqueEmail();
      expect((await registerFrom(gateway, email, newIp())).status).toBe(201);
    });
    afterAll(async () => {
      await gateway.close();
      await proxy.close();
    });

    it('should refuse logins and registrations with 503 and retry-after, not let guesses through unthrottled', async () => {
      await proxy.cut();
      try {
        const answers = [
          await login(gateway, email, 'wrong-password', newIp()),
          await login(gateway, email, PASSWORD, newIp()),
          await registerFrom(gateway, uniqueEmail(), newIp()),
        ];
        for (const answer of answers) {
          expectError(answer, 503, { type: 'server_error', code: 'server_overloaded', param: null });
          expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
          expect(answer.text).not.toContain('accessToken');
        }
      } finally {
        await proxy.restore();
      }

      const afterOutage = await eventually(
        () => login(gateway, email, PASSWORD, newIp()),
        (answer) => answer.status === 200,
        15_000,
        200,
      );
      expect(afterOutage.status).toBe(200);
    }, 60_000);
  });
});
