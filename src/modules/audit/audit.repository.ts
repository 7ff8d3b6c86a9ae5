import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { AuditEntryEntity, AuditOutcome } from 'src/modules/audit/audit-entry.entity';
import { DataSource, EntityManager, Repository } from 'typeorm';

export interface AuditFilter {
  targetType?: string;
  targetId?: string;
  actor?: string;
  /** Inclusive UTC days. */
  from: string | null;
  to: string | null;
  /** Entries with a smaller id only (the cursor). */
  beforeId: string | null;
  limit: number;
}

export type NewAuditEntry = Pick<
  AuditEntryEntity,
  'actor' | 'actorRole' | 'method' | 'route' | 'targetType' | 'targetId' | 'before'
>;

@Injectable()
export class AuditRepository {
  constructor(
    @InjectRepository(AuditEntryEntity) private readonly entries: Repository<AuditEntryEntity>,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  /** For reading the targets' state: plain reads outside any transaction of the change. */
  get manager(): EntityManager {
    return this.dataSource.manager;
  }

  async insertPending(entry: NewAuditEntry): Promise<string> {
    const saved = await this.entries.save(this.entries.create({ ...entry, outcome: 'pending', secretsChanged: [] }));
    return saved.id;
  }

  async complete(
    id: string,
    outcome: AuditOutcome,
    status: number,
    after: Record<string, unknown> | null,
    secretsChanged: string[],
  ): Promise<void> {
    await this.dataSource.query(
      'UPDATE admin_audit_log SET outcome = $2, status = $3, after = $4::jsonb, secrets_changed = $5 WHERE id = $1',
      [id, outcome, status, after === null ? null : JSON.stringify(after), secretsChanged],
    );
  }

  list(filter: AuditFilter): Promise<AuditEntryEntity[]> {
    const query = this.entries.createQueryBuilder('entry').orderBy('entry.id', 'DESC').take(filter.limit);
    if (filter.targetType !== undefined) {
      query.andWhere('entry.target_type = :targetType', { targetType: filter.targetType });
    }
    if (filter.targetId !== undefined) {
      query.andWhere('entry.target_id = :targetId', { targetId: filter.targetId });
    }
    if (filter.actor !== undefined) {
      query.andWhere('entry.actor = :actor', { actor: filter.actor });
    }
    if (filter.from !== null) {
      query.andWhere('entry.at >= :from::date', { from: filter.from });
    }
    if (filter.to !== null) {
      query.andWhere(`entry.at < :to::date + 1`, { to: filter.to });
    }
    if (filter.beforeId !== null) {
      query.andWhere('entry.id < :beforeId', { beforeId: filter.beforeId });
    }
    return query.getMany();
  }
}
