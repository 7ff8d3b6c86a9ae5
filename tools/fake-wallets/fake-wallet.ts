/**
 * What the fake wallets (fake-alipay.ts, fake-wechatpay.ts) share: real HTTP servers that speak the
 * provider's published protocol, signatures included, with switches for the faults a real wallet
 * shows. Tests and the demo drive them through this interface.
 */
export type WalletOperation = 'create' | 'query' | 'close';

/**
 * - `down`: the connection is cut without an answer.
 * - `slow`: no answer for `slowMs` (the fake's option, 12 s by default: past the gateway's timeout).
 * - `garbage`: 200 with a body that is not the protocol's JSON.
 * - `error`: a well-formed, well-signed business error (Alipay code 40004; WeChat Pay 500 SYSTEM_ERROR).
 * - `bad_signature`: a well-formed answer signed with a key that is not the wallet's.
 */
export type WalletFault = 'down' | 'slow' | 'garbage' | 'error' | 'bad_signature';

export interface NotifyOptions {
  /**
   * - `send` (default): a genuine notification;
   * - `drop`: none is sent (a lost notification);
   * - `forge`: signed with a key that is not the wallet's;
   * - `alter`: a genuine notification whose amount is changed after signing.
   */
  mode?: 'send' | 'drop' | 'forge' | 'alter';
  /** Copies sent at once (duplicates); 1 by default. */
  copies?: number;
  /** Wait this long before sending. */
  delayMs?: number;
  /** Claim this amount (CNY, two decimals) instead of the order's, genuinely signed. */
  amount?: string;
  /** Claim this app id (Alipay) or merchant id (WeChat Pay), genuinely signed. */
  appId?: string;
  /** WeChat Pay only: a Wechatpay-Timestamp this many seconds off now. */
  timestampSkewSeconds?: number;
}

/** Our webhook's answer to one notification. */
export interface NotifyResult {
  status: number;
  body: string;
}

export interface FakeOrder {
  amount: string;
  state: 'WAIT' | 'PAID' | 'CLOSED';
  /** The wallet's trade number once paid. */
  tradeNo: string | null;
  notifyUrl: string;
}

export interface FakeWallet {
  readonly method: 'alipay' | 'wechatpay';
  /** Base URL of the fake. */
  readonly url: string;
  /** The environment the gateway needs to use this fake (every variable of the method except PUBLIC_BASE_URL). */
  readonly env: Record<string, string>;
  /** Calls received per operation whose signature checked out. */
  readonly calls: Record<WalletOperation, number>;
  /** Calls refused because our signature on them did not verify. */
  readonly badlySignedCalls: number;
  order(orderNo: string): FakeOrder | undefined;
  /** The payer pays: the order turns PAID and its notification goes out as asked; resolves with our answers ([] if dropped). */
  pay(orderNo: string, options?: NotifyOptions): Promise<NotifyResult[]>;
  /** Sends the notification of a paid order again, as the wallet resends. */
  notifyAgain(orderNo: string, options?: NotifyOptions): Promise<NotifyResult[]>;
  /** The next `times` calls of `operation` fail with `fault`. */
  failNext(operation: WalletOperation, fault: WalletFault, times?: number): void;
  close(): Promise<void>;
}
