import { MigrationInterface, QueryRunner } from 'typeorm';

export class InitialSchema1795282718694 implements MigrationInterface {
  name = 'InitialSchema1795282718694';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "accounts" (
                "id" uuid NOT NULL DEFAULT gen_random_uuid(),
                "email" text NOT NULL,
                "password_hash" text NOT NULL,
                "balance" bigint NOT NULL DEFAULT '0',
                "referral_code" text NOT NULL,
                "referred_by" uuid,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "accounts_balance_not_negative" CHECK ("balance" >= 0),
                CONSTRAINT "PK_5a7a02c20412299d198e097a8fe" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "accounts_email_key" ON "accounts" ("email")
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "accounts_referral_code_key" ON "accounts" ("referral_code")
        `);
    await queryRunner.query(`
            CREATE TABLE "api_keys" (
                "id" uuid NOT NULL DEFAULT gen_random_uuid(),
                "account_id" uuid NOT NULL,
                "name" text NOT NULL,
                "key_hash" text NOT NULL,
                "key_prefix" text NOT NULL,
                "status" text NOT NULL DEFAULT 'enabled',
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "last_used_at" TIMESTAMP WITH TIME ZONE,
                CONSTRAINT "api_keys_status_check" CHECK ("status" IN ('enabled', 'disabled', 'deleted')),
                CONSTRAINT "PK_5c8a79801b44bd27b79228e1dad" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "api_keys_key_hash_key" ON "api_keys" ("key_hash")
        `);
    await queryRunner.query(`
            CREATE INDEX "api_keys_account_idx" ON "api_keys" ("account_id")
        `);
    await queryRunner.query(`
            CREATE TABLE "channels" (
                "id" text NOT NULL,
                "type" text NOT NULL,
                "base_url" text NOT NULL,
                "api_key_sealed" text NOT NULL,
                "api_key_hint" text NOT NULL,
                "priority" integer NOT NULL DEFAULT '0',
                "weight" integer NOT NULL DEFAULT '1',
                "enabled" boolean NOT NULL DEFAULT true,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "channels_type_check" CHECK ("type" IN ('openai', 'anthropic', 'gemini')),
                CONSTRAINT "PK_bc603823f3f741359c2339389f9" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE TABLE "ledger_entries" (
                "id" uuid NOT NULL DEFAULT gen_random_uuid(),
                "account_id" uuid NOT NULL,
                "kind" text NOT NULL,
                "amount" bigint NOT NULL,
                "balance_after" bigint NOT NULL,
                "reference" text NOT NULL,
                "description" text,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "ledger_entries_kind_check" CHECK (
                    "kind" IN (
                        'topup',
                        'usage',
                        'referral_credit',
                        'adjustment'
                    )
                ),
                CONSTRAINT "PK_6efcb84411d3f08b08450ae75d5" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "ledger_entries_account_created_idx" ON "ledger_entries" ("account_id", "created_at")
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "ledger_entries_kind_reference_key" ON "ledger_entries" ("kind", "reference")
        `);
    await queryRunner.query(`
            CREATE TABLE "models" (
                "id" text NOT NULL,
                "input_price" bigint NOT NULL,
                "output_price" bigint NOT NULL,
                "max_output_tokens" integer NOT NULL,
                "vision" boolean NOT NULL DEFAULT false,
                "rpm" integer NOT NULL,
                "tpm" integer NOT NULL,
                "enabled" boolean NOT NULL DEFAULT true,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_ef9ed7160ea69013636466bf2d5" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE TABLE "model_routes" (
                "model_id" text NOT NULL,
                "channel_id" text NOT NULL,
                "upstream_model" text NOT NULL,
                "position" integer NOT NULL,
                CONSTRAINT "PK_e85b377a00a1d13deb5e5683872" PRIMARY KEY ("model_id", "channel_id")
            )
        `);
    await queryRunner.query(`
            ALTER TABLE "accounts"
            ADD CONSTRAINT "accounts_referred_by_fkey" FOREIGN KEY ("referred_by") REFERENCES "accounts"("id") ON DELETE
            SET NULL ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            ALTER TABLE "api_keys"
            ADD CONSTRAINT "api_keys_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            ALTER TABLE "ledger_entries"
            ADD CONSTRAINT "ledger_entries_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            ALTER TABLE "model_routes"
            ADD CONSTRAINT "model_routes_model_id_fkey" FOREIGN KEY ("model_id") REFERENCES "models"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            ALTER TABLE "model_routes"
            ADD CONSTRAINT "model_routes_channel_id_fkey" FOREIGN KEY ("channel_id") REFERENCES "channels"("id") ON DELETE RESTRICT ON UPDATE NO ACTION
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "model_routes" DROP CONSTRAINT "model_routes_channel_id_fkey"
        `);
    await queryRunner.query(`
            ALTER TABLE "model_routes" DROP CONSTRAINT "model_routes_model_id_fkey"
        `);
    await queryRunner.query(`
            ALTER TABLE "ledger_entries" DROP CONSTRAINT "ledger_entries_account_id_fkey"
        `);
    await queryRunner.query(`
            ALTER TABLE "api_keys" DROP CONSTRAINT "api_keys_account_id_fkey"
        `);
    await queryRunner.query(`
            ALTER TABLE "accounts" DROP CONSTRAINT "accounts_referred_by_fkey"
        `);
    await queryRunner.query(`
            DROP TABLE "model_routes"
        `);
    await queryRunner.query(`
            DROP TABLE "models"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."ledger_entries_kind_reference_key"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."ledger_entries_account_created_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "ledger_entries"
        `);
    await queryRunner.query(`
            DROP TABLE "channels"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."api_keys_account_idx"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."api_keys_key_hash_key"
        `);
    await queryRunner.query(`
            DROP TABLE "api_keys"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."accounts_referral_code_key"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."accounts_email_key"
        `);
    await queryRunner.query(`
            DROP TABLE "accounts"
        `);
  }
}
