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
  state: TradeState;
  /** The wallet's trade number once paid. */
  tradeNo: string | null;
  notifyUrl: string;
  /** What each well-signed query of this order met, in order: a fault, or the state the wallet answered. */
  queries: QueryOutcome[];
}

export type TradeState = 'WAIT' | 'PAID' | 'CLOSED';
export type QueryOutcome = WalletFault | TradeState;

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
  /**
   * The next `times` calls of `operation` fail with `fault`; with `orderNo`, only calls about that order,
   * so that a poll of some other order still pending cannot take the fault a test meant for its own.
   */
  failNext(operation: WalletOperation, fault: WalletFault, times?: number, orderNo?: string): void;
  close(): Promise<void>;
}

/** The faults set with failNext, and what each order's queries met: the part both fakes keep alike. */
export class WalletCallBook {
  readonly calls: Record<WalletOperation, number> = { create: 0, query: 0, close: 0 };
  private readonly faults: { operation: WalletOperation; fault: WalletFault; orderNo?: string }[] = [];
  private readonly queriesByOrder = new Map<string, QueryOutcome[]>();

  /** `stateOf` reads an order's state as the wallet would answer it now. */
  constructor(private readonly stateOf: (orderNo: string) => TradeState | undefined) {}

  plan(operation: WalletOperation, fault: WalletFault, times = 1, orderNo?: string): void {
    this.faults.push(...Array.from({ length: times }, () => ({ operation, fault, orderNo })));
  }

  /** Counts a well-signed call and takes the first fault planned for it, if any. */
  receive(operation: WalletOperation, orderNo: string | undefined): WalletFault | undefined {
    this.calls[operation] += 1;
    const index = this.faults.findIndex(
      (planned) => planned.operation === operation && (planned.orderNo === undefined || planned.orderNo === orderNo),
    );
    const fault = index === -1 ? undefined : this.faults.splice(index, 1)[0].fault;
    if (operation === 'query' && orderNo !== undefined) {
      const outcome = fault ?? this.stateOf(orderNo);
      if (outcome !== undefined) {
        this.queriesByOrder.set(orderNo, [...this.queriesOf(orderNo), outcome]);
      }
    }
    return fault;
  }

  queriesOf(orderNo: string): QueryOutcome[] {
    return this.queriesByOrder.get(orderNo) ?? [];
  }
}
