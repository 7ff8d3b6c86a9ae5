import { mnemonicToSeedSync } from '@scure/bip39';
import { HDKey } from '@scure/bip32';
import { ConfigError, loadConfig } from 'src/config/app-config';

const root = HDKey.fromMasterSeed(mnemonicToSeedSync('test test test test test test test test test test test junk'));
const TRON_XPUB = root.derive("m/44'/195'/0'").publicExtendedKey;
const ETH_XPUB = root.derive("m/44'/60'/0'").publicExtendedKey;
const load = (env: Record<string, string>) => loadConfig({ NODE_ENV: 'test', ...env }).payments.chains;

describe('chain configuration', () => {
  it('should turn each network on with its extended public key, with the contract defaults', () => {
    expect(load({})).toMatchObject({ tron: null, erc20: null, minDeposit: 1_000_000n, watchEveryMs: 15_000 });
    expect(load({ TRON_XPUB }).tron).toMatchObject({
      url: 'https://api.trongrid.io',
      apiKey: null,
      contract: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
      maxCallsPerMinute: 60,
    });
    expect(load({ TRON_XPUB, TRONGRID_MAX_CALLS_PER_MINUTE: '600' }).tron?.maxCallsPerMinute).toBe(600);
    expect(load({ ETH_XPUB, ETH_RPC_URL: 'http://127.0.0.1:8545' }).erc20).toMatchObject({
      contract: '0xdAC17F958D2ee523a2206206994597C13D831ec7',
      confirmations: 12,
    });
    expect(load({ ETH_XPUB, ETH_RPC_URL: 'http://x', ERC20_CONFIRMATIONS: 'finalized' }).erc20?.confirmations).toBe(
      'finalized',
    );
    expect(load({ USDT_MIN_DEPOSIT: '0.5' }).minDeposit).toBe(500_000n);
  });

  it('should name what is wrong, in one line', () => {
    expect(() => load({ ETH_XPUB })).toThrow(/^Missing environment variable ETH_RPC_URL/);
    expect(() => load({ TRON_XPUB: root.publicExtendedKey })).toThrow(
      new ConfigError(
        'Invalid environment variable TRON_XPUB: must be the extended public key of an account (depth 3)',
      ),
    );
    expect(() => load({ TRON_XPUB: root.derive("m/44'/195'/0'").privateExtendedKey })).toThrow(/TRON_XPUB/);
    expect(() => load({ TRON_XPUB, TRC20_USDT_CONTRACT: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u' })).toThrow(
      /TRC20_USDT_CONTRACT/,
    );
    expect(() => load({ ERC20_CONFIRMATIONS: '0' })).toThrow(/ERC20_CONFIRMATIONS/);
    expect(() => load({ USDT_MIN_DEPOSIT: '0' })).toThrow(/USDT_MIN_DEPOSIT/);
    expect(() => load({ TRONGRID_MAX_CALLS_PER_MINUTE: '0' })).toThrow(/TRONGRID_MAX_CALLS_PER_MINUTE/);
  });
});
