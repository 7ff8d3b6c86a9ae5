import { Module } from '@nestjs/common';
import { StoredResponsesExpiry } from 'src/modules/responses/stored/stored-responses-expiry.service';
import { StoredResponsesRepository } from 'src/modules/responses/stored/stored-responses.repository';

/** The worker's side of kept Responses answers: deleting them once expired. */
@Module({
  providers: [StoredResponsesRepository, StoredResponsesExpiry],
  exports: [StoredResponsesExpiry],
})
export class StoredResponsesWorkerModule {}
