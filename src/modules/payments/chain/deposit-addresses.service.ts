import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from 'src/config/app-config';
import { ethDepositAddress, tronDepositAddress } from 'src/values/address-derivation';
import { DepositAddressEntity } from 'src/modules/payments/chain/deposit-address.entity';
import { DepositAddressesRepository } from 'src/modules/payments/chain/deposit-addresses.repository';
import { USDT_NETWORKS, UsdtNetwork } from 'src/modules/payments/chain/usdt-network';

/** Each account's own address per configured network, derived from the operator's extended public keys. */
@Injectable()
export class DepositAddressesService {
  constructor(
    private readonly addresses: DepositAddressesRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The networks whose extended public key is set. */
  enabledNetworks(): UsdtNetwork[] {
    return USDT_NETWORKS.filter((network) => this.xpubOf(network) !== null);
  }

  /** The account's address on an enabled network, created on first use. */
  async addressFor(accountId: string, network: UsdtNetwork): Promise<DepositAddressEntity> {
    const xpub = this.xpubOf(network);
    if (!xpub) {
      throw new Error(`${network} is not configured`);
    }
    const derive = network === 'TRC20' ? tronDepositAddress : ethDepositAddress;
    return this.addresses.findOrAllocate(accountId, network, (index) => derive(xpub, index));
  }

  /** The account's addresses on every enabled network. */
  async listFor(accountId: string): Promise<DepositAddressEntity[]> {
    const addresses: DepositAddressEntity[] = [];
    for (const network of this.enabledNetworks()) {
      addresses.push(await this.addressFor(accountId, network));
    }
    return addresses;
  }

  private xpubOf(network: UsdtNetwork) {
    const chains = this.config.payments.chains;
    return (network === 'TRC20' ? chains.tron?.xpub : chains.erc20?.xpub) ?? null;
  }
}
