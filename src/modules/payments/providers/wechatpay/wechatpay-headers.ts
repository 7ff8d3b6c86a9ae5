type Headers = Record<string, string | string[] | undefined>;

/** The headers WeChat Pay signs its answers and notifications with. */
export interface SignatureHeaders {
  timestamp: string;
  nonce: string;
  signature: string;
  /** The id of the platform key that signed (Wechatpay-Serial). */
  serial: string;
}

/** A header's single value, whatever the case of its name; undefined when absent, empty or repeated. */
export function headerOf(headers: Headers, name: string): string | undefined {
  const wanted = name.toLowerCase();
  const entry = Object.entries(headers).find(([key]) => key.toLowerCase() === wanted);
  const value = entry?.[1];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The four Wechatpay-* signature headers, or null when any is missing. */
export function signatureHeadersOf(headers: Headers): SignatureHeaders | null {
  const timestamp = headerOf(headers, 'Wechatpay-Timestamp');
  const nonce = headerOf(headers, 'Wechatpay-Nonce');
  const signature = headerOf(headers, 'Wechatpay-Signature');
  const serial = headerOf(headers, 'Wechatpay-Serial');
  return timestamp && nonce && signature && serial ? { timestamp, nonce, signature, serial } : null;
}
