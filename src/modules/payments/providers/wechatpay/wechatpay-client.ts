import { WechatPayConfig } from 'src/config/payments-config';
import { ProviderUnavailable } from 'src/modules/payments/providers/payment-provider';
import { callProvider, ProviderAnswer } from 'src/modules/payments/providers/provider-http';
import { signatureHeadersOf } from 'src/modules/payments/providers/wechatpay/wechatpay-headers';
import {
  authorizationHeader,
  signatureMessage,
  verifyMessage,
} from 'src/modules/payments/providers/wechatpay/wechatpay-signature';

/** What we ask of WeChat Pay; named in every error. */
export type WechatPayOperation = 'create' | 'query' | 'close';

/** An answer whose signature checked out: its status and its JSON body (null when it has none). */
export interface VerifiedAnswer {
  status: number;
  body: unknown;
}

export interface WechatPayClientOptions {
  /** How long one call may take; provider-http's default otherwise. */
  timeoutMs?: number;
}

/** The code of an APIv3 error answer (`{ code, message }`), when it has a plausible one. */
export function errorCodeOf(body: unknown): string | undefined {
  const code = (body as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z_]{1,64}$/.test(code) ? code : undefined;
}

/**
 * Signed APIv3 calls: each request carries our Authorization header, and each answer must be signed by
 * the platform key we know, or it is not believed (ProviderUnavailable, like no answer at all).
 */
export class WechatPayClient {
  constructor(
    private readonly config: WechatPayConfig,
    private readonly options: WechatPayClientOptions = {},
  ) {}

  async call(
    operation: WechatPayOperation,
    method: 'GET' | 'POST',
    pathWithQuery: string,
    payload?: object,
  ): Promise<VerifiedAnswer> {
    const body = payload === undefined ? '' : JSON.stringify(payload);
    const headers: Record<string, string> = {
      Accept: 'application/json',
      Authorization: authorizationHeader(this.config, { method, pathWithQuery, body }),
    };
    if (body !== '') {
      headers['Content-Type'] = 'application/json';
    }
    let answer: ProviderAnswer;
    try {
      answer = await callProvider(
        `${this.config.baseUrl}${pathWithQuery}`,
        { method, headers, body: body === '' ? undefined : body },
        { timeoutMs: this.options.timeoutMs },
      );
    } catch (error) {
      throw unavailable(operation, error instanceof Error ? error.message : 'the call failed');
    }
    this.verifyAnswer(operation, answer);
    return { status: answer.status, body: parseBody(operation, answer.text) };
  }

  private verifyAnswer(operation: WechatPayOperation, answer: ProviderAnswer): void {
    const headers = signatureHeadersOf(answer.headers);
    if (!headers) {
      throw unavailable(operation, `the answer (status ${answer.status}) is not signed`);
    }
    if (headers.serial !== this.config.platformPublicKeyId) {
      throw unavailable(operation, 'the answer is signed with a key that is not the platform key we know');
    }
    const message = signatureMessage([headers.timestamp, headers.nonce, answer.text]);
    if (!verifyMessage(message, headers.signature, this.config.platformPublicKey)) {
      throw unavailable(operation, `the answer's signature (status ${answer.status}) does not verify`);
    }
  }
}

function parseBody(operation: WechatPayOperation, text: string): unknown {
  if (text === '') {
    return null;
  }
  try {
    return JSON.parse(text);
  } catch {
    throw unavailable(operation, 'the answer is not JSON');
  }
}

export function unavailable(operation: WechatPayOperation, reason: string): ProviderUnavailable {
  return new ProviderUnavailable(`WeChat Pay ${operation}: ${reason}`);
}
