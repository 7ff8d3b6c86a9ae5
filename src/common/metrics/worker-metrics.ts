import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { metricsRegistry } from 'src/common/metrics/metrics';

/**
 * What only the worker knows, in a registry of its own: the API never exports a settlement backlog
 * of 0 or a job-failure count it cannot have, which summed over pods would hide the worker's figures.
 * The worker's /metrics serves this and the process-wide registry together (workerScrapeRegistry).
 */
export const workerMetricsRegistry = new Registry();

export const workerMetrics = {
  settlementBacklog: new Gauge({
    name: 'gateway_settlement_backlog',
    help: 'Usage records in Redis waiting to be settled into Postgres (read from Redis at each scrape)',
    registers: [workerMetricsRegistry],
  }),
  oldestUnsettledSeconds: new Gauge({
    name: 'gateway_settlement_oldest_unsettled_seconds',
    help: 'Age of the oldest usage recorded and not yet settled (0 when none); exact up to 1,000 waiting records, above that the oldest of the 500 next and the 500 last to be claimed',
    registers: [workerMetricsRegistry],
  }),
  settlementBatchSize: new Histogram({
    name: 'gateway_settlement_batch_size',
    help: 'Usage records per settlement transaction',
    buckets: [1, 5, 10, 50, 100, 250, 500],
    registers: [workerMetricsRegistry],
  }),
  settlementBatchSeconds: new Histogram({
    name: 'gateway_settlement_batch_seconds',
    help: "A settlement transaction's duration, its Redis release included, by outcome (settled, failed)",
    labelNames: ['outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [workerMetricsRegistry],
  }),
  jobFailures: new Counter({
    name: 'gateway_worker_job_failures_total',
    help: 'BullMQ jobs that failed an attempt in this worker, by queue',
    labelNames: ['queue'] as const,
    registers: [workerMetricsRegistry],
  }),
  paymentConfirmationLag: new Histogram({
    name: 'gateway_payment_confirmation_lag_seconds',
    help: "From a wallet's verified notification reaching the queue to its committed credit, by what confirmed it",
    labelNames: ['via'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 10, 30, 60],
    registers: [workerMetricsRegistry],
  }),
  holdsReleased: new Counter({
    name: 'gateway_holds_released_total',
    help: 'Holds the hold sweeper closed, by reason: orphaned (no usage after HOLD_SWEEP_AGE_MS, released unbilled) or settled (usage already in Postgres)',
    labelNames: ['reason'] as const,
    registers: [workerMetricsRegistry],
  }),
  redisAofEnabled: new Gauge({
    name: 'gateway_redis_aof_enabled',
    help: "Redis's append-only file (INFO persistence aof_enabled): 0 means holds and unsettled usage die with Redis",
    registers: [workerMetricsRegistry],
  }),
  redisPersistenceOk: new Gauge({
    name: 'gateway_redis_persistence_ok',
    help: "1 when Redis's last AOF write and last RDB save both succeeded (INFO persistence), else 0",
    registers: [workerMetricsRegistry],
  }),
  ledgerVerifyMismatches: new Gauge({
    name: 'gateway_ledger_verify_mismatches',
    help: 'Mismatches the last recorded `ledger:verify --record` found (balances, top-ups, deposits); 0 before the first',
    registers: [workerMetricsRegistry],
  }),
  ledgerVerifyLastRun: new Gauge({
    name: 'gateway_ledger_verify_last_run_timestamp_seconds',
    help: 'When the last recorded `ledger:verify --record` finished (its age: time() minus this); 0 before the first',
    registers: [workerMetricsRegistry],
  }),
  partitionMaintenanceLastSuccess: new Gauge({
    name: 'gateway_partition_maintenance_last_success_timestamp_seconds',
    help: "When this worker's book partition maintenance last succeeded (its age: time() minus this); 0 before the first",
    registers: [workerMetricsRegistry],
  }),
  partitionMonthsAhead: new Gauge({
    name: 'gateway_partition_months_ahead',
    help: 'Months after the current one that have their book partitions, at the last successful maintenance (-1: the current month has none)',
    registers: [workerMetricsRegistry],
  }),
  scrapeFailures: new Counter({
    name: 'gateway_worker_scrape_failures_total',
    help: 'Scrapes whose Redis-read gauges could not be refreshed in time (they kept their last values)',
    registers: [workerMetricsRegistry],
  }),
};

/** The worker's /metrics: the process-wide metrics (payments, default Node metrics) and the worker's own. */
export const workerScrapeRegistry = Registry.merge([metricsRegistry, workerMetricsRegistry]);
