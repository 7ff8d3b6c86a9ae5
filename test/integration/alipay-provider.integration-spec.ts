import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { AlipayConfig, paymentsConfigOf } from 'src/config/payments-config';
import { AlipayProvider } from 'src/modules/payments/providers/alipay/alipay.provider';
import {
  NotificationRejected,
  PaymentOrder,
  ProviderUnavailable,
  RawNotification,
} from 'src/modules/payments/providers/payment-provider';
import { startFakeAlipay } from 'tools/fake-wallets/fake-alipay';
import { FakeWallet, WalletFault, WalletOperation } from 'tools/fake-wallets/fake-wallet';

/** Our webhook stand-in: keeps each notification exactly as it arrived and answers as Alipay expects. */
interface CaptureServer {
  url: string;
  received: RawNotification[];
  close(): Promise<void>;
}

async function startCaptureServer(): Promise<CaptureServer> {
  const received: RawNotification[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('success');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/alipay`;
  return { url, received, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

function configOf(fake: FakeWallet): AlipayConfig {
  const config = paymentsConfigOf({ ...fake.env, PUBLIC_BASE_URL: 'http://gateway.test' });
  return config.alipay!;
}

function newOrder(amount = '12.30'): PaymentOrder {
  return {
    orderNo: randomUUID().replace(/-/g, ''),
    amount,
    amountFen: BigInt(amount.replace('.', '')),
    subject: 'Gateway balance 充值',
    expiresAt: new Date(Date.now() + 15 * 60_000),
  };
}

function rejectionOf(action: () => unknown): string | undefined {
  try {
    action();
  } catch (error) {
    if (error instanceof NotificationRejected) {
      return error.reason;
    }
    throw error;
  }
  return undefined;
}

describe(AlipayProvider.name, () => {
  const SLOW_MS = 1_500;
  let fake: FakeWallet;
  let webhook: CaptureServer;
  let sut: AlipayProvider;

  beforeAll(async () => {
    [fake, webhook] = await Promise.all([startFakeAlipay({ slowMs: SLOW_MS }), startCaptureServer()]);
    sut = new AlipayProvider(configOf(fake), webhook.url, { timeoutMs: 500 });
  });

  afterAll(() => Promise.all([fake.close(), webhook.close()]));

  // Every call our provider makes must carry a signature Alipay accepts.
  afterEach(() => expect(fake.badlySignedCalls).toBe(0));

  /** An order created at the fake, ready to be paid. */
  async function created(amount?: string): Promise<PaymentOrder> {
    const order = newOrder(amount);
    await sut.createPayment(order);
    return order;
  }

  /** The notification our webhook received for a payment made as `pay` says. */
  async function capturedFrom(send: () => Promise<unknown>): Promise<RawNotification[]> {
    const before = webhook.received.length;
    await send();
    return webhook.received.slice(before);
  }

  describe('createPayment', () => {
    it('should hand back the QR code of a waiting trade that will notify our webhook', async () => {
      const order = newOrder('99.01');
      const callsBefore = fake.calls.create;

      const instructions = await sut.createPayment(order);

      expect(fake.calls.create).toBe(callsBefore + 1);
      expect(instructions).toEqual({ qrCode: expect.stringMatching(/^https:\/\/qr\.alipay\.com\/\w+$/) });
      expect(fake.order(order.orderNo)).toEqual({
        amount: '99.01',
        state: 'WAIT',
        tradeNo: null,
        notifyUrl: webhook.url,
        queries: [],
      });
    });

    it('should hand back the same QR code when the order is created again', async () => {
      const order = newOrder();

      const [first, second] = [await sut.createPayment(order), await sut.createPayment(order)];

      expect(second).toEqual(first);
    });
  });

  describe('query', () => {
    it('should see a trade unpaid until the payer pays, then paid with its trade number', async () => {
      const order = await created('7.50');
      await expect(sut.query(order)).resolves.toEqual({ state: 'unpaid', rawStatus: 'WAIT_BUYER_PAY' });

      await expect(fake.pay(order.orderNo, { mode: 'drop' })).resolves.toEqual([]);

      await expect(sut.query(order)).resolves.toEqual({
        state: 'paid',
        evidence: {
          provider: 'alipay',
          tradeNo: fake.order(order.orderNo)!.tradeNo,
          amount: '7.50',
          rawStatus: 'TRADE_SUCCESS',
        },
      });
    });

    it('should see an order Alipay never heard of as unpaid', async () => {
      await expect(sut.query(newOrder())).resolves.toEqual({ state: 'unpaid', rawStatus: 'TRADE_NOT_EXIST' });
    });
  });

  describe('close', () => {
    it('should close a waiting trade, so it can no longer be paid', async () => {
      const order = await created();

      await sut.close(order);

      expect(fake.order(order.orderNo)!.state).toBe('CLOSED');
      await expect(sut.query(order)).resolves.toEqual({ state: 'unpaid', rawStatus: 'TRADE_CLOSED' });
      await expect(fake.pay(order.orderNo)).rejects.toThrow();
    });

    it('should have nothing to close for an order Alipay never heard of', async () => {
      await expect(sut.close(newOrder())).resolves.toBeUndefined();
    });

    it('should refuse to call a paid trade closed', async () => {
      const order = await created();
      await fake.pay(order.orderNo, { mode: 'drop' });

      await expect(sut.close(order)).rejects.toThrow(ProviderUnavailable);
      expect(fake.order(order.orderNo)!.state).toBe('PAID');
    });
  });

  describe('when Alipay fails', () => {
    const FAULTS: WalletFault[] = ['down', 'slow', 'garbage', 'error', 'bad_signature'];
    const OPERATIONS: WalletOperation[] = ['create', 'query', 'close'];
    const cases = FAULTS.flatMap((fault) => OPERATIONS.map((operation) => [operation, fault] as const));
    const callOf: Record<WalletOperation, (order: PaymentOrder) => Promise<unknown>> = {
      create: (order) => sut.createPayment(order),
      query: (order) => sut.query(order),
      close: (order) => sut.close(order),
    };
    /** What each call answers for a waiting order once the fault is over. */
    const HEALTHY_ANSWERS: Record<WalletOperation, unknown> = {
      create: { qrCode: expect.any(String) },
      query: { state: 'unpaid', rawStatus: 'WAIT_BUYER_PAY' },
      close: undefined,
    };

    it.each(cases)('should report %s answered with %s as unavailable, then work again', async (operation, fault) => {
      const order = await created();
      const call = () => callOf[operation](order);
      fake.failNext(operation, fault);

      const error: unknown = await call().catch((caught: unknown) => caught);

      expect(error).toBeInstanceOf(ProviderUnavailable);
      expect((error as Error).message).toMatch(/^Alipay alipay\.trade\.\w+: /);
      await expect(call()).resolves.toEqual(HEALTHY_ANSWERS[operation]);
    });

    it('should not trust an answer signed with a key that is not the one configured as Alipay', async () => {
      const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const misconfigured = new AlipayProvider({ ...configOf(fake), alipayPublicKey: stranger.publicKey }, webhook.url);

      await expect(misconfigured.createPayment(newOrder())).rejects.toThrow(/signature does not verify/);
    });

    it('should be refused by Alipay when we sign with a key Alipay does not know, and say so', async () => {
      const otherFake = await startFakeAlipay();
      const misconfigured = new AlipayProvider(
        { ...configOf(otherFake), privateKey: configOf(fake).privateKey },
        webhook.url,
      );

      try {
        await expect(misconfigured.createPayment(newOrder())).rejects.toThrow(/isv\.invalid-signature/);
        expect(otherFake.badlySignedCalls).toBe(1);
        expect(otherFake.calls.create).toBe(0);
      } finally {
        await otherFake.close();
      }
    });
  });

  describe('verifyNotification', () => {
    it('should accept a genuine notification of a payment, naming the order, trade and amount', async () => {
      const order = await created('12.30');

      const [raw] = await capturedFrom(() => fake.pay(order.orderNo));

      expect(raw.headers['content-type']).toMatch(/^application\/x-www-form-urlencoded/);
      expect(sut.verifyNotification(raw)).toEqual({
        orderNo: order.orderNo,
        paid: true,
        evidence: {
          provider: 'alipay',
          tradeNo: fake.order(order.orderNo)!.tradeNo,
          amount: '12.30',
          rawStatus: 'TRADE_SUCCESS',
        },
      });
    });

    it('should verify duplicates and resends identically', async () => {
      const order = await created();

      const copies = await capturedFrom(() => fake.pay(order.orderNo, { copies: 3 }));
      const resent = await capturedFrom(() => fake.notifyAgain(order.orderNo));

      const verified = [...copies, ...resent].map((raw) => sut.verifyNotification(raw));
      expect(verified).toHaveLength(4);
      expect(new Set(verified.map((notification) => JSON.stringify(notification))).size).toBe(1);
    });

    it('should leave a genuinely signed foreign amount for the caller to refuse', async () => {
      const order = await created('12.30');

      const [raw] = await capturedFrom(() => fake.pay(order.orderNo, { amount: '0.01' }));

      expect(sut.verifyNotification(raw).evidence.amount).toBe('0.01');
    });

    it.each([
      ['forged', { mode: 'forge' }, 'bad_signature'],
      ['altered after signing', { mode: 'alter' }, 'bad_signature'],
      ['naming another app', { appId: '2021000000000001' }, 'wrong_app'],
    ] as const)('should reject a notification %s', async (_, options, reason) => {
      const order = await created();

      const [raw] = await capturedFrom(() => fake.pay(order.orderNo, options));

      expect(rejectionOf(() => sut.verifyNotification(raw))).toBe(reason);
    });

    it.each([
      ['not a form', Buffer.from('{"trade_status":"TRADE_SUCCESS"}')],
      ['empty', Buffer.alloc(0)],
      ['not UTF-8', Buffer.from([0x73, 0x69, 0x67, 0x6e, 0x3d, 0xff, 0xfe])],
      ['too large', Buffer.from(`subject=${'x'.repeat(64 * 1024)}`)],
    ])('should reject a body that is %s as malformed', (_, body) => {
      expect(rejectionOf(() => sut.verifyNotification({ headers: {}, body }))).toBe('malformed');
    });

    it('should reject a genuine notification with a field repeated as malformed', async () => {
      const order = await created();
      const [raw] = await capturedFrom(() => fake.pay(order.orderNo));

      const body = Buffer.concat([raw.body, Buffer.from('&total_amount=9999.00')]);

      expect(rejectionOf(() => sut.verifyNotification({ headers: raw.headers, body }))).toBe('malformed');
    });
  });

  describe('reply', () => {
    it('should tell Alipay success only once the credit is committed', () => {
      expect(sut.reply('committed')).toEqual({ status: 200, contentType: 'text/plain', body: 'success' });
      expect(sut.reply('retry')).toEqual({ status: 200, contentType: 'text/plain', body: 'fail' });
      expect(sut.reply('rejected')).toEqual({ status: 200, contentType: 'text/plain', body: 'fail' });
    });
  });

  describe("the fake's pay route", () => {
    it('should pay the order and show what our webhook answered', async () => {
      const order = await created();

      const response = await fetch(`${fake.url}/fake/pay/${order.orderNo}`, { method: 'POST' });

      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ notified: [{ status: 200, body: 'success' }] });
      expect(fake.order(order.orderNo)!.state).toBe('PAID');
    });

    it('should answer 404 for an order it does not know', async () => {
      const response = await fetch(`${fake.url}/fake/pay/${newOrder().orderNo}`, { method: 'POST' });

      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ error: expect.any(String) });
    });
  });
});
