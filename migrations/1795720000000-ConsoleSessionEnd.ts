import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Console sessions get an absolute end. Sessions already open end 90 days (the default of
 * CONSOLE_SESSION_MAX_DAYS) after their login, and their refresh token no later than that.
 */
export class ConsoleSessionEnd1795720000000 implements MigrationInterface {
  name = 'ConsoleSessionEnd1795720000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "console_sessions" ADD "ends_at" TIMESTAMP WITH TIME ZONE
        `);
    await queryRunner.query(`
            UPDATE "console_sessions" SET "ends_at" = "created_at" + interval '90 days',
                "expires_at" = LEAST("expires_at", "created_at" + interval '90 days')
        `);
    await queryRunner.query(`
            ALTER TABLE "console_sessions" ALTER COLUMN "ends_at" SET NOT NULL
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "console_sessions" DROP COLUMN "ends_at"
        `);
  }
}
