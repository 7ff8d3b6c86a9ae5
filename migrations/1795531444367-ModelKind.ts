import { MigrationInterface, QueryRunner } from 'typeorm';

export class ModelKind1795531444367 implements MigrationInterface {
  name = 'ModelKind1795531444367';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "models"
            ADD "kind" text NOT NULL DEFAULT 'chat'
        `);
    await queryRunner.query(`
            ALTER TABLE "models"
            ADD CONSTRAINT "models_kind_check" CHECK ("kind" IN ('chat', 'embedding'))
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "models" DROP CONSTRAINT "models_kind_check"
        `);
    await queryRunner.query(`
            ALTER TABLE "models" DROP COLUMN "kind"
        `);
  }
}
