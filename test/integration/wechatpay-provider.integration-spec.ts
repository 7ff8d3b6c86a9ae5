import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { EnvDto } from 'src/config/env.dto';
import { paymentsConfigOf, WechatPayConfig } from 'src/config/payments-config';
import {
  NotificationRejected,
  PaymentOrder,
  ProviderUnavailable,
  RawNotification,
} from 'src/modules/payments/providers/payment-provider';
import { WechatPayProvider } from 'src/modules/payments/providers/wechatpay/wechatpay.provider';
import { FakeWallet, NotifyOptions, WalletFault, WalletOperation } from 'tools/fake-wallets/fake-wallet';
import { startFakeWechatPay } from 'tools/fake-wallets/fake-wechatpay';

/** Short enough that a `slow` answer (the fake holds it SLOW_MS) costs the suite little. */
const TIMEOUT_MS = 500;
const SLOW_MS = 1_500;

/** The provider's configuration, read from the fake's env as the gateway reads its own. */
function configOf(fake: FakeWallet): WechatPayConfig {
  const env = { ...fake.env, PUBLIC_BASE_URL: 'http://127.0.0.1:1' } as unknown as EnvDto;
  return paymentsConfigOf(env).wechatpay!;
}

function newOrder(amountFen = 1230n): PaymentOrder {
  const amount = `${amountFen / 100n}.${(amountFen % 100n).toString().padStart(2, '0')}`;
  const expiresAt = new Date(Date.now() + 15 * 60_000);
  return { orderNo: randomUUID().replace(/-/g, ''), amount, amountFen, subject: 'Balance top-up', expiresAt };
}

/**
 * Our webhook in miniature: keeps each notification as it arrived and answers as the provider says (a
 * getter, because the provider is built with the webhook's URL).
 */
async function startWebhook(
  providerOf: () => WechatPayProvider,
): Promise<{ url: string; received: RawNotification[]; server: Server }> {
  const received: RawNotification[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = { headers: req.headers, body: Buffer.concat(chunks) };
      received.push(raw);
      let outcome: 'committed' | 'rejected' = 'committed';
      try {
        providerOf().verifyNotification(raw);
      } catch {
        outcome = 'rejected';
      }
      const reply = providerOf().reply(outcome);
      res.writeHead(reply.status, reply.contentType ? { 'Content-Type': reply.contentType } : {}).end(reply.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/wechatpay`, received, server };
}

function rejectionOf(provider: WechatPayProvider, raw: RawNotification): string {
  try {
    provider.verifyNotification(raw);
  } catch (error) {
    expect(error).toBeInstanceOf(NotificationRejected);
    return (error as NotificationRejected).reason;
  }
  throw new Error('the notification was accepted');
}

const REFUSED = { status: 400, body: expect.stringMatching(/^\{"code":"FAIL","message":".+"\}$/) };

describe(WechatPayProvider.name, () => {
  let fake: FakeWallet;
  let config: WechatPayConfig;
  let sut: WechatPayProvider;
  let webhook: Awaited<ReturnType<typeof startWebhook>>;

  beforeAll(async () => {
    fake = await startFakeWechatPay({ slowMs: SLOW_MS });
    config = configOf(fake);
    webhook = await startWebhook(() => sut);
    sut = new WechatPayProvider(config, webhook.url, { timeoutMs: TIMEOUT_MS });
  });

  afterEach(() => {
    expect(fake.badlySignedCalls).toBe(0);
  });

  afterAll(async () => {
    await fake.close();
    await new Promise((resolve) => webhook.server.close(resolve));
  });

  /** An order created at the fake, with the notification of its payment as our webhook received it. */
  async function paidOrder(): Promise<{ order: PaymentOrder; raw: RawNotification }> {
    const order = newOrder();
    await sut.createPayment(order);
    const before = webhook.received.length;
    await expect(fake.pay(order.orderNo)).resolves.toEqual([{ status: 204, body: '' }]);
    return { order, raw: webhook.received[before] };
  }

  describe('calls', () => {
    it('should create a Native payment and hand over its code URL', async () => {
      const order = newOrder();

      const instructions = await sut.createPayment(order);

      expect(instructions).toEqual({ codeUrl: expect.stringMatching(/^weixin:\/\/wxpay\/bizpayurl\?pr=\S+$/) });
      expect(fake.order(order.orderNo)).toEqual({
        amount: '12.30',
        state: 'WAIT',
        tradeNo: null,
        notifyUrl: webhook.url,
        queries: [],
      });
    });

    it('should find an order unpaid until the payer pays, then paid with the trade number and amount', async () => {
      const order = newOrder(1n);
      await sut.createPayment(order);

      await expect(sut.query(order)).resolves.toEqual({ state: 'unpaid', rawStatus: 'NOTPAY' });
      await expect(fake.pay(order.orderNo, { mode: 'drop' })).resolves.toEqual([]);
      await expect(sut.query(order)).resolves.toEqual({
        state: 'paid',
        evidence: {
          provider: 'wechatpay',
          tradeNo: fake.order(order.orderNo)!.tradeNo,
          amount: '0.01',
          rawStatus: 'SUCCESS',
        },
      });
    });

    it('should find an order WeChat Pay never heard of unpaid', async () => {
      await expect(sut.query(newOrder())).resolves.toEqual({ state: 'unpaid', rawStatus: 'ORDER_NOT_EXIST' });
    });

    it('should close a waiting order, which is then CLOSED', async () => {
      const order = newOrder();
      await sut.createPayment(order);

      await sut.close(order);

      expect(fake.order(order.orderNo)!.state).toBe('CLOSED');
      await expect(sut.query(order)).resolves.toEqual({ state: 'unpaid', rawStatus: 'CLOSED' });
    });

    it('should fail to close a paid order', async () => {
      const order = newOrder();
      await sut.createPayment(order);
      await fake.pay(order.orderNo, { mode: 'drop' });

      await expect(sut.close(order)).rejects.toThrow(
        new ProviderUnavailable('WeChat Pay close: answered 400 ORDER_PAID'),
      );
    });

    const faults: WalletFault[] = ['down', 'slow', 'garbage', 'error', 'bad_signature'];
    const operations: WalletOperation[] = ['create', 'query', 'close'];
    it.each(operations.flatMap((operation) => faults.map((fault) => [operation, fault] as const)))(
      'should be unavailable when %s meets the fault %s, and work again after it',
      async (operation, fault) => {
        const order = newOrder();
        if (operation !== 'create') {
          await sut.createPayment(order);
        }
        const call = {
          create: () => sut.createPayment(order),
          query: () => sut.query(order),
          close: () => sut.close(order),
        }[operation];
        fake.failNext(operation, fault);

        const failure: unknown = await call().catch((error: unknown) => error);

        expect(failure).toBeInstanceOf(ProviderUnavailable);
        expect((failure as Error).message).toMatch(new RegExp(`^WeChat Pay ${operation}: `));
        await call();
      },
    );

    it('should be unavailable for as many calls as a fault is set for', async () => {
      const order = newOrder();
      fake.failNext('create', 'error', 2);

      await expect(sut.createPayment(order)).rejects.toThrow('WeChat Pay create: answered 500 SYSTEM_ERROR');
      await expect(sut.createPayment(order)).rejects.toThrow('WeChat Pay create: answered 500 SYSTEM_ERROR');
      await expect(sut.createPayment(order)).resolves.toHaveProperty('codeUrl');
    });

    it('should not believe answers signed under a platform key id it does not know', async () => {
      const other = new WechatPayProvider({ ...config, platformPublicKeyId: 'PUB_KEY_ID_OTHER' }, webhook.url);

      await expect(other.createPayment(newOrder())).rejects.toThrow(
        'WeChat Pay create: the answer is signed with a key that is not the platform key we know',
      );
    });

    it('should not believe a query answer about another app', async () => {
      const order = newOrder();
      await sut.createPayment(order);
      const otherApp = new WechatPayProvider({ ...config, appId: 'wx0000000000000000' }, webhook.url);

      await expect(otherApp.query(order)).rejects.toThrow(
        'WeChat Pay query: the answer is of another merchant, app or order',
      );
    });

    it('should be refused by WeChat Pay when it signs with a key that is not the merchant key', async () => {
      const stranger = await startFakeWechatPay();
      try {
        const wrongKey = {
          ...configOf(stranger),
          privateKey: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey,
        };

        await expect(new WechatPayProvider(wrongKey, webhook.url).createPayment(newOrder())).rejects.toThrow(
          'WeChat Pay create: answered 401 SIGN_ERROR',
        );
        expect(stranger.badlySignedCalls).toBe(1);
        expect(stranger.calls.create).toBe(0);
      } finally {
        await stranger.close();
      }
    });
  });

  describe('notifications', () => {
    it('should verify a genuine notification and acknowledge it with 204', async () => {
      const { order, raw } = await paidOrder();

      expect(sut.verifyNotification(raw)).toEqual({
        orderNo: order.orderNo,
        paid: true,
        evidence: {
          provider: 'wechatpay',
          tradeNo: fake.order(order.orderNo)!.tradeNo,
          amount: '12.30',
          rawStatus: 'SUCCESS',
        },
      });
    });

    it('should verify a notification sent again, and duplicates sent at once, as the same payment', async () => {
      const { order, raw } = await paidOrder();
      const before = webhook.received.length;

      await expect(fake.notifyAgain(order.orderNo)).resolves.toEqual([{ status: 204, body: '' }]);
      await expect(fake.notifyAgain(order.orderNo, { copies: 3 })).resolves.toEqual(
        Array(3).fill({ status: 204, body: '' }),
      );
      const resent = webhook.received.slice(before).map((copy) => sut.verifyNotification(copy));
      expect(resent).toEqual(Array(4).fill(sut.verifyNotification(raw)));
    });

    it('should pass on a genuinely claimed amount, which the caller compares with the order', async () => {
      const { order } = await paidOrder();
      const before = webhook.received.length;

      await expect(fake.notifyAgain(order.orderNo, { amount: '0.10' })).resolves.toEqual([{ status: 204, body: '' }]);
      expect(sut.verifyNotification(webhook.received[before]).evidence.amount).toBe('0.10');
    });

    it('should wait before notifying when asked to', async () => {
      const { order } = await paidOrder();
      const started = Date.now();

      await fake.notifyAgain(order.orderNo, { delayMs: 300 });

      expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    });

    it.each([
      ['forged with another key', 'bad_signature', { mode: 'forge' as const }],
      ['altered after signing', 'bad_signature', { mode: 'alter' as const }],
      ['signed ten minutes ago', 'stale_timestamp', { timestampSkewSeconds: -600 }],
      ['signed ten minutes ahead', 'stale_timestamp', { timestampSkewSeconds: 600 }],
      ['of another merchant', 'wrong_app', { appId: '1900000000' }],
    ])('should refuse a notification %s with 400 (%s)', async (_name, reason, options: NotifyOptions) => {
      const { order } = await paidOrder();
      const before = webhook.received.length;

      await expect(fake.notifyAgain(order.orderNo, options)).resolves.toEqual([REFUSED]);
      expect(rejectionOf(sut, webhook.received[before])).toBe(reason);
    });

    it('should refuse a notification under a platform key id it does not know', async () => {
      const { raw } = await paidOrder();

      expect(rejectionOf(sut, { ...raw, headers: { ...raw.headers, 'wechatpay-serial': 'PUB_KEY_ID_OTHER' } })).toBe(
        'unknown_key',
      );
    });

    it('should refuse a notification it cannot decrypt with its APIv3 key', async () => {
      const { raw } = await paidOrder();
      const otherKey = new WechatPayProvider({ ...config, apiV3Key: randomBytes(32) }, webhook.url);

      expect(rejectionOf(otherKey, raw)).toBe('decrypt_failed');
    });

    it('should refuse garbage as malformed', async () => {
      const { raw } = await paidOrder();

      expect(rejectionOf(sut, { headers: {}, body: Buffer.from('garbage') })).toBe('malformed');
      expect(rejectionOf(sut, { headers: raw.headers, body: Buffer.from('<xml>garbage</xml>') })).toBe('malformed');
    });

    it('should answer WeChat Pay in its own protocol', () => {
      expect(sut.reply('committed')).toEqual({ status: 204 });
      for (const [outcome, status] of [
        ['retry', 500],
        ['rejected', 400],
      ] as const) {
        const reply = sut.reply(outcome);
        expect(reply).toMatchObject({ status, contentType: 'application/json' });
        expect(JSON.parse(reply.body!)).toEqual({ code: 'FAIL', message: expect.any(String) });
      }
    });
  });

  describe('the demo control route', () => {
    it('should pay an order and answer with what the webhook said', async () => {
      const order = newOrder();
      await sut.createPayment(order);

      const response = await fetch(`${fake.url}/fake/pay/${order.orderNo}`, { method: 'POST' });

      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ notified: [{ status: 204, body: '' }] });
      expect(fake.order(order.orderNo)!.state).toBe('PAID');
    });

    it('should answer 404 JSON for an order it does not know', async () => {
      const response = await fetch(`${fake.url}/fake/pay/${newOrder().orderNo}`, { method: 'POST' });

      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ error: expect.stringMatching(/^no order /) });
    });
  });
});
