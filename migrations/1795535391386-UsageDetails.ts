import { MigrationInterface, QueryRunner } from 'typeorm';

export class UsageDetails1795535391386 implements MigrationInterface {
  name = 'UsageDetails1795535391386';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "usage_daily"
            ADD "cached_tokens" bigint NOT NULL DEFAULT '0'
        `);
    await queryRunner.query(`
            ALTER TABLE "usage_daily"
            ADD "cache_write_tokens" bigint NOT NULL DEFAULT '0'
        `);
    await queryRunner.query(`
            ALTER TABLE "usage_daily"
            ADD "reasoning_tokens" bigint NOT NULL DEFAULT '0'
        `);
    await queryRunner.query(`
            ALTER TABLE "usage_records"
            ADD "cached_tokens" integer NOT NULL DEFAULT '0'
        `);
    await queryRunner.query(`
            ALTER TABLE "usage_records"
            ADD "cache_write_tokens" integer NOT NULL DEFAULT '0'
        `);
    await queryRunner.query(`
            ALTER TABLE "usage_records"
            ADD "reasoning_tokens" integer NOT NULL DEFAULT '0'
        `);
    await queryRunner.query(`
            ALTER TABLE "models"
            ADD "cached_input_price" bigint
        `);
    await queryRunner.query(`
            ALTER TABLE "models"
            ADD "cache_write_input_price" bigint
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "models" DROP COLUMN "cache_write_input_price"
        `);
    await queryRunner.query(`
            ALTER TABLE "models" DROP COLUMN "cached_input_price"
        `);
    await queryRunner.query(`
            ALTER TABLE "usage_records" DROP COLUMN "reasoning_tokens"
        `);
    await queryRunner.query(`
            ALTER TABLE "usage_records" DROP COLUMN "cache_write_tokens"
        `);
    await queryRunner.query(`
            ALTER TABLE "usage_records" DROP COLUMN "cached_tokens"
        `);
    await queryRunner.query(`
            ALTER TABLE "usage_daily" DROP COLUMN "reasoning_tokens"
        `);
    await queryRunner.query(`
            ALTER TABLE "usage_daily" DROP COLUMN "cache_write_tokens"
        `);
    await queryRunner.query(`
            ALTER TABLE "usage_daily" DROP COLUMN "cached_tokens"
        `);
  }
}
