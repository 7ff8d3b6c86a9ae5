import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Operators' controls over keys and redemption codes (docs/operators.md, "Keys and codes"):
 * - `api_keys.disabled_by`: who disabled a disabled key (`owner` or `operator`); the console cannot
 *   enable a key an operator disabled. Keys disabled before this are their owner's.
 * - `redemption_codes.code_prefix`: the code's first group, shown in lists instead of the code (only
 *   its hash is kept). Codes made before this had no prefix kept; they stay redeemable by their hash
 *   and list with a null prefix.
 * - `redemption_codes.voided_at`: a voided code cannot be redeemed; a redeemed one cannot be voided.
 * - Indexes for the admin lists, newest first: keys by time or by prefix, codes by time or batch.
 */
export class OperatorKeyAndCodeControls1795760000000 implements MigrationInterface {
  name = 'OperatorKeyAndCodeControls1795760000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "api_keys" ADD "disabled_by" text`);
    await queryRunner.query(`UPDATE "api_keys" SET "disabled_by" = 'owner' WHERE "status" = 'disabled'`);
    await queryRunner.query(
      `ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_disabled_by_check" CHECK (("status" = 'disabled') = ("disabled_by" IS NOT NULL) AND ("disabled_by" IS NULL OR "disabled_by" IN ('owner', 'operator')))`,
    );
    await queryRunner.query(`CREATE INDEX "api_keys_created_idx" ON "api_keys" ("created_at", "id")`);
    await queryRunner.query(`CREATE INDEX "api_keys_prefix_idx" ON "api_keys" ("key_prefix" text_pattern_ops)`);
    await queryRunner.query(`ALTER TABLE "redemption_codes" ADD "code_prefix" text`);
    await queryRunner.query(`ALTER TABLE "redemption_codes" ADD "voided_at" TIMESTAMP WITH TIME ZONE`);
    await queryRunner.query(
      `ALTER TABLE "redemption_codes" ADD CONSTRAINT "redemption_codes_void_check" CHECK ("voided_at" IS NULL OR "redeemed_at" IS NULL)`,
    );
    await queryRunner.query(`CREATE INDEX "redemption_codes_created_idx" ON "redemption_codes" ("created_at", "id")`);
    await queryRunner.query(
      `CREATE INDEX "redemption_codes_batch_created_idx" ON "redemption_codes" ("batch_id", "created_at", "id")`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."redemption_codes_batch_created_idx"`);
    await queryRunner.query(`DROP INDEX "public"."redemption_codes_created_idx"`);
    await queryRunner.query(`ALTER TABLE "redemption_codes" DROP CONSTRAINT "redemption_codes_void_check"`);
    await queryRunner.query(`ALTER TABLE "redemption_codes" DROP COLUMN "voided_at"`);
    await queryRunner.query(`ALTER TABLE "redemption_codes" DROP COLUMN "code_prefix"`);
    await queryRunner.query(`DROP INDEX "public"."api_keys_prefix_idx"`);
    await queryRunner.query(`DROP INDEX "public"."api_keys_created_idx"`);
    await queryRunner.query(`ALTER TABLE "api_keys" DROP CONSTRAINT "api_keys_disabled_by_check"`);
    await queryRunner.query(`ALTER TABLE "api_keys" DROP COLUMN "disabled_by"`);
  }
}
