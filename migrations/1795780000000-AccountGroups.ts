import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Account groups (docs/operators.md, "Account groups"): a price multiplier on what the customer pays
 * and optional default limits. Every account belongs to one; existing accounts join `default` (1×),
 * so nobody's bill changes.
 */
export class AccountGroups1795780000000 implements MigrationInterface {
  name = 'AccountGroups1795780000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "account_groups" (
                "id" text NOT NULL,
                "description" text NOT NULL DEFAULT '',
                "price_multiplier" numeric(9,6) NOT NULL DEFAULT '1',
                "rpm" integer,
                "tpm" integer,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                CONSTRAINT "account_groups_price_multiplier_check" CHECK ("price_multiplier" > 0 AND "price_multiplier" <= 100),
                CONSTRAINT "account_groups_pkey" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(
      `INSERT INTO "account_groups" ("id", "description") VALUES ('default', 'Every account not put in another group')`,
    );
    await queryRunner.query(`ALTER TABLE "accounts" ADD "group_id" text NOT NULL DEFAULT 'default'`);
    await queryRunner.query(`CREATE INDEX "accounts_group_id_idx" ON "accounts" ("group_id")`);
    await queryRunner.query(`
            ALTER TABLE "accounts"
            ADD CONSTRAINT "accounts_group_id_fkey" FOREIGN KEY ("group_id") REFERENCES "account_groups"("id") ON DELETE RESTRICT ON UPDATE NO ACTION
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "accounts" DROP CONSTRAINT "accounts_group_id_fkey"`);
    await queryRunner.query(`DROP INDEX "public"."accounts_group_id_idx"`);
    await queryRunner.query(`ALTER TABLE "accounts" DROP COLUMN "group_id"`);
    await queryRunner.query(`DROP TABLE "account_groups"`);
  }
}
