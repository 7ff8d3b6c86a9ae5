import { ChainUnavailable, base58Of, parseEventsPage } from 'src/modules/payments/chain/trongrid-client';

const USDT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
/** USDT's contract as an event argument: `0x` and its 20 bytes after TRON's 0x41. */
const USDT_HEX = '0xa614f803b6fd780986a42c78ec9c7f77e6ded13c';

/** An event as TronGrid's `GET /v1/transactions/{txid}/events` lists it. */
const event = (overrides: Record<string, unknown> = {}) => ({
  block_number: 60_000_000,
  block_timestamp: 1_700_000_000_000,
  caller_contract_address: USDT,
  contract_address: USDT,
  event_index: 3,
  event_name: 'Transfer',
  result: { '0': USDT_HEX, '1': USDT_HEX, '2': '2500000', from: USDT_HEX, to: USDT_HEX, value: '2500000' },
  result_type: { from: 'address', to: 'address', value: 'uint256' },
  event: 'Transfer(address indexed from, address indexed to, uint256 value)',
  transaction_id: 'ab'.repeat(32),
  ...overrides,
});

const page = (data: unknown[], fingerprint?: string) =>
  JSON.stringify({ data, success: true, meta: { at: 1, page_size: data.length, ...(fingerprint && { fingerprint }) } });

describe('TronGrid events of a transaction', () => {
  it('should read each event with its own index, its hex arguments as base58', () => {
    expect(parseEventsPage(page([event()], 'next'))).toEqual({
      events: [
        {
          txid: 'ab'.repeat(32),
          eventIndex: 3,
          name: 'Transfer',
          contract: USDT,
          to: USDT,
          value: 2_500_000n,
          blockNumber: 60_000_000n,
        },
      ],
      fingerprint: 'next',
    });
  });

  it('should take an address in base58, 0x hex or 41 hex, and nothing else', () => {
    expect([base58Of(USDT), base58Of(USDT_HEX), base58Of(`41${USDT_HEX.slice(2)}`)]).toEqual([USDT, USDT, USDT]);
    expect(base58Of('0x1234')).toBeNull();
    expect(base58Of('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u')).toBeNull();
  });

  it('should refuse a page whose event has no index, whole', () => {
    expect(() => parseEventsPage(page([event(), event({ event_index: undefined })]))).toThrow(ChainUnavailable);
    expect(() => parseEventsPage('{"success":false}')).toThrow(ChainUnavailable);
  });
});
