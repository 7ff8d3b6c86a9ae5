import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
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
import { UsdtOrders } from 'src/modules/payments/chain/usdt-orders';
import { AdminPaymentsController } from 'src/modules/payments/admin-payments.controller';
import { AdminRedemptionCodesController } from 'src/modules/payments/admin-redemption-codes.controller';
import { ConsoleTopupsController } from 'src/modules/payments/console-topups.controller';
import { PaymentConfirmation } from 'src/modules/payments/payment-confirmation.service';
import { PaymentJobs } from 'src/modules/payments/payment-jobs';
import { PaymentProviders } from 'src/modules/payments/payment-providers';
import { PaymentSettingsEntity } from 'src/modules/payments/payment-settings.entity';
import { PaymentSettingsService } from 'src/modules/payments/payment-settings.service';
import { PaymentThrottle } from 'src/modules/payments/payment-throttle';
import { RedemptionCodeEntity } from 'src/modules/payments/redemption-code.entity';
import { RedemptionCodesAdminService } from 'src/modules/payments/redemption-codes-admin.service';
import { RedemptionsService } from 'src/modules/payments/redemptions.service';
import { TopupOrderEntity } from 'src/modules/payments/topup-order.entity';
import { TopupOrdersRepository } from 'src/modules/payments/topup-orders.repository';
import { TopupsService } from 'src/modules/payments/topups.service';
import { WebhooksController } from 'src/modules/payments/webhooks.controller';
import { WebhooksService } from 'src/modules/payments/webhooks.service';
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
  ],
  controllers: [ConsoleTopupsController, AdminPaymentsController, AdminRedemptionCodesController, WebhooksController],
  providers: [
    TopupsService,
    PaymentSettingsService,
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
