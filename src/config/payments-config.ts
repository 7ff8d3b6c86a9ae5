import { createPrivateKey, createPublicKey, KeyObject } from 'node:crypto';
import { ChainConfig, chainConfigOf } from 'src/config/chain-config';
import { ConfigError } from 'src/config/config-error';
import { EnvDto } from 'src/config/env.dto';

export interface AlipayConfig {
  appId: string;
  /** The merchant app's RSA private key: signs our requests (RSA2). */
  privateKey: KeyObject;
  /** Alipay's RSA public key: verifies notifications and answers. */
  alipayPublicKey: KeyObject;
  /** The OpenAPI gateway, e.g. https://openapi.alipay.com/gateway.do. */
  gatewayUrl: string;
}

export interface WechatPayConfig {
  mchId: string;
  appId: string;
  /** 32 bytes: decrypts notification resources (AEAD_AES_256_GCM). */
  apiV3Key: Buffer;
  /** The merchant's private key: signs our requests (WECHATPAY2-SHA256-RSA2048). */
  privateKey: KeyObject;
  /** The serial number of the merchant certificate whose key signs. */
  certSerial: string;
  /** WeChat Pay's public key and its id, as named by the Wechatpay-Serial header. */
  platformPublicKey: KeyObject;
  platformPublicKeyId: string;
  /** e.g. https://api.mch.weixin.qq.com */
  baseUrl: string;
}

export interface PaymentsConfig {
  /** The API's public URL, for notification URLs; null: the wallets are off. */
  publicBaseUrl: string | null;
  alipay: AlipayConfig | null;
  wechatpay: WechatPayConfig | null;
  /**
   * When a pending order's provider is queried again, after its creation: each delay in turn, the
   * last one repeating until the order expires.
   */
  pollDelaysMs: number[];
  /**
   * Hours after expiry an order not confirmed closed at its wallet is still queried, so that a payment
   * made after our expiry is credited even when its notification is lost; 0: never.
   */
  latePaymentHours: number;
  /** USDT on TRC20 and ERC20 (chain-config.ts). */
  chains: ChainConfig;
}

const DEFAULT_POLL_DELAYS_MS = [30_000, 60_000, 120_000, 300_000];
const MIN_POLL_DELAY_MS = 100;
const DEFAULT_LATE_PAYMENT_HOURS = 24;

/** PEM from an environment variable: real newlines, or `\n` escapes as one-line env files need. */
function pem(value: string): string {
  return value.includes('\\n') ? value.replace(/\\n/g, '\n') : value;
}

/** An RSA key from PEM, or one line naming the variable. */
function rsaKeyOf(name: string, value: string, kind: 'private' | 'public'): KeyObject {
  try {
    const key = kind === 'private' ? createPrivateKey(pem(value)) : createPublicKey(pem(value));
    if (key.asymmetricKeyType === 'rsa') {
      return key;
    }
  } catch {
    // reported below
  }
  throw new ConfigError(`Invalid environment variable ${name}: must be an RSA ${kind} key in PEM`);
}

/** All of a group's variables, or none of them (the method is then off); a partial group is a mistake. */
function group<K extends keyof EnvDto>(dto: EnvDto, names: K[]): Pick<EnvDto, K> | null {
  const missing = names.filter((name) => dto[name] === undefined);
  if (missing.length === names.length) {
    return null;
  }
  if (missing.length > 0) {
    throw new ConfigError(`Missing environment variable ${missing[0]}: set all of ${names.join(', ')} or none`);
  }
  return dto;
}

function alipayOf(dto: EnvDto): AlipayConfig | null {
  const env = group(dto, ['ALIPAY_APP_ID', 'ALIPAY_PRIVATE_KEY', 'ALIPAY_PUBLIC_KEY']);
  if (!env) {
    return null;
  }
  return {
    appId: env.ALIPAY_APP_ID!,
    privateKey: rsaKeyOf('ALIPAY_PRIVATE_KEY', env.ALIPAY_PRIVATE_KEY!, 'private'),
    alipayPublicKey: rsaKeyOf('ALIPAY_PUBLIC_KEY', env.ALIPAY_PUBLIC_KEY!, 'public'),
    gatewayUrl: dto.ALIPAY_GATEWAY_URL ?? 'https://openapi.alipay.com/gateway.do',
  };
}

function wechatpayOf(dto: EnvDto): WechatPayConfig | null {
  const env = group(dto, [
    'WECHATPAY_MCH_ID',
    'WECHATPAY_APP_ID',
    'WECHATPAY_API_V3_KEY',
    'WECHATPAY_PRIVATE_KEY',
    'WECHATPAY_CERT_SERIAL',
    'WECHATPAY_PLATFORM_PUBLIC_KEY',
    'WECHATPAY_PLATFORM_PUBLIC_KEY_ID',
  ]);
  if (!env) {
    return null;
  }
  return {
    mchId: env.WECHATPAY_MCH_ID!,
    appId: env.WECHATPAY_APP_ID!,
    apiV3Key: Buffer.from(env.WECHATPAY_API_V3_KEY!, 'utf8'),
    privateKey: rsaKeyOf('WECHATPAY_PRIVATE_KEY', env.WECHATPAY_PRIVATE_KEY!, 'private'),
    certSerial: env.WECHATPAY_CERT_SERIAL!,
    platformPublicKey: rsaKeyOf('WECHATPAY_PLATFORM_PUBLIC_KEY', env.WECHATPAY_PLATFORM_PUBLIC_KEY!, 'public'),
    platformPublicKeyId: env.WECHATPAY_PLATFORM_PUBLIC_KEY_ID!,
    baseUrl: (dto.WECHATPAY_BASE_URL ?? 'https://api.mch.weixin.qq.com').replace(/\/+$/, ''),
  };
}

function pollDelaysOf(dto: EnvDto): number[] {
  if (dto.PAYMENT_POLL_DELAYS_MS === undefined) {
    return DEFAULT_POLL_DELAYS_MS;
  }
  const delays = dto.PAYMENT_POLL_DELAYS_MS.split(',').map((part) => Number(part.trim()));
  // A zero delay would have the worker query the wallet in a loop.
  if (delays.some((delay) => delay < MIN_POLL_DELAY_MS)) {
    throw new ConfigError(
      `Invalid environment variable PAYMENT_POLL_DELAYS_MS: each delay must be at least ${MIN_POLL_DELAY_MS} ms`,
    );
  }
  return delays;
}

/** The wallets need a public URL to be notified at: without PUBLIC_BASE_URL they are off, whatever else is set. */
export function paymentsConfigOf(dto: EnvDto): PaymentsConfig {
  const publicBaseUrl = dto.PUBLIC_BASE_URL?.replace(/\/+$/, '') ?? null;
  const alipay = alipayOf(dto);
  const wechatpay = wechatpayOf(dto);
  return {
    publicBaseUrl,
    alipay: publicBaseUrl ? alipay : null,
    wechatpay: publicBaseUrl ? wechatpay : null,
    pollDelaysMs: pollDelaysOf(dto),
    latePaymentHours: dto.ORDER_LATE_PAYMENT_HOURS ?? DEFAULT_LATE_PAYMENT_HOURS,
    chains: chainConfigOf(dto),
  };
}
