import { newRequestId } from 'src/common/http/request-id';

describe('newRequestId', () => {
  it('gives req_ and 32 hex digits, a different id each time across many refills', () => {
    const ids = Array.from({ length: 5_000 }, () => newRequestId());

    ids.forEach((id) => expect(id).toMatch(/^req_[0-9a-f]{32}$/));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('uses every hex digit in every position over many ids: the bits are random, not a counter', () => {
    const ids = Array.from({ length: 2_000 }, () => newRequestId().slice('req_'.length));
    for (let position = 0; position < 32; position++) {
      expect(new Set(ids.map((id) => id[position])).size).toBe(16);
    }
  });
});
