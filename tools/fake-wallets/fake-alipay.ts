import { generateKeyPair, KeyObject, randomInt } from 'node:crypto';
import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { parseBeijingTime, responseKeyOf } from 'src/modules/payments/providers/alipay/alipay-protocol';
import { alipaySigningString, signRsa2, verifyRsa2 } from 'src/modules/payments/providers/alipay/alipay-signature';
import { notifyPaid } from 'tools/fake-wallets/fake-alipay-notify';
import { AlipayContent, businessError, FakeTradeBook, invalidArguments } from 'tools/fake-wallets/fake-alipay-trades';
import {
  FakeOrder,
  FakeWallet,
  NotifyOptions,
  NotifyResult,
  WalletCallBook,
  WalletFault,
  WalletOperation,
} from 'tools/fake-wallets/fake-wallet';

export interface FakeAlipayOptions {
  port?: number;
  /** How long a `slow` fault keeps the caller waiting: past the gateway's 10 s timeout by default. */
  slowMs?: number;
}

interface KeyPair {
  publicKey: KeyObject;
  privateKey: KeyObject;
}

interface FakeAlipayKeys {
  /** The merchant app's pair: its public half checks our requests; the private half goes to the gateway. */
  merchant: KeyPair;
  /** Alipay's own pair: signs answers and notifications; the public half goes to the gateway. */
  alipay: KeyPair;
  /** Nobody's pair: forged notifications and badly signed answers. */
  stranger: KeyPair;
}

const OPERATIONS = new Map<string, WalletOperation>([
  ['alipay.trade.precreate', 'create'],
  ['alipay.trade.query', 'query'],
  ['alipay.trade.close', 'close'],
]);
const MAX_REQUEST_BYTES = 1024 * 1024;
/** Alipay refuses a request whose timestamp is this far from its clock. */
const MAX_CLOCK_SKEW_MS = 10 * 60_000;
const PAY_ROUTE = /^\/fake\/pay\/([^/?]+)$/;

const newKeyPair = () => promisify(generateKeyPair)('rsa', { modulusLength: 2048 });

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
}

function parseObject(text: string | undefined): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text ?? '');
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** The request's parameters: SDKs put the common ones in the query string, ours sends all in the form. */
function gatewayParams(req: IncomingMessage, body: string): Record<string, string> {
  const params: Record<string, string> = {};
  const query = new URL(req.url ?? '/', 'http://fake').searchParams;
  for (const [key, value] of [...query, ...new URLSearchParams(body)]) {
    params[key] ??= value;
  }
  return params;
}

/** A common parameter Alipay would refuse, as its sub_code; null when they are all fine. */
function commonParamProblem(params: Record<string, string>): string | null {
  const timestamp = parseBeijingTime(params.timestamp ?? '');
  if (!timestamp || Math.abs(timestamp.getTime() - Date.now()) > MAX_CLOCK_SKEW_MS) {
    return 'isv.invalid-timestamp';
  }
  if (params.charset?.toLowerCase() !== 'utf-8') {
    return 'isv.invalid-charset';
  }
  if (params.format !== undefined && params.format !== 'JSON') {
    return 'isv.invalid-format';
  }
  return params.version === '1.0' ? null : 'isv.invalid-version';
}

class FakeAlipay implements FakeWallet {
  readonly method = 'alipay';
  badlySignedCalls = 0;
  url = '';
  env: Record<string, string> = {};
  private readonly book = new FakeTradeBook();
  private readonly callBook = new WalletCallBook((orderNo) => this.book.get(orderNo)?.state);
  readonly server: Server;

  constructor(
    private readonly appId: string,
    private readonly keys: FakeAlipayKeys,
    private readonly slowMs: number,
  ) {
    this.server = createServer((req, res) => this.receive(req, res));
  }

  get calls(): Record<WalletOperation, number> {
    return this.callBook.calls;
  }

  order(orderNo: string): FakeOrder | undefined {
    const trade = this.book.get(orderNo);
    return (
      trade && {
        amount: trade.amount,
        state: trade.state,
        tradeNo: trade.tradeNo,
        notifyUrl: trade.notifyUrl,
        queries: this.callBook.queriesOf(orderNo),
      }
    );
  }

  async pay(orderNo: string, options: NotifyOptions = {}): Promise<NotifyResult[]> {
    const trade = this.book.pay(orderNo);
    return await this.notify(trade.outTradeNo, options);
  }

  async notifyAgain(orderNo: string, options: NotifyOptions = {}): Promise<NotifyResult[]> {
    if (this.book.get(orderNo)?.state !== 'PAID') {
      throw new Error(`fake Alipay: trade ${orderNo} is not paid, so there is no notification to resend`);
    }
    return await this.notify(orderNo, options);
  }

  failNext(operation: WalletOperation, fault: WalletFault, times = 1, orderNo?: string): void {
    this.callBook.plan(operation, fault, times, orderNo);
  }

  close(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.close((error) => (error ? reject(error) : resolve()));
      // Also ends the connections a `slow` fault holds, and their timers with them.
      this.server.closeAllConnections();
    });
  }

  private notify(orderNo: string, options: NotifyOptions): Promise<NotifyResult[]> {
    const signer = {
      appId: this.appId,
      alipayKey: this.keys.alipay.privateKey,
      strangerKey: this.keys.stranger.privateKey,
    };
    return notifyPaid(this.book.get(orderNo)!, signer, options);
  }

  private receive(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_REQUEST_BYTES) {
        chunks.push(chunk);
      }
    });
    req.on('end', () => {
      if (size > MAX_REQUEST_BYTES) {
        sendJson(res, 413, { error: 'request too large' });
      } else {
        this.route(req, res, Buffer.concat(chunks).toString('utf8'));
      }
    });
    req.on('error', () => res.destroy());
  }

  private route(req: IncomingMessage, res: ServerResponse, body: string): void {
    const path = (req.url ?? '/').split('?')[0];
    const payMatch = PAY_ROUTE.exec(path);
    if (req.method === 'POST' && path === '/gateway.do') {
      this.gateway(res, gatewayParams(req, body));
    } else if (req.method === 'POST' && payMatch) {
      this.payFromControlRoute(res, decodeURIComponent(payMatch[1])).catch(() => res.destroy());
    } else {
      sendJson(res, 404, { error: 'not found' });
    }
  }

  /** For people running the demo: pays the order as a payer would, and shows what our webhook said. */
  private async payFromControlRoute(res: ServerResponse, orderNo: string): Promise<void> {
    const state = this.book.get(orderNo)?.state;
    if (state === undefined) {
      sendJson(res, 404, { error: `no order ${orderNo}` });
    } else if (state !== 'WAIT') {
      sendJson(res, 409, { error: `order ${orderNo} is ${state}` });
    } else {
      try {
        sendJson(res, 200, { notified: await this.pay(orderNo) });
      } catch (error) {
        sendJson(res, 502, { error: `the notification failed: ${error instanceof Error ? error.message : 'unknown'}` });
      }
    }
  }

  private gateway(res: ServerResponse, params: Record<string, string>): void {
    const operation = OPERATIONS.get(params.method ?? '');
    if (!operation) {
      this.answer(res, 'error_response', invalidArguments('isv.invalid-method', 'unknown method'));
      return;
    }
    const key = responseKeyOf(params.method);
    const signed = alipaySigningString(params, ['sign']);
    if (params.sign_type !== 'RSA2' || !verifyRsa2(signed, params.sign ?? '', this.keys.merchant.publicKey)) {
      this.badlySignedCalls++;
      this.answer(res, key, invalidArguments('isv.invalid-signature', 'invalid signature'));
      return;
    }
    const problem = params.app_id === this.appId ? commonParamProblem(params) : 'isv.invalid-app-id';
    const biz = parseObject(params.biz_content);
    if (problem || !biz) {
      this.answer(res, key, invalidArguments(problem ?? 'isv.invalid-biz-content', 'invalid arguments'));
      return;
    }
    const orderNo = typeof biz.out_trade_no === 'string' ? biz.out_trade_no : undefined;
    const fault = this.callBook.receive(operation, orderNo);
    this.answerWithFault(res, key, fault, () => this.perform(operation, biz, params));
  }

  /** `down`, `garbage` and `error` leave the trade as it was; `slow` acts only if the caller still waits. */
  private answerWithFault(
    res: ServerResponse,
    key: string,
    fault: WalletFault | undefined,
    perform: () => AlipayContent,
  ): void {
    switch (fault) {
      case undefined:
        this.answer(res, key, perform());
        break;
      case 'down':
        res.socket?.destroy();
        break;
      case 'garbage':
        res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>502 Bad Gateway</body></html>');
        break;
      case 'error':
        this.answer(res, key, businessError('ACQ.SYSTEM_ERROR', 'system error'));
        break;
      case 'bad_signature':
        this.answer(res, key, perform(), this.keys.stranger.privateKey);
        break;
      case 'slow': {
        const timer = setTimeout(() => this.answer(res, key, perform()), this.slowMs);
        res.once('close', () => clearTimeout(timer));
        break;
      }
    }
  }

  private perform(operation: WalletOperation, biz: Record<string, unknown>, params: Record<string, string>) {
    switch (operation) {
      case 'create':
        return this.book.precreate(biz, params.notify_url ?? '');
      case 'query':
        return this.book.query(biz);
      case 'close':
        return this.book.close(biz);
    }
  }

  /**
   * Signs the response member's text as sent. Slashes are escaped as Alipay escapes them, so a client
   * that re-serializes the parsed response before verifying fails here as it would against Alipay.
   */
  private answer(res: ServerResponse, key: string, content: AlipayContent, signingKey = this.keys.alipay.privateKey) {
    const text = JSON.stringify(content).replace(/\//g, '\\/');
    const body = `{"${key}":${text},"sign":"${signRsa2(text, signingKey)}"}`;
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(body);
  }
}

/** Starts a fake Alipay gateway on 127.0.0.1 with fresh keys and app id (see FakeWallet). */
export async function startFakeAlipay(options: FakeAlipayOptions = {}): Promise<FakeWallet> {
  const [merchant, alipay, stranger] = await Promise.all([newKeyPair(), newKeyPair(), newKeyPair()]);
  const appId = `2021${String(randomInt(1e11, 1e12))}`;
  const fake = new FakeAlipay(appId, { merchant, alipay, stranger }, options.slowMs ?? 12_000);
  await new Promise<void>((resolve, reject) => {
    fake.server.once('error', reject);
    fake.server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  fake.url = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
  fake.env = {
    ALIPAY_APP_ID: appId,
    ALIPAY_PRIVATE_KEY: merchant.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    ALIPAY_PUBLIC_KEY: alipay.publicKey.export({ type: 'spki', format: 'pem' }) as string,
    ALIPAY_GATEWAY_URL: `${fake.url}/gateway.do`,
  };
  return fake;
}
