/** Queues and their jobs. Each job name has exactly one handler in the worker (checked at boot). */
export enum QueueName {
  Billing = 'billing',
}

export enum BillingJob {
  SettleCompletion = 'settle-completion',
  SweepHolds = 'sweep-holds',
}

export interface SettleCompletionPayload {
  /** The completion's x-request-id; also the job id, so a duplicate enqueue collapses into one job. */
  requestId: string;
  accountId: string;
  keyId: string;
  modelId: string;
  channelId: string;
  /** Prices at request time (nano-dollars per million tokens, decimal strings: bigint does not survive JSON). */
  inputPrice: string;
  outputPrice: string;
  promptTokens: number;
  completionTokens: number;
  usageSource: 'upstream' | 'estimated';
  status: 'completed' | 'client_aborted' | 'upstream_broken';
  upstreamLatencyMs: number;
  /** ISO time the request arrived. */
  createdAt: string;
}

export type BillingJobPayloads = {
  [BillingJob.SettleCompletion]: SettleCompletionPayload;
  [BillingJob.SweepHolds]: Record<string, never>;
};
