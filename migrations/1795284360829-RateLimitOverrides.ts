import { MigrationInterface, QueryRunner } from 'typeorm';

export class RateLimitOverrides1795284360829 implements MigrationInterface {
  name = 'RateLimitOverrides1795284360829';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "account_rate_limits" (
                "account_id" uuid NOT NULL,
                "model_id" text NOT NULL,
                "rpm" integer,
                "tpm" integer,
                "end_user_rpm" integer,
                "end_user_tpm" integer,
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "PK_828059fae0f7487f71b73d400d5" PRIMARY KEY ("account_id", "model_id")
            )
        `);
    await queryRunner.query(`
            ALTER TABLE "account_rate_limits"
            ADD CONSTRAINT "account_rate_limits_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "account_rate_limits" DROP CONSTRAINT "account_rate_limits_account_id_fkey"
        `);
    await queryRunner.query(`
            DROP TABLE "account_rate_limits"
        `);
  }
}
