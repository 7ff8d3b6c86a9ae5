import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What support needs to find and follow one request (docs/operators.md): the client's own
 * X-Request-Id, the provider's request id, and the upstream's time to first byte. All nullable: old
 * rows and upstreams that send no id keep NULL. Adding nullable columns to the partitioned table is
 * a catalog change only (no rewrite).
 */
export class UsageRequestIds1795740000000 implements MigrationInterface {
  name = 'UsageRequestIds1795740000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "usage_records" ADD "client_request_id" text`);
    await queryRunner.query(`ALTER TABLE "usage_records" ADD "provider_request_id" text`);
    await queryRunner.query(`ALTER TABLE "usage_records" ADD "first_byte_ms" integer`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "usage_records" DROP COLUMN "first_byte_ms"`);
    await queryRunner.query(`ALTER TABLE "usage_records" DROP COLUMN "provider_request_id"`);
    await queryRunner.query(`ALTER TABLE "usage_records" DROP COLUMN "client_request_id"`);
  }
}
