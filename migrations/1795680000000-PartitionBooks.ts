import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * usage_records and ledger_entries become partitioned by month of created_at (docs/billing.md,
 * "Partitioned books"). Every row is kept: the old tables are renamed, the partitioned parents are
 * created with the same columns, checks and indexes, a partition is created for every month from the
 * oldest row's to two months ahead, the rows are copied in, and the old tables dropped. TypeORM runs
 * a migration in one transaction, so the books are never seen half moved.
 *
 * Uniqueness must include the partition key, so:
 * - usage_records' primary key becomes (request_id, created_at). created_at is the time the API
 *   received the request, fixed in the usage payload and carried unchanged through every retry, so
 *   it is a function of request_id and the pair is unique exactly when request_id is.
 * - ledger_entries' (kind, reference) uniqueness moves to ledger_references, a narrow table that is
 *   not partitioned, written by the same statement as the entry; ledger_entries keeps a plain index
 *   on (kind, reference) for reading.
 * - seq cannot stay an identity column (Postgres 15 refuses identity on a partitioned table): it
 *   takes its values from a sequence of the same name, continuing after the highest seq written.
 */
export class PartitionBooks1795680000000 implements MigrationInterface {
  name = 'PartitionBooks1795680000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "usage_records" RENAME TO "usage_records_unpartitioned"`);
    await queryRunner.query(`ALTER TABLE "ledger_entries" RENAME TO "ledger_entries_unpartitioned"`);
    // Index names are schema-wide: the old ones go before the parents' are created.
    for (const index of [
      'usage_records_account_created_idx',
      'usage_records_account_model_created_idx',
      'usage_records_account_key_created_idx',
      'ledger_entries_account_created_idx',
      'ledger_entries_kind_reference_key',
      'ledger_entries_account_seq_idx',
      'ledger_entries_pushed_changes_idx',
      'ledger_entries_seq_key',
    ]) {
      await queryRunner.query(`DROP INDEX "public"."${index}"`);
    }
    await queryRunner.query(`
            CREATE TABLE "usage_records" (
                "request_id" text NOT NULL,
                "account_id" uuid NOT NULL,
                "key_id" uuid NOT NULL,
                "model_id" text NOT NULL,
                "channel_id" text NOT NULL,
                "prompt_tokens" integer NOT NULL,
                "completion_tokens" integer NOT NULL,
                "cost" bigint NOT NULL,
                "charged" bigint NOT NULL,
                "usage_source" text NOT NULL,
                "status" text NOT NULL,
                "upstream_latency_ms" integer NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                "cached_tokens" integer NOT NULL DEFAULT '0',
                "cache_write_tokens" integer NOT NULL DEFAULT '0',
                "reasoning_tokens" integer NOT NULL DEFAULT '0',
                CONSTRAINT "usage_records_status_check"
                    CHECK ("status" IN ('completed', 'client_aborted', 'upstream_broken')),
                CONSTRAINT "usage_records_pkey" PRIMARY KEY ("request_id", "created_at")
            ) PARTITION BY RANGE ("created_at")
        `);
    await queryRunner.query(`
            CREATE INDEX "usage_records_account_created_idx" ON "usage_records" ("account_id", "created_at", "request_id")
        `);
    await queryRunner.query(`
            CREATE INDEX "usage_records_account_model_created_idx" ON "usage_records" ("account_id", "model_id", "created_at")
        `);
    await queryRunner.query(`
            CREATE INDEX "usage_records_account_key_created_idx" ON "usage_records" ("account_id", "key_id", "created_at")
        `);
    // Frees the name of the identity's sequence; the rows keep their seq values.
    await queryRunner.query(`ALTER TABLE "ledger_entries_unpartitioned" ALTER COLUMN "seq" DROP IDENTITY`);
    await queryRunner.query(`CREATE SEQUENCE "ledger_entries_seq_seq" AS bigint`);
    await queryRunner.query(`
            CREATE TABLE "ledger_entries" (
                "id" uuid NOT NULL DEFAULT gen_random_uuid(),
                "account_id" uuid NOT NULL,
                "kind" text NOT NULL,
                "amount" bigint NOT NULL,
                "balance_after" bigint NOT NULL,
                "reference" text NOT NULL,
                "description" text,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "seq" bigint NOT NULL DEFAULT nextval('ledger_entries_seq_seq'),
                CONSTRAINT "ledger_entries_kind_check"
                    CHECK ("kind" IN ('topup', 'usage', 'referral_credit', 'adjustment')),
                CONSTRAINT "ledger_entries_pkey" PRIMARY KEY ("id", "created_at"),
                CONSTRAINT "ledger_entries_account_id_fkey" FOREIGN KEY ("account_id")
                    REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE NO ACTION
            ) PARTITION BY RANGE ("created_at")
        `);
    await queryRunner.query(`ALTER SEQUENCE "ledger_entries_seq_seq" OWNED BY "ledger_entries"."seq"`);
    await queryRunner.query(`
            CREATE INDEX "ledger_entries_kind_reference_idx" ON "ledger_entries" ("kind", "reference")
        `);
    await queryRunner.query(`
            CREATE INDEX "ledger_entries_account_created_idx" ON "ledger_entries" ("account_id", "created_at")
        `);
    await queryRunner.query(`
            CREATE INDEX "ledger_entries_account_seq_idx" ON "ledger_entries" ("account_id", "seq")
        `);
    await queryRunner.query(`
            CREATE INDEX "ledger_entries_pushed_changes_idx" ON "ledger_entries" ("created_at")
            WHERE "kind" IN ('adjustment', 'topup')
        `);
    await queryRunner.query(`
            CREATE TABLE "ledger_references" (
                "kind" text NOT NULL,
                "reference" text NOT NULL,
                CONSTRAINT "ledger_references_pkey" PRIMARY KEY ("kind", "reference")
            )
        `);
    await createMonthPartitions(queryRunner, 'usage_records');
    await createMonthPartitions(queryRunner, 'ledger_entries');
    await queryRunner.query(`
            INSERT INTO "usage_records" ("request_id", "account_id", "key_id", "model_id", "channel_id",
                "prompt_tokens", "completion_tokens", "cost", "charged", "usage_source", "status",
                "upstream_latency_ms", "created_at", "cached_tokens", "cache_write_tokens", "reasoning_tokens")
            SELECT "request_id", "account_id", "key_id", "model_id", "channel_id",
                "prompt_tokens", "completion_tokens", "cost", "charged", "usage_source", "status",
                "upstream_latency_ms", "created_at", "cached_tokens", "cache_write_tokens", "reasoning_tokens"
            FROM "usage_records_unpartitioned"
        `);
    await queryRunner.query(`
            INSERT INTO "ledger_entries" ("id", "account_id", "kind", "amount", "balance_after", "reference",
                "description", "created_at", "seq")
            SELECT "id", "account_id", "kind", "amount", "balance_after", "reference",
                "description", "created_at", "seq"
            FROM "ledger_entries_unpartitioned"
        `);
    await queryRunner.query(`
            INSERT INTO "ledger_references" ("kind", "reference")
            SELECT "kind", "reference" FROM "ledger_entries_unpartitioned"
        `);
    // The next entry continues the order: seq is never reused or moved back.
    await queryRunner.query(`
            SELECT setval('ledger_entries_seq_seq', COALESCE(MAX("seq"), 0) + 1, false) FROM "ledger_entries_unpartitioned"
        `);
    await queryRunner.query(`DROP TABLE "usage_records_unpartitioned"`);
    await queryRunner.query(`DROP TABLE "ledger_entries_unpartitioned"`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "usage_records" RENAME TO "usage_records_partitioned"`);
    await queryRunner.query(`ALTER TABLE "ledger_entries" RENAME TO "ledger_entries_partitioned"`);
    for (const index of [
      'usage_records_account_created_idx',
      'usage_records_account_model_created_idx',
      'usage_records_account_key_created_idx',
      'ledger_entries_account_created_idx',
      'ledger_entries_kind_reference_idx',
      'ledger_entries_account_seq_idx',
      'ledger_entries_pushed_changes_idx',
    ]) {
      await queryRunner.query(`DROP INDEX "public"."${index}"`);
    }
    await queryRunner.query(`
            CREATE TABLE "usage_records" (LIKE "usage_records_partitioned" INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
        `);
    await queryRunner.query(`INSERT INTO "usage_records" SELECT * FROM "usage_records_partitioned"`);
    await queryRunner.query(`
            ALTER TABLE "usage_records" ADD CONSTRAINT "PK_d6b7bd75d13514c338ec342a22b" PRIMARY KEY ("request_id")
        `);
    await queryRunner.query(`
            CREATE INDEX "usage_records_account_created_idx" ON "usage_records" ("account_id", "created_at", "request_id")
        `);
    await queryRunner.query(`
            CREATE INDEX "usage_records_account_model_created_idx" ON "usage_records" ("account_id", "model_id", "created_at")
        `);
    await queryRunner.query(`
            CREATE INDEX "usage_records_account_key_created_idx" ON "usage_records" ("account_id", "key_id", "created_at")
        `);
    await queryRunner.query(`
            CREATE TABLE "ledger_entries" (
                "id" uuid NOT NULL DEFAULT gen_random_uuid(),
                "account_id" uuid NOT NULL,
                "kind" text NOT NULL,
                "amount" bigint NOT NULL,
                "balance_after" bigint NOT NULL,
                "reference" text NOT NULL,
                "description" text,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "seq" bigint GENERATED ALWAYS AS IDENTITY NOT NULL,
                CONSTRAINT "ledger_entries_kind_check"
                    CHECK ("kind" IN ('topup', 'usage', 'referral_credit', 'adjustment')),
                CONSTRAINT "PK_6efcb84411d3f08b08450ae75d5" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            INSERT INTO "ledger_entries" OVERRIDING SYSTEM VALUE
            SELECT "id", "account_id", "kind", "amount", "balance_after", "reference", "description", "created_at", "seq"
            FROM "ledger_entries_partitioned"
        `);
    await queryRunner.query(`
            SELECT setval(pg_get_serial_sequence('ledger_entries', 'seq'), COALESCE(MAX("seq"), 0) + 1, false)
            FROM "ledger_entries"
        `);
    await queryRunner.query(`DROP TABLE "usage_records_partitioned"`);
    await queryRunner.query(`DROP TABLE "ledger_entries_partitioned"`);
    await queryRunner.query(`DROP TABLE "ledger_references"`);
    await queryRunner.query(`
            ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_account_id_fkey" FOREIGN KEY ("account_id")
                REFERENCES "accounts"("id") ON DELETE RESTRICT ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            CREATE UNIQUE INDEX "ledger_entries_kind_reference_key" ON "ledger_entries" ("kind", "reference")
        `);
    await queryRunner.query(`
            CREATE INDEX "ledger_entries_account_created_idx" ON "ledger_entries" ("account_id", "created_at")
        `);
    await queryRunner.query(`CREATE UNIQUE INDEX "ledger_entries_seq_key" ON "ledger_entries" ("seq")`);
    await queryRunner.query(`CREATE INDEX "ledger_entries_account_seq_idx" ON "ledger_entries" ("account_id", "seq")`);
    await queryRunner.query(`
            CREATE INDEX "ledger_entries_pushed_changes_idx" ON "ledger_entries" ("created_at")
            WHERE "kind" IN ('adjustment', 'topup')
        `);
  }
}

/**
 * One partition per month (`<table>_pYYYY_MM`, UTC months) from the month of the table's oldest
 * row (or this month) to two months ahead: the worker keeps creating them ahead from then on.
 */
async function createMonthPartitions(queryRunner: QueryRunner, table: 'usage_records' | 'ledger_entries') {
  await queryRunner.query(`
            DO $$
            DECLARE
                month date;
            BEGIN
                FOR month IN
                    SELECT generate_series(
                        LEAST(
                            date_trunc('month', now() AT TIME ZONE 'UTC'),
                            (SELECT date_trunc('month', MIN("created_at") AT TIME ZONE 'UTC') FROM "${table}_unpartitioned")
                        ),
                        date_trunc('month', now() AT TIME ZONE 'UTC') + interval '2 months',
                        interval '1 month'
                    )::date
                LOOP
                    EXECUTE format(
                        'CREATE TABLE %I PARTITION OF "${table}" FOR VALUES FROM (%L) TO (%L)',
                        '${table}_p' || to_char(month, 'YYYY_MM'),
                        month::timestamp AT TIME ZONE 'UTC',
                        (month + interval '1 month')::timestamp AT TIME ZONE 'UTC'
                    );
                END LOOP;
            END
            $$
        `);
}
