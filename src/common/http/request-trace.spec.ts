import pino from 'pino';
import { clientRequestIdOf, providerRequestIdOf, RequestTrace } from 'src/common/http/request-trace';

describe(clientRequestIdOf.name, () => {
  it.each(['550e8400-e29b-41d4-a716-446655440000', '01JD3W8KQ3Z0', 'app:7/run.1+x=y@z', 'a'.repeat(128)])(
    'should keep %s',
    (sent) => {
      expect(clientRequestIdOf({ 'x-request-id': sent })).toBe(sent);
    },
  );

  it.each([
    ['empty', ''],
    ['too long', 'a'.repeat(129)],
    ['a space', 'a b'],
    ['a quote', 'a"b'],
    ['non-ASCII', 'é'],
  ])('should ignore one that is %s', (_, sent) => {
    expect(clientRequestIdOf({ 'x-request-id': sent })).toBeNull();
  });

  it('should ignore a missing header', () => {
    expect(clientRequestIdOf({})).toBeNull();
  });
});

describe(providerRequestIdOf.name, () => {
  it("should read OpenAI's x-request-id, then Anthropic's request-id", () => {
    expect(providerRequestIdOf({ 'x-request-id': 'req_o', 'request-id': 'req_a' })).toBe('req_o');
    expect(providerRequestIdOf({ 'request-id': 'req_011CV' })).toBe('req_011CV');
  });

  it('should keep nothing unprintable or unbounded', () => {
    expect(providerRequestIdOf({ 'x-request-id': 'a b' })).toBeNull();
    expect(providerRequestIdOf({ 'x-request-id': 'x'.repeat(129) })).toBeNull();
    expect(providerRequestIdOf({})).toBeNull();
  });
});

describe(RequestTrace.name, () => {
  it('should stamp both ids on every line, and make its logger only when a line is logged', () => {
    const lines: Record<string, unknown>[] = [];
    const root = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const child = jest.spyOn(root, 'child');
    const trace = new RequestTrace('req_1', 'client-1', root);

    expect(child).not.toHaveBeenCalled();
    trace.log.info('one');
    trace.log.warn('two');

    expect(child).toHaveBeenCalledTimes(1);
    expect(lines).toEqual([
      expect.objectContaining({ reqId: 'req_1', clientReqId: 'client-1', msg: 'one' }),
      expect.objectContaining({ reqId: 'req_1', clientReqId: 'client-1', msg: 'two' }),
    ]);
  });
});
