import { randomBytes } from 'node:crypto';
import { createServer, IncomingMessage, ServerResponse } from 'node:http';
import { AddressInfo } from 'node:net';
import { fenToAmount } from 'src/modules/payments/providers/wechatpay/wechatpay-format';
import {
  FakeOrder,
  FakeWallet,
  NotifyOptions,
  NotifyResult,
  WalletCallBook,
  WalletFault,
  WalletOperation,
} from 'tools/fake-wallets/fake-wallet';
import { sendNotification } from 'tools/fake-wallets/fake-wechatpay-notify';
import { Answer, FakeWechatPayOrders } from 'tools/fake-wallets/fake-wechatpay-orders';
import {
  identityEnv,
  isSignedByMerchant,
  newIdentity,
  platformSignature,
} from 'tools/fake-wallets/fake-wechatpay-protocol';

export interface FakeWechatPayOptions {
  port?: number;
  /** How long a `slow` fault holds its answer: past the gateway's 10 s timeout by default. */
  slowMs?: number;
}

const MAX_REQUEST_BYTES = 1024 * 1024;
const NATIVE_PATH = '/v3/pay/transactions/native';
const ORDER_PATH = /^\/v3\/pay\/transactions\/out-trade-no\/([^/]+)(\/close)?$/;
const CONTROL_PAY_PATH = /^\/fake\/pay\/([^/]+)$/;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) {
        req.destroy(new Error('request too large'));
      } else {
        chunks.push(chunk);
      }
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parseJson(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function sendJson(res: ServerResponse, status: number, body: object): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}

/**
 * A fake api.mch.weixin.qq.com for Native pay: it checks our Authorization signature on every call,
 * signs every answer with its platform key, and notifies the order's notify_url when the payer pays.
 * `POST /fake/pay/<orderNo>` lets a person running the demo pay an order.
 */
export async function startFakeWechatPay(options: FakeWechatPayOptions = {}): Promise<FakeWallet> {
  const identity = await newIdentity();
  const orders = new FakeWechatPayOrders(identity);
  const slowMs = options.slowMs ?? 12_000;
  const callBook = new WalletCallBook((orderNo) => orders.get(orderNo)?.state);
  const timers = new Set<NodeJS.Timeout>();
  let badlySignedCalls = 0;

  /** A pause that close() cancels, so a stopped fake leaves no timer behind. */
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timers.add(timer);
    });

  /** Which operation a request is, about which order, with the answer it gets when no fault is set. */
  function route(method: string, url: URL, body: string): [WalletOperation, string | undefined, () => Answer] | null {
    if (method === 'POST' && url.pathname === NATIVE_PATH) {
      const created = parseJson(body);
      const orderNo = typeof created?.out_trade_no === 'string' ? created.out_trade_no : undefined;
      return ['create', orderNo, () => orders.create(created)];
    }
    const match = ORDER_PATH.exec(url.pathname);
    const outTradeNo = match ? decodeURIComponent(match[1]) : '';
    if (match && method === 'GET' && !match[2]) {
      return ['query', outTradeNo, () => orders.query(outTradeNo, url.searchParams.get('mchid'))];
    }
    if (match && method === 'POST' && match[2]) {
      return ['close', outTradeNo, () => orders.close(outTradeNo, parseJson(body))];
    }
    return null;
  }

  function send(res: ServerResponse, answer: Answer, signingKey = identity.platform.privateKey): void {
    const text = answer.body === undefined ? '' : JSON.stringify(answer.body);
    const headers: Record<string, string> = {
      ...platformSignature(identity, text, { key: signingKey }),
      'Request-ID': randomBytes(16).toString('hex'),
    };
    if (text !== '') {
      headers['Content-Type'] = 'application/json; charset=utf-8';
    }
    res.writeHead(answer.status, headers).end(text);
  }

  async function serveApi(req: IncomingMessage, res: ServerResponse, url: URL, body: string): Promise<void> {
    const method = req.method ?? '';
    const pathWithQuery = `${url.pathname}${url.search}`;
    if (!isSignedByMerchant(identity, { method, pathWithQuery, body, authorization: req.headers.authorization })) {
      badlySignedCalls += 1;
      return send(res, { status: 401, body: { code: 'SIGN_ERROR', message: '签名错误' } });
    }
    const found = route(method, url, body);
    if (!found) {
      return send(res, { status: 404, body: { code: 'NOT_FOUND', message: '无此接口' } });
    }
    const [operation, orderNo, answer] = found;
    switch (callBook.receive(operation, orderNo)) {
      case 'down':
        req.socket.destroy();
        return;
      case 'slow':
        await sleep(slowMs);
        return send(res, answer());
      case 'garbage':
        // Well signed, so that what the gateway must refuse is the body itself.
        return send(res, { status: 200, body: ['<html>502 Bad Gateway</html>'] });
      case 'error':
        return send(res, { status: 500, body: { code: 'SYSTEM_ERROR', message: '系统错误' } });
      case 'bad_signature':
        return send(res, answer(), identity.stranger.privateKey);
      case undefined:
        return send(res, answer());
    }
  }

  async function notify(orderNo: string, notifyOptions: NotifyOptions = {}): Promise<NotifyResult[]> {
    const order = orders.get(orderNo);
    if (order?.state !== 'PAID') {
      throw new Error(`fake WeChat Pay: order ${orderNo} is not paid`);
    }
    if (notifyOptions.delayMs) {
      await sleep(notifyOptions.delayMs);
    }
    return sendNotification(identity, order, notifyOptions);
  }

  async function controlPay(res: ServerResponse, orderNo: string): Promise<void> {
    const order = orders.get(orderNo);
    if (!order) {
      return sendJson(res, 404, { error: `no order ${orderNo}` });
    }
    if (order.state !== 'WAIT') {
      return sendJson(res, 409, { error: `order ${orderNo} is ${order.state}` });
    }
    orders.pay(orderNo);
    try {
      sendJson(res, 200, { notified: await notify(orderNo, {}) });
    } catch (failure) {
      sendJson(res, 502, { error: `paid, but the notification was not delivered: ${(failure as Error).message}` });
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://fake');
    const control = CONTROL_PAY_PATH.exec(url.pathname);
    if (control && req.method === 'POST') {
      return controlPay(res, decodeURIComponent(control[1]));
    }
    return serveApi(req, res, url, body);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => req.socket.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    method: 'wechatpay',
    url,
    env: identityEnv(identity, url),
    calls: callBook.calls,
    get badlySignedCalls() {
      return badlySignedCalls;
    },
    order(orderNo: string): FakeOrder | undefined {
      const order = orders.get(orderNo);
      return (
        order && {
          amount: fenToAmount(order.amountFen),
          state: order.state,
          tradeNo: order.transactionId,
          notifyUrl: order.notifyUrl,
          queries: callBook.queriesOf(orderNo),
        }
      );
    },
    async pay(orderNo: string, notifyOptions: NotifyOptions = {}): Promise<NotifyResult[]> {
      orders.pay(orderNo);
      return notify(orderNo, notifyOptions);
    },
    notifyAgain: notify,
    failNext(operation: WalletOperation, fault: WalletFault, times = 1, orderNo?: string): void {
      callBook.plan(operation, fault, times, orderNo);
    },
    close(): Promise<void> {
      timers.forEach((timer) => clearTimeout(timer));
      timers.clear();
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((failure) => (failure ? reject(failure) : resolve())));
    },
  };
}
