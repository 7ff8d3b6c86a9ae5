import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The role of the admin token behind each audited change (ADMIN_TOKENS' roles). Every token before
 * roles could do everything, so existing rows are `admin`; the default is dropped afterwards so a
 * writer that forgets the role fails instead of recording a wrong one.
 */
export class AuditActorRole1795770000000 implements MigrationInterface {
  name = 'AuditActorRole1795770000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "admin_audit_log" ADD "actor_role" text NOT NULL DEFAULT 'admin'`);
    await queryRunner.query(`ALTER TABLE "admin_audit_log" ALTER COLUMN "actor_role" DROP DEFAULT`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "admin_audit_log" DROP COLUMN "actor_role"`);
  }
}
