import { MigrationInterface, QueryRunner } from 'typeorm';

export class LedgerSequence1795284576440 implements MigrationInterface {
  name = 'LedgerSequence1795284576440';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "ledger_entries"
            ADD "seq" bigint GENERATED ALWAYS AS IDENTITY NOT NULL
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "ledger_entries_seq_key" ON "ledger_entries" ("seq")
        `);
    await queryRunner.query(`
            CREATE INDEX "ledger_entries_account_seq_idx" ON "ledger_entries" ("account_id", "seq")
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."ledger_entries_account_seq_idx"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."ledger_entries_seq_key"
        `);
    await queryRunner.query(`
            ALTER TABLE "ledger_entries" DROP COLUMN "seq"
        `);
  }
}
