import { MigrationInterface, QueryRunner } from 'typeorm';

export class Billing1795283547552 implements MigrationInterface {
  name = 'Billing1795283547552';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "usage_daily" (
                "account_id" uuid NOT NULL,
                "day" date NOT NULL,
                "model_id" text NOT NULL,
                "key_id" uuid NOT NULL,
                "requests" integer NOT NULL,
                "prompt_tokens" bigint NOT NULL,
                "completion_tokens" bigint NOT NULL,
                "cost" bigint NOT NULL,
                CONSTRAINT "PK_5e8416063ea0c7b715e7d254f07" PRIMARY KEY ("account_id", "day", "model_id", "key_id")
            )
        `);
    await queryRunner.query(`
            CREATE TABLE "usage_records" (
                "request_id" text NOT NULL,
                "account_id" uuid NOT NULL,
                "key_id" uuid NOT NULL,
                "model_id" text NOT NULL,
                "channel_id" text NOT NULL,
                "prompt_tokens" integer NOT NULL,
                "completion_tokens" integer NOT NULL,
                "cost" bigint NOT NULL,
                "charged" bigint NOT NULL,
                "usage_source" text NOT NULL,
                "status" text NOT NULL,
                "upstream_latency_ms" integer NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                CONSTRAINT "usage_records_status_check" CHECK (
                    "status" IN ('completed', 'client_aborted', 'upstream_broken')
                ),
                CONSTRAINT "PK_d6b7bd75d13514c338ec342a22b" PRIMARY KEY ("request_id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "usage_records_account_key_created_idx" ON "usage_records" ("account_id", "key_id", "created_at")
        `);
    await queryRunner.query(`
            CREATE INDEX "usage_records_account_model_created_idx" ON "usage_records" ("account_id", "model_id", "created_at")
        `);
    await queryRunner.query(`
            CREATE INDEX "usage_records_account_created_idx" ON "usage_records" ("account_id", "created_at", "request_id")
        `);
    await queryRunner.query(`
            ALTER TABLE "accounts"
            ADD "balance_version" bigint NOT NULL DEFAULT '0'
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "accounts" DROP COLUMN "balance_version"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."usage_records_account_created_idx"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."usage_records_account_model_created_idx"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."usage_records_account_key_created_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "usage_records"
        `);
    await queryRunner.query(`
            DROP TABLE "usage_daily"
        `);
  }
}
