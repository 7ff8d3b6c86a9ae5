import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The chain watchers' leases (src/modules/payments/chain/chain-lease.ts): one row per network while a
 * worker watches it, taken with a conditional upsert and lapsing at `expires_at`. They replace a
 * session advisory lock, which a transaction-mode pooler such as PgBouncer cannot keep.
 */
export class ChainWatchLeases1795750000000 implements MigrationInterface {
  name = 'ChainWatchLeases1795750000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "chain_watch_leases" (
        "network" text NOT NULL,
        "owner" text NOT NULL,
        "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "chain_watch_leases_pkey" PRIMARY KEY ("network")
      )`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "chain_watch_leases"`);
  }
}
