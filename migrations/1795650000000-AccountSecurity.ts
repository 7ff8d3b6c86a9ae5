import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * E-mail verification, mailed single-use tokens (verification and password reset, stored hashed) and
 * low-balance alerts. Accounts that exist today count as verified: they were admitted under the old
 * rules, and requiring verification now would lock today's customers out of their keys and top-ups.
 */
export class AccountSecurity1795650000000 implements MigrationInterface {
  name = 'AccountSecurity1795650000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "account_tokens" (
                "id" uuid NOT NULL DEFAULT gen_random_uuid(),
                "account_id" uuid NOT NULL,
                "purpose" text NOT NULL,
                "token_hash" text NOT NULL,
                "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "used_at" TIMESTAMP WITH TIME ZONE,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_5e3640c493cc6206a44b885e6a9" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`CREATE INDEX "account_tokens_account_id_idx" ON "account_tokens" ("account_id")`);
    await queryRunner.query(`CREATE UNIQUE INDEX "account_tokens_token_hash_key" ON "account_tokens" ("token_hash")`);
    await queryRunner.query(`
            CREATE TABLE "balance_alerts" (
                "account_id" uuid NOT NULL,
                "threshold" bigint NOT NULL,
                "alert_sent" boolean NOT NULL DEFAULT false,
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "balance_alerts_threshold_positive" CHECK ("threshold" > 0),
                CONSTRAINT "PK_b6b18e7cafd25dd1ace8b445955" PRIMARY KEY ("account_id")
            )
        `);
    await queryRunner.query(`ALTER TABLE "accounts" ADD "email_verified_at" TIMESTAMP WITH TIME ZONE`);
    await queryRunner.query(`UPDATE "accounts" SET "email_verified_at" = "created_at"`);
    await queryRunner.query(`
            ALTER TABLE "account_tokens" ADD CONSTRAINT "account_tokens_account_id_fkey"
            FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            ALTER TABLE "balance_alerts" ADD CONSTRAINT "balance_alerts_account_id_fkey"
            FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "balance_alerts" DROP CONSTRAINT "balance_alerts_account_id_fkey"`);
    await queryRunner.query(`ALTER TABLE "account_tokens" DROP CONSTRAINT "account_tokens_account_id_fkey"`);
    await queryRunner.query(`ALTER TABLE "accounts" DROP COLUMN "email_verified_at"`);
    await queryRunner.query(`DROP TABLE "balance_alerts"`);
    await queryRunner.query(`DROP INDEX "public"."account_tokens_token_hash_key"`);
    await queryRunner.query(`DROP INDEX "public"."account_tokens_account_id_idx"`);
    await queryRunner.query(`DROP TABLE "account_tokens"`);
  }
}
