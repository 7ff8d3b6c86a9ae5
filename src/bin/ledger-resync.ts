import 'reflect-metadata';
import { createRedis } from 'src/common/redis/redis-client';
import { ConfigError, loadRedisTarget } from 'src/config/app-config';
import { endBalanceEpochs } from 'src/modules/ledger/balance-epochs';

/**
 * `npm run ledger:resync`: after Postgres was restored to an earlier point (docs/operations.md), makes
 * every Redis balance snapshot reload from Postgres on its account's next admission. Needs REDIS_URL
 * (or the cluster's variables) only. Run `npm run ledger:verify` after it.
 */
async function main(): Promise<number> {
  const redis = createRedis(loadRedisTarget(), { maxRetriesPerRequest: 2 });
  try {
    const ended = await endBalanceEpochs(redis);
    process.stdout.write(`${ended} account snapshots will reload from Postgres on their next request\n`);
    return 0;
  } finally {
    redis.disconnect();
  }
}

main().then(
  (code) => process.exit(code),
  (error: Error) => {
    process.stderr.write(
      `${error instanceof ConfigError ? error.message : `ledger:resync failed: ${error.message}`}\n`,
    );
    process.exit(2);
  },
);
