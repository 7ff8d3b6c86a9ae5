import { AlipayConfig } from 'src/config/payments-config';
import {
  ALIPAY_FORM_CONTENT_TYPE,
  ALIPAY_SUCCESS_CODE,
  AlipayMethod,
  beijingTime,
  responseKeyOf,
} from 'src/modules/payments/providers/alipay/alipay-protocol';
import {
  alipaySigningString,
  rawMemberText,
  signRsa2,
  verifyRsa2,
} from 'src/modules/payments/providers/alipay/alipay-signature';
import { ProviderUnavailable } from 'src/modules/payments/providers/payment-provider';
import { callProvider, ProviderAnswer } from 'src/modules/payments/providers/provider-http';

/** A response whose signature checked out: `code`, `msg`, `sub_code` and the method's own fields. */
export type AlipayResponse = Record<string, unknown>;

export function unavailable(method: AlipayMethod, reason: string): ProviderUnavailable {
  return new ProviderUnavailable(`Alipay ${method}: ${reason}`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The sub_code of a business error, as a reason: codes name the failure, never the request. */
function describeCode(response: AlipayResponse): string {
  const subCode = typeof response.sub_code === 'string' ? ` ${response.sub_code}` : '';
  return `answered code ${String(response.code)}${subCode}`;
}

/** Signed calls to Alipay's OpenAPI gateway and their signed answers. */
export class AlipayGateway {
  constructor(
    private readonly config: AlipayConfig,
    private readonly limits: { timeoutMs?: number } = {},
  ) {}

  /**
   * Calls `method` and returns its response once Alipay's signature on it checks out, whatever its
   * code: the caller decides which business errors are answers. Anything else is ProviderUnavailable.
   */
  async call(method: AlipayMethod, bizContent: object, extra: Record<string, string> = {}): Promise<AlipayResponse> {
    const body = new URLSearchParams(this.signedParams(method, bizContent, extra)).toString();
    let answer: ProviderAnswer;
    try {
      answer = await callProvider(
        this.config.gatewayUrl,
        { method: 'POST', headers: { 'content-type': ALIPAY_FORM_CONTENT_TYPE }, body },
        this.limits,
      );
    } catch (error) {
      throw unavailable(method, error instanceof Error ? error.message : 'the call failed');
    }
    if (answer.status !== 200) {
      throw unavailable(method, `HTTP status ${answer.status}`);
    }
    return this.verifiedResponse(method, answer.text);
  }

  private signedParams(method: AlipayMethod, bizContent: object, extra: Record<string, string>) {
    const params: Record<string, string> = {
      app_id: this.config.appId,
      method,
      format: 'JSON',
      charset: 'utf-8',
      sign_type: 'RSA2',
      timestamp: beijingTime(new Date()),
      version: '1.0',
      biz_content: JSON.stringify(bizContent),
      ...extra,
    };
    return { ...params, sign: signRsa2(alipaySigningString(params, ['sign']), this.config.privateKey) };
  }

  /**
   * The signature covers the response member's text exactly as sent; the response is parsed from that
   * same text, so nothing unsigned (a second member of the same name, say) can slip in.
   */
  private verifiedResponse(method: AlipayMethod, text: string): AlipayResponse {
    const whole = parseJson(text);
    if (!isObject(whole)) {
      throw unavailable(method, 'the answer is not a JSON object');
    }
    const signed = rawMemberText(text, responseKeyOf(method));
    const response: unknown = signed === null ? undefined : parseJson(signed);
    if (!isObject(response)) {
      // Alipay answers a request it cannot route (unknown app, method) with an error_response instead.
      const error = whole.error_response;
      const reason = isObject(error) ? describeCode(error) : `the answer has no ${responseKeyOf(method)}`;
      throw unavailable(method, reason);
    }
    if (typeof whole.sign !== 'string') {
      const code = response.code === ALIPAY_SUCCESS_CODE ? '' : ` (${describeCode(response)})`;
      throw unavailable(method, `the answer is unsigned${code}`);
    }
    if (!verifyRsa2(signed!, whole.sign, this.config.alipayPublicKey)) {
      throw unavailable(method, "the answer's signature does not verify");
    }
    return response;
  }
}

export function isSuccess(response: AlipayResponse): boolean {
  return response.code === ALIPAY_SUCCESS_CODE;
}

export function hasSubCode(response: AlipayResponse, subCode: string): boolean {
  return response.sub_code === subCode;
}

/** Throws unless the call succeeded. */
export function requireSuccess(method: AlipayMethod, response: AlipayResponse): void {
  if (!isSuccess(response)) {
    throw unavailable(method, describeCode(response));
  }
}

/** A field the successful answer must carry. */
export function requireString(method: AlipayMethod, response: AlipayResponse, field: string): string {
  const value = response[field];
  if (typeof value !== 'string' || value === '') {
    throw unavailable(method, `the answer has no ${field}`);
  }
  return value;
}
