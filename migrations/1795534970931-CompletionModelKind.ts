import { MigrationInterface, QueryRunner } from 'typeorm';

export class CompletionModelKind1795534970931 implements MigrationInterface {
  name = 'CompletionModelKind1795534970931';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "models" DROP CONSTRAINT "models_kind_check"
        `);
    await queryRunner.query(`
            ALTER TABLE "models"
            ADD CONSTRAINT "models_kind_check" CHECK ("kind" IN ('chat', 'embedding', 'completion'))
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            UPDATE "models" SET "enabled" = false, "kind" = 'chat' WHERE "kind" = 'completion'
        `);
    await queryRunner.query(`
            ALTER TABLE "models" DROP CONSTRAINT "models_kind_check"
        `);
    await queryRunner.query(`
            ALTER TABLE "models"
            ADD CONSTRAINT "models_kind_check" CHECK ("kind" IN ('chat', 'embedding'))
        `);
  }
}
