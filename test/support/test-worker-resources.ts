/** The run's databases, one per Jest worker, space-separated (global-setup.ts). */
export const WORKER_DATABASES_VARIABLE = 'GATEWAY_TEST_DATABASE_URLS';
/** The run's Redis URLs, one per Jest worker, space-separated (global-setup.ts). */
export const WORKER_REDIS_VARIABLE = 'GATEWAY_TEST_REDIS_URLS';

/**
 * Points DATABASE_URL and REDIS_URL at the database and Redis db of the Jest worker running this file
 * (JEST_WORKER_ID counts from 1; a run in band is worker 1), so that files running side by side each
 * own theirs. The test file and every process it starts read these two variables.
 */
export function useWorkerResources(env: NodeJS.ProcessEnv = process.env): void {
  const worker = Math.max(1, Number(env.JEST_WORKER_ID ?? '1'));
  const pick = (variable: string): string | undefined => {
    const urls = env[variable]?.split(' ').filter(Boolean) ?? [];
    return urls.length ? urls[(worker - 1) % urls.length] : undefined;
  };
  const database = pick(WORKER_DATABASES_VARIABLE);
  const redis = pick(WORKER_REDIS_VARIABLE);
  if (database) {
    env.DATABASE_URL = database;
  }
  if (redis) {
    env.REDIS_URL = redis;
  }
}

/** Every database and Redis URL of the run (for the teardown). */
export function allWorkerResources(env: NodeJS.ProcessEnv = process.env): { databases: string[]; redis: string[] } {
  const list = (variable: string) => env[variable]?.split(' ').filter(Boolean) ?? [];
  return { databases: list(WORKER_DATABASES_VARIABLE), redis: list(WORKER_REDIS_VARIABLE) };
}
