import { AsyncLocalStorage } from 'node:async_hooks';

/** What every log line written while a worker job runs carries. */
export interface JobLogFields {
  job: string;
  jobId: string | undefined;
}

/**
 * The job a worker is running, for its log lines. The worker only: the API passes a request's logger
 * along instead (RequestTrace), because an async context bound per request costs the hot path several
 * percent on Node 20, while a worker runs a few jobs a second.
 */
const running = new AsyncLocalStorage<JobLogFields>();

export function inJob<T>(job: { name: string; id?: string }, work: () => Promise<T>): Promise<T> {
  return running.run({ job: job.name, jobId: job.id }, work);
}

/**
 * pino's mixin: the running job's fields, or none. A new object every call: pino merges the line's
 * own fields into what the mixin returns, which must not be the job's store (or a frozen constant).
 */
export function jobLogFields(): Partial<JobLogFields> {
  const job = running.getStore();
  return job ? { job: job.job, jobId: job.jobId } : {};
}
