import { throttleAddress } from 'src/common/http/client-address';

describe('throttleAddress', () => {
  it('should count an IPv4 address, mapped or not, as itself', () => {
    expect(throttleAddress('203.0.113.7')).toBe('203.0.113.7');
    expect(throttleAddress('::ffff:203.0.113.7')).toBe('203.0.113.7');
  });

  it('should count every address of one IPv6 /64 together, however it is written', () => {
    const bucket = '2001:db8:abcd:12::/64';
    expect(throttleAddress('2001:db8:abcd:12::1')).toBe(bucket);
    expect(throttleAddress('2001:0db8:ABCD:0012:ffff:1:2:3')).toBe(bucket);
    expect(throttleAddress('2001:db8:abcd:12:ffff:1:2:3%eth0')).toBe(bucket);
    expect(throttleAddress('2001:db8:abcd:13::1')).not.toBe(bucket);
    expect(throttleAddress('::1')).toBe('0:0:0:0::/64');
  });
});
