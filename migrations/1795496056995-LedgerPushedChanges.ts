import { MigrationInterface, QueryRunner } from 'typeorm';

export class LedgerPushedChanges1795496056995 implements MigrationInterface {
  name = 'LedgerPushedChanges1795496056995';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE INDEX "ledger_entries_pushed_changes_idx" ON "ledger_entries" ("created_at")
            WHERE "kind" IN ('adjustment', 'topup')
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."ledger_entries_pushed_changes_idx"
        `);
  }
}
