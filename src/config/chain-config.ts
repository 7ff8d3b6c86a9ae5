import { HDKey } from '@scure/bip32';
import { ConfigError } from 'src/config/config-error';
import { EnvDto } from 'src/config/env.dto';
import { parseXpub, tronAddressBytes } from 'src/values/address-derivation';
import { parseAmount } from 'src/values/amounts';

export interface TronConfig {
  /** The operator's extended public key of m/44'/195'/0': deposit addresses derive from it. */
  xpub: HDKey;
  /** TronGrid, without a trailing slash. */
  url: string;
  apiKey: string | null;
  /** The USDT token contract (base58); a transfer of any other token is ignored. */
  contract: string;
  /** Addresses with no pending USDT order and no deposit in the last hour are visited this rarely. */
  coldPollEveryMs: number;
  /** TronGrid calls the watchers may make in any 60 s, all workers together. */
  maxCallsPerMinute: number;
}

export interface Erc20Config {
  xpub: HDKey;
  rpcUrl: string;
  /** The USDT token contract, checksummed or not. */
  contract: `0x${string}`;
  /** Blocks (the transfer's own counts as 1) before a transfer credits, or the chain's `finalized` block. */
  confirmations: number | 'finalized';
}

export interface ChainConfig {
  /** Null: TRC20 is off. */
  tron: TronConfig | null;
  /** Null: ERC20 is off. */
  erc20: Erc20Config | null;
  /** USDT micros: a transfer below it is recorded, not credited. */
  minDeposit: bigint;
  /** How often each network's watcher runs in the worker. */
  watchEveryMs: number;
}

function xpubOf(name: 'TRON_XPUB' | 'ETH_XPUB', value: string): HDKey {
  const key = parseXpub(value);
  // The account level (depth 3): a key of another level derives addresses no wallet of the operator has.
  if (!key || key.depth !== 3) {
    throw new ConfigError(
      `Invalid environment variable ${name}: must be the extended public key of an account (depth 3)`,
    );
  }
  return key;
}

function tronOf(dto: EnvDto): TronConfig | null {
  if (dto.TRON_XPUB === undefined) {
    return null;
  }
  const contract = dto.TRC20_USDT_CONTRACT ?? 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
  if (!tronAddressBytes(contract)) {
    throw new ConfigError('Invalid environment variable TRC20_USDT_CONTRACT: its checksum is wrong');
  }
  return {
    xpub: xpubOf('TRON_XPUB', dto.TRON_XPUB),
    url: (dto.TRONGRID_URL ?? 'https://api.trongrid.io').replace(/\/+$/, ''),
    apiKey: dto.TRONGRID_API_KEY ?? null,
    contract,
    coldPollEveryMs: dto.TRON_COLD_POLL_EVERY_MS ?? 3_600_000,
    // A free key has 100,000 calls a day: 60 a minute is 86,400, with room left for other use of the key.
    maxCallsPerMinute: dto.TRONGRID_MAX_CALLS_PER_MINUTE ?? 60,
  };
}

function erc20Of(dto: EnvDto): Erc20Config | null {
  if (dto.ETH_XPUB === undefined) {
    return null;
  }
  if (dto.ETH_RPC_URL === undefined) {
    throw new ConfigError(
      'Missing environment variable ETH_RPC_URL: ETH_XPUB is set, and ERC20 needs a JSON-RPC endpoint',
    );
  }
  const depth = dto.ERC20_CONFIRMATIONS ?? '12';
  return {
    xpub: xpubOf('ETH_XPUB', dto.ETH_XPUB),
    rpcUrl: dto.ETH_RPC_URL,
    contract: (dto.ERC20_USDT_CONTRACT ?? '0xdAC17F958D2ee523a2206206994597C13D831ec7') as `0x${string}`,
    confirmations: depth === 'finalized' ? 'finalized' : Number(depth),
  };
}

function minDepositOf(dto: EnvDto): bigint {
  const micros = parseAmount(dto.USDT_MIN_DEPOSIT ?? '1', 'USDT');
  if (micros === null) {
    throw new ConfigError('Invalid environment variable USDT_MIN_DEPOSIT: must be a positive USDT amount');
  }
  return micros;
}

/** USDT's networks: each is on when its extended public key is set. */
export function chainConfigOf(dto: EnvDto): ChainConfig {
  return {
    tron: tronOf(dto),
    erc20: erc20Of(dto),
    minDeposit: minDepositOf(dto),
    watchEveryMs: dto.CHAIN_WATCH_EVERY_MS ?? 15_000,
  };
}
