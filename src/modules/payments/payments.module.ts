import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccountsModule } from 'src/modules/accounts/accounts.module';
import { registerQueue } from 'src/common/queue/bull-queues';
import { QueueName } from 'src/common/queue/queue.constants';
import { LedgerModule } from 'src/modules/ledger/ledger.module';
import { ChainCursorsRepository } from 'src/modules/payments/chain/chain-cursors.repository';
import { DepositCrediting } from 'src/modules/payments/chain/deposit-crediting.service';
import { Erc20Finality } from 'src/modules/payments/chain/erc20-finality';
import { ChainCursorEntity } from 'src/modules/payments/chain/chain-cursor.entity';
import { ChainDepositEntity } from 'src/modules/payments/chain/chain-deposit.entity';
import { ChainDepositsRepository } from 'src/modules/payments/chain/chain-deposits.repository';
import { DepositAddressEntity } from 'src/modules/payments/chain/deposit-address.entity';
import { DepositAddressesRepository } from 'src/modules/payments/chain/deposit-addresses.repository';
import { DepositAddressesService } from 'src/modules/payments/chain/deposit-addresses.service';
import { DepositsService } from 'src/modules/payments/chain/deposits.service';
import { UsdtOrders } from 'src/modules/payments/topups/usdt-orders';
import { AdminPaymentsController } from 'src/modules/payments/admin-payments.controller';
import { AdminRedemptionCodesController } from 'src/modules/payments/redemptions/admin-redemption-codes.controller';
import { ConsoleTopupsController } from 'src/modules/payments/console-topups.controller';
import { PaymentConfirmation } from 'src/modules/payments/confirmation/payment-confirmation.service';
import { PaymentJobs } from 'src/modules/payments/confirmation/payment-jobs';
import { PaymentProviders } from 'src/modules/payments/providers/payment-providers';
import { PaymentSettingsEntity } from 'src/modules/payments/settings/payment-settings.entity';
import { PaymentSettingsRepository } from 'src/modules/payments/settings/payment-settings.repository';
import { PaymentSettingsService } from 'src/modules/payments/settings/payment-settings.service';
import { PaymentThrottle } from 'src/modules/payments/payment-throttle';
import { RedemptionCodeEntity } from 'src/modules/payments/redemptions/redemption-code.entity';
import { RedemptionCodesRepository } from 'src/modules/payments/redemptions/redemption-codes.repository';
import { RedemptionsService } from 'src/modules/payments/redemptions/redemptions.service';
import { TopupOrderEntity } from 'src/modules/payments/orders/topup-order.entity';
import { TopupOrdersRepository } from 'src/modules/payments/orders/topup-orders.repository';
import { TopupsService } from 'src/modules/payments/topups/topups.service';
import { WebhooksController } from 'src/modules/payments/webhooks/webhooks.controller';
import { WebhooksService } from 'src/modules/payments/webhooks/webhooks.service';
import { RedemptionCodesAdminService } from 'src/modules/payments/redemptions/redemption-codes-admin.service';
import { RateLimitsModule } from 'src/modules/rate-limits/rate-limits.module';

const CORE_PROVIDERS = [
  TopupOrdersRepository,
  PaymentProviders,
  PaymentConfirmation,
  PaymentJobs,
  DepositAddressesRepository,
  DepositAddressesService,
  ChainDepositsRepository,
  ChainCursorsRepository,
  DepositCrediting,
  Erc20Finality,
];

/** What both processes need of payments: the orders, the wallets, the one confirmation and the job producer. */
@Module({
  imports: [
    TypeOrmModule.forFeature([
      TopupOrderEntity,
      PaymentSettingsEntity,
      RedemptionCodeEntity,
      DepositAddressEntity,
      ChainDepositEntity,
      ChainCursorEntity,
    ]),
    registerQueue(QueueName.Payments),
    LedgerModule,
  ],
  providers: [...CORE_PROVIDERS],
  exports: [...CORE_PROVIDERS],
})
export class PaymentsCoreModule {}

/** Payments as the API serves them: orders, webhooks, settings and redemption codes. */
@Module({
  imports: [
    PaymentsCoreModule,
    TypeOrmModule.forFeature([PaymentSettingsEntity, RedemptionCodeEntity]),
    RateLimitsModule,
    // VerifiedEmailGuard on the console's top-ups reads through AccountsRepository.
    AccountsModule,
  ],
  controllers: [ConsoleTopupsController, AdminPaymentsController, AdminRedemptionCodesController, WebhooksController],
  providers: [
    TopupsService,
    PaymentSettingsService,
    PaymentSettingsRepository,
    RedemptionCodesRepository,
    RedemptionsService,
    RedemptionCodesAdminService,
    WebhooksService,
    PaymentThrottle,
    DepositsService,
    UsdtOrders,
  ],
  exports: [TopupsService],
})
export class PaymentsModule {}
