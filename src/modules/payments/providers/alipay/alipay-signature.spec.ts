import { createVerify, generateKeyPairSync } from 'node:crypto';
import {
  alipaySigningString,
  rawMemberText,
  signRsa2,
  verifyRsa2,
} from 'src/modules/payments/providers/alipay/alipay-signature';

const alipay = generateKeyPairSync('rsa', { modulusLength: 2048 });
const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 });

describe('alipaySigningString', () => {
  it('should sort the keys by ASCII and join raw key=value pairs with &', () => {
    const params = { timestamp: '2024-01-02 03:04:05', app_id: '2021', Zeta: 'z', biz_content: '{"a":"b&c=d"}' };

    expect(alipaySigningString(params, [])).toBe(
      'Zeta=z&app_id=2021&biz_content={"a":"b&c=d"}&timestamp=2024-01-02 03:04:05',
    );
  });

  it('should leave out the excluded keys and the empty values', () => {
    const params = { sign: 'abc', sign_type: 'RSA2', out_trade_no: '42', subject: '', total_amount: '1.00' };

    expect(alipaySigningString(params, ['sign', 'sign_type'])).toBe('out_trade_no=42&total_amount=1.00');
    expect(alipaySigningString(params, ['sign'])).toBe('out_trade_no=42&sign_type=RSA2&total_amount=1.00');
  });
});

describe('signRsa2 and verifyRsa2', () => {
  const content = 'app_id=2021&subject=充值 10 元&total_amount=10.00';

  it('should produce a SHA256withRSA signature any RSA2 verifier accepts', () => {
    const signature = signRsa2(content, alipay.privateKey);

    expect(createVerify('RSA-SHA256').update(content, 'utf8').verify(alipay.publicKey, signature, 'base64')).toBe(true);
    expect(verifyRsa2(content, signature, alipay.publicKey)).toBe(true);
  });

  it('should refuse a changed value, another key and a malformed signature', () => {
    const signature = signRsa2(content, alipay.privateKey);

    expect(verifyRsa2(content.replace('10.00', '100.00'), signature, alipay.publicKey)).toBe(false);
    expect(verifyRsa2(content, signRsa2(content, stranger.privateKey), alipay.publicKey)).toBe(false);
    expect(verifyRsa2(content, 'not base64!', alipay.publicKey)).toBe(false);
    expect(verifyRsa2(content, '', alipay.publicKey)).toBe(false);
  });
});

describe('rawMemberText', () => {
  it('should return the member text exactly as written, escapes and spacing kept', () => {
    const inner = '{"code":"10000", "qr_code":"https:\\/\\/qr.alipay.com\\/bax0"}';
    const body = `{ "alipay_trade_precreate_response" : ${inner} ,"sign":"c2lnbg=="}`;

    expect(rawMemberText(body, 'alipay_trade_precreate_response')).toBe(inner);
    expect(rawMemberText(body, 'sign')).toBe('"c2lnbg=="');
  });

  it('should find the member after nested objects, arrays and quoted braces', () => {
    const first = '{"a":{"b":[1,{"c":"}]\\"{"}]},"d":"\\\\"}';
    const body = `{"other":${first},"n":-1.5e3,"t":true,"x_response":{"msg":"say \\"}\\" ok"},"sign":"s"}`;

    expect(rawMemberText(body, 'other')).toBe(first);
    expect(rawMemberText(body, 'n')).toBe('-1.5e3');
    expect(rawMemberText(body, 'x_response')).toBe('{"msg":"say \\"}\\" ok"}');
    expect(JSON.parse(rawMemberText(body, 'x_response')!)).toEqual({ msg: 'say "}" ok' });
  });

  it('should look at the top level only', () => {
    const body = '{"outer":{"x_response":{"fake":true}},"sign":"s"}';

    expect(rawMemberText(body, 'x_response')).toBeNull();
  });

  it('should give null for a missing member or a body that is not an object', () => {
    expect(rawMemberText('{"a":1}', 'b')).toBeNull();
    expect(rawMemberText('[{"a":1}]', 'a')).toBeNull();
    expect(rawMemberText('<html>502</html>', 'a')).toBeNull();
    expect(rawMemberText('{"a":{"b":1}', 'a')).toBeNull();
    expect(rawMemberText('', 'a')).toBeNull();
  });
});
