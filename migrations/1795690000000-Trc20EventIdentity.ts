import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * TRC20 deposits take TronGrid's event index (docs/payments.md, "USDT deposits"):
 * - chain_deposits.numbering says where event_index comes from. Every TRC20 row written before this
 *   was numbered by its place in one address's listing, so it becomes `listing`; every other row, and
 *   every new one, is `chain`. The unique reference takes the numbering in, so an old listing number
 *   (which started at 0 for each address) never blocks a transfer's real index. Every row stays as it
 *   was, event_index included, so each still matches its order's provider_trade_no.
 * - chain_deposits gets an index on (network, address, created_at), for the watcher's hot addresses
 *   (a deposit in the last hour) and its "this transaction is recorded for this address".
 * - deposit_addresses: requested_at goes (reading an address no longer makes it polled often);
 *   visited_at, the last visit whether it finished or not, orders the visits; it starts at polled_at.
 */
export class Trc20EventIdentity1795690000000 implements MigrationInterface {
  name = 'Trc20EventIdentity1795690000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "chain_deposits" ADD "numbering" text NOT NULL DEFAULT 'chain'
        `);
    await queryRunner.query(`
            UPDATE "chain_deposits" SET "numbering" = 'listing' WHERE "network" = 'TRC20'
        `);
    await queryRunner.query(`
            ALTER TABLE "chain_deposits"
            ADD CONSTRAINT "chain_deposits_numbering_check" CHECK ("numbering" IN ('chain', 'listing'))
        `);
    await queryRunner.query(`
            DROP INDEX "public"."chain_deposits_reference_key"
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "chain_deposits_reference_key" ON "chain_deposits" ("network", "txid", "event_index", "numbering")
        `);
    await queryRunner.query(`
            CREATE INDEX "chain_deposits_address_created_idx" ON "chain_deposits" ("network", "address", "created_at")
        `);
    await queryRunner.query(`
            ALTER TABLE "deposit_addresses" ADD "visited_at" TIMESTAMP WITH TIME ZONE
        `);
    await queryRunner.query(`
            UPDATE "deposit_addresses" SET "visited_at" = "polled_at"
        `);
    await queryRunner.query(`
            ALTER TABLE "deposit_addresses" DROP COLUMN "requested_at"
        `);
  }

  /**
   * Fails on the unique index when one transaction paid two of our TRC20 addresses (or one address
   * twice) at the same event index as an older listing-numbered row: the old schema cannot hold both.
   */
  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "deposit_addresses" ADD "requested_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now()
        `);
    await queryRunner.query(`
            ALTER TABLE "deposit_addresses" DROP COLUMN "visited_at"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."chain_deposits_address_created_idx"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."chain_deposits_reference_key"
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "chain_deposits_reference_key" ON "chain_deposits" ("network", "txid", "event_index")
        `);
    await queryRunner.query(`
            ALTER TABLE "chain_deposits" DROP CONSTRAINT "chain_deposits_numbering_check"
        `);
    await queryRunner.query(`
            ALTER TABLE "chain_deposits" DROP COLUMN "numbering"
        `);
  }
}
