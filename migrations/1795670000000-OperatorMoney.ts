import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The operator's view of money: account suspension, upstream cost prices per route, the per-channel
 * daily rollup the margin report reads, and the audit log of admin changes.
 */
export class OperatorMoney1795670000000 implements MigrationInterface {
  name = 'OperatorMoney1795670000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "admin_audit_log" (
                "id" BIGSERIAL NOT NULL,
                "at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "actor" text NOT NULL,
                "method" text NOT NULL,
                "route" text NOT NULL,
                "target_type" text NOT NULL,
                "target_id" text,
                "before" jsonb,
                "after" jsonb,
                "secrets_changed" text array NOT NULL DEFAULT '{}',
                "outcome" text NOT NULL DEFAULT 'pending',
                "status" integer,
                CONSTRAINT "admin_audit_log_outcome_check" CHECK ("outcome" IN ('pending', 'applied', 'failed')),
                CONSTRAINT "PK_9425be48a9c753f5753017c61b2" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "admin_audit_log_at_idx" ON "admin_audit_log" ("at")
        `);
    await queryRunner.query(`
            CREATE INDEX "admin_audit_log_actor_idx" ON "admin_audit_log" ("actor", "id")
        `);
    await queryRunner.query(`
            CREATE INDEX "admin_audit_log_target_idx" ON "admin_audit_log" ("target_type", "target_id", "id")
        `);
    await queryRunner.query(`
            CREATE TABLE "usage_channel_daily" (
                "day" date NOT NULL,
                "model_id" text NOT NULL,
                "channel_id" text NOT NULL,
                "requests" bigint NOT NULL,
                "prompt_tokens" bigint NOT NULL,
                "completion_tokens" bigint NOT NULL,
                "cached_tokens" bigint NOT NULL,
                "cache_write_tokens" bigint NOT NULL,
                "revenue" bigint NOT NULL,
                "upstream_cost" bigint NOT NULL,
                "uncosted_requests" bigint NOT NULL,
                "uncosted_revenue" bigint NOT NULL,
                CONSTRAINT "PK_6a060988398bec0a120a6881c02" PRIMARY KEY ("day", "model_id", "channel_id")
            )
        `);
    await queryRunner.query(`
            ALTER TABLE "accounts"
            ADD "suspended_at" TIMESTAMP WITH TIME ZONE
        `);
    await queryRunner.query(`
            ALTER TABLE "accounts"
            ADD "suspension_reason" text
        `);
    await queryRunner.query(`
            ALTER TABLE "model_routes"
            ADD "cost_input_price" bigint
        `);
    await queryRunner.query(`
            ALTER TABLE "model_routes"
            ADD "cost_output_price" bigint
        `);
    await queryRunner.query(`
            ALTER TABLE "model_routes"
            ADD "cost_cached_input_price" bigint
        `);
    await queryRunner.query(`
            ALTER TABLE "model_routes"
            ADD "cost_cache_write_input_price" bigint
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "model_routes" DROP COLUMN "cost_cache_write_input_price"
        `);
    await queryRunner.query(`
            ALTER TABLE "model_routes" DROP COLUMN "cost_cached_input_price"
        `);
    await queryRunner.query(`
            ALTER TABLE "model_routes" DROP COLUMN "cost_output_price"
        `);
    await queryRunner.query(`
            ALTER TABLE "model_routes" DROP COLUMN "cost_input_price"
        `);
    await queryRunner.query(`
            ALTER TABLE "accounts" DROP COLUMN "suspension_reason"
        `);
    await queryRunner.query(`
            ALTER TABLE "accounts" DROP COLUMN "suspended_at"
        `);
    await queryRunner.query(`
            DROP TABLE "usage_channel_daily"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."admin_audit_log_target_idx"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."admin_audit_log_actor_idx"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."admin_audit_log_at_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "admin_audit_log"
        `);
  }
}
