import { INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { mnemonicToSeedSync } from '@scure/bip39';
import { HDKey } from '@scure/bip32';
import Redis from 'ioredis';
import pino from 'pino';
import { REDIS } from 'src/common/redis/redis.tokens';
import { loadConfig } from 'src/config/app-config';
import { CoreModule } from 'src/core.module';
import { DepositAddressesService } from 'src/modules/payments/chain/deposit-addresses.service';
import { Erc20Watcher } from 'src/modules/payments/chain/erc20-watcher';
import { Trc20Watcher } from 'src/modules/payments/chain/trc20-watcher';
import { TRONGRID_CLOCK, TronGridBudget } from 'src/modules/payments/chain/trongrid-budget';
import { UsdtNetwork } from 'src/modules/payments/chain/usdt-network';
import { PaymentsCoreModule } from 'src/modules/payments/payments.module';
import { creditForUsdt } from 'src/common/money/topup-amounts';
import { TopupOrderEntity } from 'src/modules/payments/orders/topup-order.entity';
import { TopupOrdersRepository } from 'src/modules/payments/orders/topup-orders.repository';
import { DataSource } from 'typeorm';

/** The operator's wallet in these tests: the well-known test mnemonic (its keys are public knowledge). */
export const TEST_MNEMONIC = 'test test test test test test test test test test test junk';
const root = HDKey.fromMasterSeed(mnemonicToSeedSync(TEST_MNEMONIC));
export const TRON_XPUB = root.derive("m/44'/195'/0'").publicExtendedKey;
export const ETH_XPUB = root.derive("m/44'/60'/0'").publicExtendedKey;
/** Deposit addresses of the local chain's tests: not Hardhat's funded accounts (m/44'/60'/0'), which deploy and send. */
export const ETH_DEPOSIT_XPUB = root.derive("m/44'/60'/1'").publicExtendedKey;
/** The mainnet USDT contract on TRON, which the fake TronGrid also serves. */
export const TRC20_USDT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
/** Another token's contract (the WIN token): the "USDT" impostor in these tests. */
export const TRC20_OTHER = 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7';

/** The worker's chain watchers and what they credit, on the run's database, without any BullMQ worker. */
export interface ChainWatchers {
  app: INestApplicationContext;
  trc20: Trc20Watcher;
  erc20: Erc20Watcher;
  addresses: DepositAddressesService;
  orders: TopupOrdersRepository;
  dataSource: DataSource;
  /** Closes the context and its Redis connection (which the worker's own module closes in production). */
  close(): Promise<void>;
  /** A pending USDT order of `amount` micros on `network`, as the console creates it. */
  pendingOrder(accountId: string, network: UsdtNetwork, amount: bigint): Promise<TopupOrderEntity>;
}

/** `clock`: what the TronGrid budget takes for now (ms), to pass its minutes without waiting for them. */
export async function startChainWatchers(env: Record<string, string>, clock?: () => number): Promise<ChainWatchers> {
  const config = loadConfig({ ...process.env, CHAIN_WATCH_EVERY_MS: '3600000', ...env });
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const moduleRef = await Test.createTestingModule({
    imports: [CoreModule.forRoot(config, logger), PaymentsCoreModule],
    providers: [
      Trc20Watcher,
      Erc20Watcher,
      TronGridBudget,
      ...(clock ? [{ provide: TRONGRID_CLOCK, useValue: clock }] : []),
    ],
  }).compile();
  const app = await moduleRef.init();
  const orders = app.get(TopupOrdersRepository);
  return {
    app,
    trc20: app.get(Trc20Watcher),
    erc20: app.get(Erc20Watcher),
    addresses: app.get(DepositAddressesService),
    orders,
    dataSource: app.get(DataSource),
    close: async () => {
      const redis = app.get<Redis>(REDIS);
      await app.close();
      await redis.quit().catch(() => undefined);
    },
    pendingOrder: (accountId, network, amount) =>
      orders.create({
        accountId,
        currency: 'USDT',
        method: null,
        network,
        amount,
        credit: creditForUsdt(amount),
        rate: null,
        expiresAt: new Date(Date.now() + 3_600_000),
      }),
  };
}

/** What an account's deposits became: [amount micros, status, order's status] oldest first. */
export async function depositsOf(
  dataSource: DataSource,
  accountId: string,
): Promise<[string, string, string | null][]> {
  const rows = await dataSource.query<{ amount: string; status: string; order_status: string | null }[]>(
    `SELECT d.amount, d.status, o.status AS order_status FROM chain_deposits d
     LEFT JOIN topup_orders o ON o.id = d.order_id WHERE d.account_id = $1 ORDER BY d.seq`,
    [accountId],
  );
  return rows.map((row) => [row.amount, row.status, row.order_status]);
}
