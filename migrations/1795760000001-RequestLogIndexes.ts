import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The request log's indexes (`GET /admin/requests`, docs/operators.md "Request log"): each filter
 * that has no account to narrow it gets an index leading with it and then the page order
 * (created_at, request_id), so a page newest first within any time range reads only its rows. The
 * client's request id is NULL on most rows: a partial index keeps only those that have one. By
 * account (and key, resolved to its account) the existing account indexes serve; by request id the
 * primary key. Created on the partitioned table, so every month's partition gets its own.
 */
export class RequestLogIndexes1795760000001 implements MigrationInterface {
  name = 'RequestLogIndexes1795760000001';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX "usage_records_created_idx" ON "usage_records" ("created_at", "request_id")`);
    await queryRunner.query(
      `CREATE INDEX "usage_records_model_created_idx" ON "usage_records" ("model_id", "created_at", "request_id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "usage_records_channel_created_idx" ON "usage_records" ("channel_id", "created_at", "request_id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "usage_records_status_created_idx" ON "usage_records" ("status", "created_at", "request_id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "usage_records_client_request_idx" ON "usage_records" ("client_request_id", "created_at") WHERE "client_request_id" IS NOT NULL`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."usage_records_client_request_idx"`);
    await queryRunner.query(`DROP INDEX "public"."usage_records_status_created_idx"`);
    await queryRunner.query(`DROP INDEX "public"."usage_records_channel_created_idx"`);
    await queryRunner.query(`DROP INDEX "public"."usage_records_model_created_idx"`);
    await queryRunner.query(`DROP INDEX "public"."usage_records_created_idx"`);
  }
}
