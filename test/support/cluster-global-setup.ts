import 'tsconfig-paths/register';
import globalSetup from 'test/support/global-setup';
import { LocalRedisCluster, startRedisCluster } from 'test/support/redis-cluster';

/**
 * The cluster project's setup: a fresh three-master Redis Cluster of its own (a cluster has only
 * db 0, so the run cannot claim an empty db index of the shared Redis), then the usual setup with
 * REDIS_URL naming that cluster.
 */
export default async function clusterGlobalSetup(): Promise<void> {
  const cluster = await startRedisCluster(3);
  // For the teardown: Jest runs both in its parent process.
  (globalThis as { gatewayTestCluster?: LocalRedisCluster }).gatewayTestCluster = cluster;
  process.env.TEST_REDIS_CLUSTER_URL = cluster.url;
  await globalSetup();
}
