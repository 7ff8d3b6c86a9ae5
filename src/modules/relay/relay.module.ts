import { Module } from '@nestjs/common';
import { BillingModule } from 'src/modules/billing/billing.module';
import { ChannelsModule } from 'src/modules/channels/channels.module';
import { LedgerModule } from 'src/modules/ledger/ledger.module';
import { ModelsModule } from 'src/modules/models/models.module';
import { RateLimitsModule } from 'src/modules/rate-limits/rate-limits.module';
import { AdmissionGate } from 'src/modules/relay/admission/admission-gate';
import { CompletionAdmission } from 'src/modules/relay/admission/completion-admission.service';
import { AdminChannelTestController } from 'src/modules/relay/channel-test/admin-channel-test.controller';
import { ChannelTestService } from 'src/modules/relay/channel-test/channel-test.service';
import { CompletionRelay } from 'src/modules/relay/completion-relay.service';
import { UpstreamClient } from 'src/modules/relay/upstream/upstream-client';

/**
 * What every /v1 surface shares: the admission, routing over the model's routes with failover and
 * the breaker, the provider adapters and upstream pools, the stream relay. The surfaces (chat
 * completions, responses, messages, embeddings, text completions) are peers on top of it; the
 * operator's channel test uses the same adapters and pools, outside admission and billing.
 */
@Module({
  imports: [ModelsModule, ChannelsModule, BillingModule, LedgerModule, RateLimitsModule],
  controllers: [AdminChannelTestController],
  providers: [AdmissionGate, CompletionAdmission, CompletionRelay, UpstreamClient, ChannelTestService],
  exports: [CompletionAdmission, CompletionRelay, UpstreamClient],
})
export class RelayModule {}
