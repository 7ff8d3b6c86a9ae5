/** Queues and their jobs. Each job name has exactly one handler in the worker (checked at boot). */
export enum QueueName {
  Billing = 'billing',
  Payments = 'payments',
  ChainWatch = 'chain-watch',
  Mail = 'mail',
}

export enum BillingJob {
  /** Settle the usage recorded in Redis so far, in batches; enqueued by API processes after recording. */
  SettleRecorded = 'settle-recorded',
  SweepHolds = 'sweep-holds',
  /** Push balances adjusted in Postgres that Redis missed (BalanceResyncService). */
  ResyncBalances = 'resync-balances',
}

/** A completion's usage as the API records it in Redis and a worker settles it. */
export interface SettleCompletionPayload {
  /** The completion's x-request-id: the usage record's key, so a second settlement charges nothing. */
  requestId: string;
  accountId: string;
  keyId: string;
  modelId: string;
  channelId: string;
  /** Prices at request time (nano-dollars per million tokens, decimal strings: bigint does not survive JSON). */
  inputPrice: string;
  outputPrice: string;
  /** Absent (as in records of earlier versions): cached and cache-write tokens cost the input price. */
  cachedInputPrice?: string;
  cacheWriteInputPrice?: string;
  /** The account group's price multiplier in millionths (decimal string); absent: 1×. */
  priceMultiplierPpm?: string;
  promptTokens: number;
  completionTokens: number;
  /** Parts of promptTokens read from and written to the upstream's cache; part of completionTokens spent reasoning. */
  cachedTokens?: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
  usageSource: 'upstream' | 'estimated';
  status: 'completed' | 'client_aborted' | 'upstream_broken';
  upstreamLatencyMs: number;
  /** ISO time the request arrived. */
  createdAt: string;
  /**
   * When the API sent the record (epoch ms, its clock); the worker's metrics age unsettled usage by it.
   * Absent in records of earlier versions.
   */
  recordedAtMs?: number;
  /** The client's X-Request-Id, the provider's request id, the upstream's time to first byte: absent when unknown. */
  clientRequestId?: string;
  providerRequestId?: string;
  firstByteMs?: number;
}

export type BillingJobPayloads = {
  [BillingJob.SettleRecorded]: Record<string, never>;
  [BillingJob.SweepHolds]: Record<string, never>;
  [BillingJob.ResyncBalances]: Record<string, never>;
};

/**
 * Mails the worker sends. Jobs carry no secret: the worker mints a mailed token (and stores its hash)
 * when it sends, so a token exists only in the mail. A password reset carries the address typed in,
 * as the API must not look it up (the answer would then depend on whether an account uses it).
 */
export enum MailJob {
  VerifyEmail = 'verify-email',
  PasswordReset = 'password-reset',
  LowBalance = 'low-balance',
}

export type MailJobPayloads = {
  [MailJob.VerifyEmail]: { accountId: string };
  [MailJob.PasswordReset]: { email: string };
  [MailJob.LowBalance]: { accountId: string };
};
