/** The jobs of the `payments` queue and their payloads (QueueName.Payments). */
export enum PaymentJob {
  /** Credit an order a verified notification says is paid; job id = the order's id. */
  Confirm = 'confirm',
  /** Ask the provider about a pending order (the poller, or an operator's recheck); at expiry, close it. */
  Reconcile = 'reconcile',
  /** Reconcile pending orders whose expiry passed long ago: their job chain was lost. */
  SweepOverdue = 'sweep-overdue',
}

/** What the provider said of a payment (the stored evidence of an order). */
export interface EvidencePayload {
  provider: string;
  tradeNo: string;
  amount: string;
  rawStatus: string;
}

export type PaymentJobPayloads = {
  [PaymentJob.Confirm]: { orderId: string; evidence: EvidencePayload };
  /** `sweep`: a last query of an overdue order, which starts no poll chain (the sweep itself comes back). */
  [PaymentJob.Reconcile]: { orderId: string; attempt: number; via: 'poller' | 'recheck' | 'sweep' };
  [PaymentJob.SweepOverdue]: Record<string, never>;
};
