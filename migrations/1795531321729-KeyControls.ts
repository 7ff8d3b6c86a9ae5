import { MigrationInterface, QueryRunner } from 'typeorm';

export class KeyControls1795531321729 implements MigrationInterface {
  name = 'KeyControls1795531321729';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "api_keys"
            ADD "expires_at" TIMESTAMP WITH TIME ZONE,
            ADD "allowed_models" text array,
            ADD "spend_limit" bigint,
            ADD "spent" bigint NOT NULL DEFAULT '0'
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "api_keys"
            DROP COLUMN "spent",
            DROP COLUMN "spend_limit",
            DROP COLUMN "allowed_models",
            DROP COLUMN "expires_at"
        `);
  }
}
