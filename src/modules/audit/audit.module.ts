import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AdminAuditLog } from 'src/common/interceptors/admin-audit.interceptor';
import { AdminAuditController } from 'src/modules/audit/admin-audit.controller';
import { AuditEntryEntity } from 'src/modules/audit/audit-entry.entity';
import { AuditRepository } from 'src/modules/audit/audit.repository';
import { AuditService } from 'src/modules/audit/audit.service';

/**
 * The audit log of admin changes. Global: every module with an admin controller gets the
 * interceptor that AdminAuth() adds, and the interceptor needs the log.
 */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([AuditEntryEntity])],
  controllers: [AdminAuditController],
  providers: [AuditRepository, AuditService, { provide: AdminAuditLog, useExisting: AuditService }],
  exports: [AdminAuditLog],
})
export class AuditModule {}
