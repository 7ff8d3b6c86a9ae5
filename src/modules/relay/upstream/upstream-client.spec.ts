import { handedOnce } from 'src/modules/relay/upstream/upstream-client';

describe(handedOnce.name, () => {
  it('should hand out every chunk, in order, on the first iteration', () => {
    const chunks = [Buffer.from('{"model":'), Buffer.from('"m"}')];

    expect(Buffer.concat([...handedOnce(chunks)]).toString()).toBe('{"model":"m"}');
  });

  it('should hand out nothing on a second iteration, nor keep the chunks it handed out', () => {
    const chunks = [Buffer.from('a'), Buffer.from('b')];
    const body = handedOnce(chunks);

    expect([...body]).toHaveLength(2);

    expect([...body]).toEqual([]);
    expect(chunks).toEqual([undefined, undefined]);
  });
});
