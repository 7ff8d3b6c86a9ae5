import { MigrationInterface, QueryRunner } from 'typeorm';

/** Per-channel timeouts (null: the process default) and the hours open after which a channel is switched off. */
export class ChannelHealth1795600000000 implements MigrationInterface {
  name = 'ChannelHealth1795600000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "channels"
            ADD "connect_timeout_ms" integer,
            ADD "first_byte_timeout_ms" integer,
            ADD "stream_first_byte_timeout_ms" integer,
            ADD "silence_timeout_ms" integer,
            ADD "auto_disable_after_hours" double precision
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "channels"
            DROP COLUMN "auto_disable_after_hours",
            DROP COLUMN "silence_timeout_ms",
            DROP COLUMN "stream_first_byte_timeout_ms",
            DROP COLUMN "first_byte_timeout_ms",
            DROP COLUMN "connect_timeout_ms"
        `);
  }
}
