import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The Responses answers kept for `item_reference` (docs/responses.md, "What is kept"): the output
 * items and usage of an answer, sealed, never the request's input. The worker deletes rows past
 * expires_at; items go with their answer.
 */
export class StoredResponses1795730000000 implements MigrationInterface {
  name = 'StoredResponses1795730000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "stored_responses" (
                "id" text NOT NULL,
                "account_id" uuid NOT NULL,
                "sealed" text NOT NULL,
                "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
                "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                CONSTRAINT "stored_responses_pkey" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "stored_responses_expires_at_idx" ON "stored_responses" ("expires_at")
        `);
    await queryRunner.query(`
            CREATE TABLE "stored_response_items" (
                "id" text NOT NULL,
                "response_id" text NOT NULL,
                "position" integer NOT NULL,
                "sealed" text NOT NULL,
                CONSTRAINT "stored_response_items_pkey" PRIMARY KEY ("id")
            )
        `);
    await queryRunner.query(`
            CREATE INDEX "stored_response_items_response_id_idx" ON "stored_response_items" ("response_id")
        `);
    await queryRunner.query(`
            ALTER TABLE "stored_responses"
            ADD CONSTRAINT "stored_responses_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
    await queryRunner.query(`
            ALTER TABLE "stored_response_items"
            ADD CONSTRAINT "stored_response_items_response_id_fkey" FOREIGN KEY ("response_id") REFERENCES "stored_responses"("id") ON DELETE CASCADE ON UPDATE NO ACTION
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "stored_response_items" DROP CONSTRAINT "stored_response_items_response_id_fkey"
        `);
    await queryRunner.query(`
            ALTER TABLE "stored_responses" DROP CONSTRAINT "stored_responses_account_id_fkey"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."stored_response_items_response_id_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "stored_response_items"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."stored_responses_expires_at_idx"
        `);
    await queryRunner.query(`
            DROP TABLE "stored_responses"
        `);
  }
}
