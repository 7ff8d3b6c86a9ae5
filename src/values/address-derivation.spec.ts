import { bytesToHex, hexToBytes } from '@noble/hashes/utils';
import { mnemonicToSeedSync } from '@scure/bip39';
import { HDKey } from '@scure/bip32';
import {
  ethDepositAddress,
  parseXpub,
  tronAddressBytes,
  tronAddressOf,
  tronDepositAddress,
} from 'src/values/address-derivation';
import { getAddress } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';

const MNEMONIC = 'test test test test test test test test test test test junk';
const root = HDKey.fromMasterSeed(mnemonicToSeedSync(MNEMONIC));
const accountXpub = (path: string) => parseXpub(root.derive(path).publicExtendedKey)!;

describe('address derivation', () => {
  it("should give the well-known first address of the test mnemonic at m/44'/60'/0'/0/0", () => {
    expect(ethDepositAddress(accountXpub("m/44'/60'/0'"), 0)).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
    expect(ethDepositAddress(accountXpub("m/44'/60'/0'"), 1)).toBe('0x70997970C51812dc3A010C7d01b50e0d17dc79C8');
  });

  it("should checksum every address as EIP-55 does (the chain client's own implementation agrees)", () => {
    const xpub = accountXpub("m/44'/60'/0'");
    for (let index = 0; index < 200; index++) {
      const address = ethDepositAddress(xpub, index);
      expect(address).toBe(getAddress(address.toLowerCase()));
    }
  });

  it('should encode TRON addresses as base58check of 0x41 and 20 bytes', () => {
    const bytes = hexToBytes('41a614f803b6fd780986a42c78ec9c7f77e6ded13c');
    expect(tronAddressOf(bytes)).toBe('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
    expect(tronAddressBytes('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t')).toEqual(bytes);
    expect(tronAddressBytes('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u')).toBeNull();
  });

  it('should derive the TRON address of the key the private path gives', () => {
    const child = root.derive("m/44'/195'/0'/0/3");
    const account = privateKeyToAddress(`0x${bytesToHex(child.privateKey!)}`);
    const address = tronDepositAddress(accountXpub("m/44'/195'/0'"), 3);
    expect(tronAddressBytes(address)!.subarray(1)).toEqual(hexToBytes(account.slice(2)));
  });

  it('should refuse a private extended key and garbage', () => {
    expect(parseXpub(root.derive("m/44'/60'/0'").privateExtendedKey)).toBeNull();
    expect(parseXpub('xpub-nonsense')).toBeNull();
  });
});
