import { Inject, Injectable } from '@nestjs/common';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { SecretBox } from 'src/common/crypto/secret-box';
import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { decodeCursor, encodeCursor } from 'src/common/http/cursor';
import { dayRange } from 'src/common/http/date-range.dto';
import { AdminAuditLog, AdminChange } from 'src/common/interceptors/admin-audit.interceptor';
import { AuditSnapshot, AuditTarget, auditTargetOf } from 'src/modules/audit/audit-targets';
import { AuditRepository } from 'src/modules/audit/audit.repository';
import { AuditEntryDto, AuditPageDto, AuditQueryDto } from 'src/modules/audit/dto/audit.dto';

interface OpenEntry {
  id: string;
  target: AuditTarget;
  targetId: string | null;
  /** The secrets before the change, kept in memory for the comparison only. */
  secretsBefore: Record<string, string>;
}

/**
 * The audit log of admin changes. An entry is written before the change runs, with the target's
 * state then, and completed after it with the state after; a change whose entry cannot be written
 * does not run (503).
 */
@Injectable()
export class AuditService extends AdminAuditLog {
  constructor(
    private readonly repository: AuditRepository,
    private readonly secrets: SecretBox,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    super();
  }

  async begin(change: AdminChange): Promise<OpenEntry> {
    const target = auditTargetOf(change.method, change.route);
    const targetId = target.id(change.params) ?? null;
    try {
      const before = await this.read(target, targetId);
      const id = await this.repository.insertPending({
        actor: change.actor,
        actorRole: change.actorRole,
        method: change.method,
        route: change.route,
        targetType: target.type,
        targetId,
        before: before?.data ?? null,
      });
      return { id, target, targetId, secretsBefore: before?.secrets ?? {} };
    } catch {
      throw new ApiError(ErrorKind.Overloaded, 'The audit log cannot be written now; nothing was changed. Retry.');
    }
  }

  /** The change is done either way: a failure here leaves its entry `pending` (logged), never fails the answer. */
  async finish(entry: unknown, outcome: 'applied' | 'failed', status: number): Promise<void> {
    try {
      await this.complete(entry as OpenEntry, outcome, status);
    } catch (error) {
      const id = (entry as OpenEntry).id;
      this.logger.error({ auditId: id, err: (error as Error).message }, 'could not complete an audit entry');
    }
  }

  private async complete(open: OpenEntry, outcome: 'applied' | 'failed', status: number): Promise<void> {
    const after = outcome === 'applied' ? await this.read(open.target, open.targetId) : null;
    const changed = outcome === 'applied' ? changedSecrets(open.secretsBefore, after?.secrets ?? {}) : [];
    await this.repository.complete(open.id, outcome, status, after?.data ?? null, changed);
  }

  async list(query: AuditQueryDto): Promise<AuditPageDto> {
    const range = dayRange(query);
    const cursor = decodeCursor(query.cursor, (position) => position.length === 1 && /^\d{1,19}$/.test(position[0]));
    const rows = await this.repository.list({
      targetType: query.targetType,
      targetId: query.targetId,
      actor: query.actor,
      ...range,
      beforeId: cursor?.[0] ?? null,
      limit: query.limit + 1,
    });
    const page = rows.slice(0, query.limit);
    return {
      data: page.map((row) => AuditEntryDto.from(row)),
      nextCursor: rows.length > query.limit ? encodeCursor([page[page.length - 1].id]) : null,
    };
  }

  private async read(target: AuditTarget, id: string | null): Promise<AuditSnapshot | null> {
    if (!target.read) {
      return null;
    }
    return target.read(this.repository.manager, id ?? '', this.secrets);
  }
}

/** The names of the secrets that appeared, went, or changed value: compared here, in memory, and never stored. */
export function changedSecrets(before: Record<string, string>, after: Record<string, string>): string[] {
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return names.filter((name) => before[name] !== after[name]);
}
