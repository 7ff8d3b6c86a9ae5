import { MigrationInterface, QueryRunner } from 'typeorm';

/** Revocable console sessions: the current refresh token of each (hashed), and the ones refreshes replaced. */
export class ConsoleSessions1795640000000 implements MigrationInterface {
  name = 'ConsoleSessions1795640000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "console_sessions" (
                "id" uuid NOT NULL DEFAULT gen_random_uuid(),
                "account_id" uuid NOT NULL,
                "refresh_hash" text NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "last_used_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "revoked_at" TIMESTAMP WITH TIME ZONE,
                "user_agent" text,
                "client_address" text,
                CONSTRAINT "PK_15fe3f1740801e7a0581dea8d49" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "console_sessions_account_id_idx" ON "console_sessions" ("account_id")
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "console_sessions_refresh_hash_key" ON "console_sessions" ("refresh_hash")
        `);
    await queryRunner.query(`
            CREATE INDEX "console_sessions_expires_at_idx" ON "console_sessions" ("expires_at")
        `);
    await queryRunner.query(`
            CREATE TABLE "console_retired_refresh_tokens" (
                "refresh_hash" text NOT NULL,
                "session_id" uuid NOT NULL,
                "retired_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_8af62f60686e1a7e332c719b715" PRIMARY KEY ("refresh_hash")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "console_retired_refresh_tokens_session_id_idx" ON "console_retired_refresh_tokens" ("session_id")
        `);
    await queryRunner.query(`
            ALTER TABLE "console_sessions"
            ADD CONSTRAINT "console_sessions_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            ALTER TABLE "console_retired_refresh_tokens"
            ADD CONSTRAINT "console_retired_refresh_tokens_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "console_sessions"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "console_retired_refresh_tokens" DROP CONSTRAINT "console_retired_refresh_tokens_session_id_fkey"
        `);
    await queryRunner.query(`
            ALTER TABLE "console_sessions" DROP CONSTRAINT "console_sessions_account_id_fkey"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."console_retired_refresh_tokens_session_id_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "console_retired_refresh_tokens"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."console_sessions_expires_at_idx"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."console_sessions_refresh_hash_key"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."console_sessions_account_id_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "console_sessions"
        `);
  }
}
