import 'tsconfig-paths/register';
import globalTeardown from 'test/support/global-teardown';
import { LocalRedisCluster } from 'test/support/redis-cluster';

/** The usual teardown (the run's database), then the run's cluster stops and its files go. */
export default async function clusterGlobalTeardown(): Promise<void> {
  try {
    await globalTeardown();
  } finally {
    await (globalThis as { gatewayTestCluster?: LocalRedisCluster }).gatewayTestCluster?.stop();
  }
}
