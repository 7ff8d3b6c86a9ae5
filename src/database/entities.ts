import { AccountTokenEntity } from 'src/modules/mail/account-token.entity';
import { AccountEntity } from 'src/modules/accounts/account.entity';
import { AccountGroupEntity } from 'src/modules/account-groups/account-group.entity';
import { AuditEntryEntity } from 'src/modules/audit/audit-entry.entity';
import { UsageChannelDailyEntity } from 'src/modules/billing/usage-channel-daily.entity';
import { BalanceAlertEntity } from 'src/modules/balance-alerts/balance-alert.entity';
import { UsageDailyEntity } from 'src/modules/billing/usage-daily.entity';
import { UsageRecordEntity } from 'src/modules/billing/usage-record.entity';
import { ApiKeyEntity } from 'src/modules/api-keys/api-key.entity';
import { ChannelEntity } from 'src/modules/channels/channel.entity';
import { LedgerEntryEntity } from 'src/modules/ledger/ledger-entry.entity';
import { LedgerReferenceEntity } from 'src/modules/ledger/ledger-reference.entity';
import { ModelRouteEntity } from 'src/modules/models/model-route.entity';
import { ModelEntity } from 'src/modules/models/model.entity';
import { ChainCursorEntity } from 'src/modules/payments/chain/chain-cursor.entity';
import { ChainDepositEntity } from 'src/modules/payments/chain/chain-deposit.entity';
import { DepositAddressEntity } from 'src/modules/payments/chain/deposit-address.entity';
import { PaymentSettingsEntity } from 'src/modules/payments/settings/payment-settings.entity';
import { RedemptionCodeEntity } from 'src/modules/payments/redemptions/redemption-code.entity';
import { TopupOrderEntity } from 'src/modules/payments/orders/topup-order.entity';
import { ConsoleSessionEntity } from 'src/modules/auth/console-session.entity';
import { RetiredRefreshTokenEntity } from 'src/modules/auth/retired-refresh-token.entity';
import { AccountRateLimitEntity } from 'src/modules/rate-limits/account-rate-limit.entity';
import { StoredResponseEntity, StoredResponseItemEntity } from 'src/modules/responses/stored/stored-response.entity';

export const entities = [
  AccountEntity,
  AccountGroupEntity,
  LedgerEntryEntity,
  LedgerReferenceEntity,
  ApiKeyEntity,
  ChannelEntity,
  ModelEntity,
  ModelRouteEntity,
  UsageRecordEntity,
  UsageDailyEntity,
  UsageChannelDailyEntity,
  AccountRateLimitEntity,
  TopupOrderEntity,
  PaymentSettingsEntity,
  RedemptionCodeEntity,
  DepositAddressEntity,
  ChainDepositEntity,
  ChainCursorEntity,
  ConsoleSessionEntity,
  RetiredRefreshTokenEntity,
  AuditEntryEntity,
  AccountTokenEntity,
  BalanceAlertEntity,
  StoredResponseEntity,
  StoredResponseItemEntity,
];
