import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { OneLabelHistogram, TalliedCounter } from 'src/common/metrics/request-path-metrics';

/** One registry per process; counters are plain increments, cheap enough for the hot path. */
export const metricsRegistry = new Registry();
// Heap, RSS, GC, event-loop lag and handles: what an operator looks at first when latency moves.
collectDefaultMetrics({ register: metricsRegistry });

export const metrics = {
  // Moved on every completion: tallied, and read by the registry at a scrape (request-path-metrics.ts).
  completions: new TalliedCounter({
    name: 'gateway_completions_total',
    help: 'Chat completions answered, by model and outcome',
    labelNames: ['model', 'outcome'] as const,
    registry: metricsRegistry,
  }),
  embeddings: new Counter({
    name: 'gateway_embeddings_total',
    help: 'Embeddings requests answered, by model and outcome',
    labelNames: ['model', 'outcome'] as const,
    registers: [metricsRegistry],
  }),
  textCompletions: new Counter({
    name: 'gateway_text_completions_total',
    help: 'Legacy text completions (POST /v1/completions) answered, by model and outcome',
    labelNames: ['model', 'outcome'] as const,
    registers: [metricsRegistry],
  }),
  upstreamFailures: new Counter({
    name: 'gateway_upstream_failures_total',
    help: 'Upstream attempts that failed and moved on, by channel and kind',
    labelNames: ['channel', 'kind'] as const,
    registers: [metricsRegistry],
  }),
  upstreamRequests: new TalliedCounter({
    name: 'gateway_upstream_requests_total',
    help: 'Requests sent to upstreams, by channel and outcome (ok, client_error, unreachable, timeout, capacity, auth, server_error, account, abnormal, broken, client_aborted)',
    labelNames: ['channel', 'outcome'] as const,
    registry: metricsRegistry,
  }),
  breakerState: new Gauge({
    name: 'gateway_channel_breaker_state',
    help: "A channel's circuit breaker as this process sees it: 0 closed, 1 half-open, 2 open",
    labelNames: ['channel'] as const,
    registers: [metricsRegistry],
  }),
  upstreamLatency: new OneLabelHistogram(
    'gateway_upstream_first_byte_seconds',
    'Time from sending to an upstream until its response headers',
    'channel',
    [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    metricsRegistry,
  ),
  usageRecordFailures: new Counter({
    name: 'gateway_usage_record_failures_total',
    help: 'Usage records Redis did not confirm at once, by what became of them: retried_ok (a retry reached Redis), fallback_settled (settled straight into Postgres), fallback_failed (a fallback attempt that failed and is retried), lost (given up and logged whole for an operator)',
    labelNames: ['outcome'] as const,
    registers: [metricsRegistry],
  }),
  responsesKeepFailures: new Counter({
    name: 'gateway_responses_keep_failures_total',
    help: 'Responses answers sent whose output items could not be kept for item_reference (logged; the answer was not affected)',
    registers: [metricsRegistry],
  }),
  rateLimited: new Counter({
    name: 'gateway_rate_limited_total',
    help: 'Requests refused with 429, by limit',
    labelNames: ['limit'] as const,
    registers: [metricsRegistry],
  }),
  limiterErrors: new Counter({
    name: 'gateway_rate_limiter_errors_total',
    help: 'Rate-limit checks that could not reach Redis (refused with 503)',
    registers: [metricsRegistry],
  }),
  overloaded: new Counter({
    name: 'gateway_overload_rejections_total',
    help: 'Completions refused with 503 because this process was at its concurrency and queue caps',
    registers: [metricsRegistry],
  }),
  catalogUnreadableChannels: new Gauge({
    name: 'gateway_catalog_unreadable_channels',
    help: 'Enabled channels left out of the catalog because their upstream key cannot be decrypted',
    registers: [metricsRegistry],
  }),
  dependencyUp: new Gauge({
    name: 'gateway_dependency_up',
    help: 'Whether this process reached a dependency at its last probe (readiness, scrape): 1 up, 0 down, by dependency (postgres, redis)',
    labelNames: ['dependency'] as const,
    registers: [metricsRegistry],
  }),
  redisNoEviction: new Gauge({
    name: 'gateway_redis_noeviction',
    help: "1 when every Redis master's maxmemory-policy is noeviction (INFO memory: at start, and at each worker scrape); 0: a full Redis may evict balances, holds and unsettled usage",
    registers: [metricsRegistry],
  }),
  activeCompletions: new Gauge({
    name: 'gateway_active_completions',
    help: 'Completions being relayed by this process',
    registers: [metricsRegistry],
  }),
  topups: new Counter({
    name: 'gateway_topups_total',
    help: 'Top-up orders by method and by what became of them (pending: created; paid; expired)',
    labelNames: ['method', 'status'] as const,
    registers: [metricsRegistry],
  }),
  paymentConfirmSeconds: new Histogram({
    name: 'gateway_payment_confirm_seconds',
    help: "From an order's creation to its committed credit, by what confirmed it (webhook, poller, recheck, redemption)",
    labelNames: ['via'] as const,
    buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 86400],
    registers: [metricsRegistry],
  }),
  paymentNotifyRejected: new Counter({
    name: 'gateway_payment_notify_rejected_total',
    help: 'Wallet notifications that gave no credit, by provider and reason',
    labelNames: ['provider', 'reason'] as const,
    registers: [metricsRegistry],
  }),
  deposits: new Counter({
    name: 'gateway_deposits_total',
    help: 'USDT transfers to our addresses, by network and outcome (credited, below_minimum, duplicate: read again)',
    labelNames: ['network', 'outcome'] as const,
    registers: [metricsRegistry],
  }),
  depositReorged: new Counter({
    name: 'gateway_deposit_reorged_total',
    help: 'USDT transfers found gone from the chain after they were recorded (a reorg deeper than the crediting depth)',
    labelNames: ['network'] as const,
    registers: [metricsRegistry],
  }),
  mails: new Counter({
    name: 'gateway_mails_total',
    help: 'Mails by kind and outcome (sent; retried: a try failed, another follows; failed: tries used up; dropped: no SMTP_URL)',
    labelNames: ['kind', 'outcome'] as const,
    registers: [metricsRegistry],
  }),
  chainWatchLagBlocks: new Gauge({
    name: 'gateway_chain_watch_lag_blocks',
    help: "ERC20: blocks between the chain's head and the last block whose transfers were processed",
    labelNames: ['network'] as const,
    registers: [metricsRegistry],
  }),
  chainWatchLagSeconds: new Gauge({
    name: 'gateway_chain_watch_lag_seconds',
    help: 'TRC20: seconds since the least recently polled of the often-polled addresses was last polled',
    labelNames: ['network'] as const,
    registers: [metricsRegistry],
  }),
  chainWatchAddressFailures: new Counter({
    name: 'gateway_chain_watch_address_failures_total',
    help: 'TRC20: visits of one address that TronGrid failed; the run goes on with the other addresses',
    labelNames: ['network'] as const,
    registers: [metricsRegistry],
  }),
  chainWatchLastSuccess: new Gauge({
    name: 'gateway_chain_watch_last_success_timestamp_seconds',
    help: "When a network's watcher last finished a poll without error (its age: time() minus this)",
    labelNames: ['network'] as const,
    registers: [metricsRegistry],
  }),
};

// GatewayUsageRecordsLost reads increase(): a series that appeared at 1 would show none, so the
// first record lost in a process would never alert. It starts at 0 instead.
metrics.usageRecordFailures.inc({ outcome: 'lost' }, 0);
