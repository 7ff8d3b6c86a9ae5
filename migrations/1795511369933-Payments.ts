import { MigrationInterface, QueryRunner } from 'typeorm';

export class Payments1795511369933 implements MigrationInterface {
  name = 'Payments1795511369933';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "payment_settings" (
                "id" smallint NOT NULL,
                "cny_per_usd" text,
                "min_topup_usd" bigint NOT NULL,
                "max_topup_usd" bigint NOT NULL,
                "order_ttl_minutes" integer NOT NULL,
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "payment_settings_bounds_check" CHECK (
                    "min_topup_usd" > 0
                    AND "max_topup_usd" >= "min_topup_usd"
                ),
                CONSTRAINT "payment_settings_single_row" CHECK ("id" = 1),
                CONSTRAINT "PK_78624861ce2178d6835fb1d9fdf" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE TABLE "redemption_codes" (
                "id" uuid NOT NULL DEFAULT gen_random_uuid(),
                "code_hash" text NOT NULL,
                "amount" bigint NOT NULL,
                "batch_id" uuid NOT NULL,
                "expires_at" TIMESTAMP WITH TIME ZONE,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "redeemed_at" TIMESTAMP WITH TIME ZONE,
                "redeemed_by" uuid,
                "order_id" uuid,
                CONSTRAINT "redemption_codes_amount_check" CHECK ("amount" > 0),
                CONSTRAINT "PK_267c6f95431918a7d95286859ba" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "redemption_codes_code_hash_key" ON "redemption_codes" ("code_hash")
        `);
    await queryRunner.query(`
            CREATE TABLE "topup_orders" (
                "id" uuid NOT NULL DEFAULT gen_random_uuid(),
                "seq" bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
                "account_id" uuid NOT NULL,
                "status" text NOT NULL,
                "currency" text NOT NULL,
                "method" text,
                "network" text,
                "amount" bigint NOT NULL,
                "credit" bigint NOT NULL,
                "rate" text,
                "instructions" jsonb,
                "evidence" jsonb,
                "provider_trade_no" text,
                "confirmed_via" text,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "expires_at" TIMESTAMP WITH TIME ZONE,
                "paid_at" TIMESTAMP WITH TIME ZONE,
                "closed_at" TIMESTAMP WITH TIME ZONE,
                CONSTRAINT "topup_orders_amounts_check" CHECK (
                    "amount" > 0
                    AND "credit" > 0
                ),
                CONSTRAINT "topup_orders_currency_check" CHECK ("currency" IN ('CNY', 'USDT', 'USD')),
                CONSTRAINT "topup_orders_status_check" CHECK ("status" IN ('pending', 'paid', 'expired')),
                CONSTRAINT "PK_a4342925a7df4a4ac416745e15a" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "topup_orders_seq_key" ON "topup_orders" ("seq")
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "topup_orders_trade_key" ON "topup_orders" ("method", "provider_trade_no")
            WHERE "provider_trade_no" IS NOT NULL
        `);
    await queryRunner.query(`
            CREATE INDEX "topup_orders_pending_expiry_idx" ON "topup_orders" ("expires_at")
            WHERE "status" = 'pending'
        `);
    await queryRunner.query(`
            CREATE INDEX "topup_orders_status_seq_idx" ON "topup_orders" ("status", "seq")
        `);
    await queryRunner.query(`
            CREATE INDEX "topup_orders_account_seq_idx" ON "topup_orders" ("account_id", "seq")
        `);
    await queryRunner.query(`
            ALTER TABLE "redemption_codes"
            ADD CONSTRAINT "redemption_codes_redeemed_by_fkey" FOREIGN KEY ("redeemed_by") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            ALTER TABLE "topup_orders"
            ADD CONSTRAINT "topup_orders_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE NO ACTION
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "topup_orders" DROP CONSTRAINT "topup_orders_account_id_fkey"
        `);
    await queryRunner.query(`
            ALTER TABLE "redemption_codes" DROP CONSTRAINT "redemption_codes_redeemed_by_fkey"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."topup_orders_account_seq_idx"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."topup_orders_status_seq_idx"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."topup_orders_pending_expiry_idx"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."topup_orders_trade_key"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."topup_orders_seq_key"
        `);
    await queryRunner.query(`
            DROP TABLE "topup_orders"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."redemption_codes_code_hash_key"
        `);
    await queryRunner.query(`
            DROP TABLE "redemption_codes"
        `);
    await queryRunner.query(`
            DROP TABLE "payment_settings"
        `);
  }
}
