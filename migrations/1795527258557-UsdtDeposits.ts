import { MigrationInterface, QueryRunner } from 'typeorm';

export class UsdtDeposits1795527258557 implements MigrationInterface {
  name = 'UsdtDeposits1795527258557';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "chain_cursors" (
                "network" text NOT NULL,
                "block" bigint NOT NULL,
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_a39b881b90ef4632f04034cfcae" PRIMARY KEY ("network")
            )
        `);
    await queryRunner.query(`
            CREATE TABLE "chain_deposits" (
                "id" uuid NOT NULL DEFAULT gen_random_uuid(),
                "seq" bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
                "network" text NOT NULL,
                "txid" text NOT NULL,
                "event_index" integer NOT NULL,
                "address" text NOT NULL,
                "account_id" uuid NOT NULL,
                "amount" bigint NOT NULL,
                "block_number" bigint,
                "status" text NOT NULL,
                "order_id" uuid,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "chain_deposits_amount_check" CHECK ("amount" > 0),
                CONSTRAINT "chain_deposits_status_check" CHECK ("status" IN ('credited', 'below_minimum')),
                CONSTRAINT "PK_b4d86b69d5311a14491c561d77d" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "chain_deposits_seq_key" ON "chain_deposits" ("seq")
        `);
    await queryRunner.query(`
            CREATE INDEX "chain_deposits_status_seq_idx" ON "chain_deposits" ("status", "seq")
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "chain_deposits_reference_key" ON "chain_deposits" ("network", "txid", "event_index")
        `);
    await queryRunner.query(`
            CREATE TABLE "deposit_addresses" (
                "id" uuid NOT NULL DEFAULT gen_random_uuid(),
                "account_id" uuid NOT NULL,
                "network" text NOT NULL,
                "derivation_index" integer NOT NULL,
                "address" text NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "requested_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "cursor_ms" bigint,
                "polled_at" TIMESTAMP WITH TIME ZONE,
                CONSTRAINT "PK_01dab1c9d45496553b23772c7cc" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "deposit_addresses_address_key" ON "deposit_addresses" ("network", "address")
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "deposit_addresses_account_key" ON "deposit_addresses" ("account_id", "network")
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "deposit_addresses_index_key" ON "deposit_addresses" ("network", "derivation_index")
        `);
    await queryRunner.query(`
            ALTER TABLE "chain_deposits"
            ADD CONSTRAINT "chain_deposits_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            ALTER TABLE "deposit_addresses"
            ADD CONSTRAINT "deposit_addresses_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE NO ACTION
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "deposit_addresses" DROP CONSTRAINT "deposit_addresses_account_id_fkey"
        `);
    await queryRunner.query(`
            ALTER TABLE "chain_deposits" DROP CONSTRAINT "chain_deposits_account_id_fkey"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."deposit_addresses_index_key"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."deposit_addresses_account_key"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."deposit_addresses_address_key"
        `);
    await queryRunner.query(`
            DROP TABLE "deposit_addresses"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."chain_deposits_reference_key"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."chain_deposits_status_seq_idx"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."chain_deposits_seq_key"
        `);
    await queryRunner.query(`
            DROP TABLE "chain_deposits"
        `);
    await queryRunner.query(`
            DROP TABLE "chain_cursors"
        `);
  }
}
