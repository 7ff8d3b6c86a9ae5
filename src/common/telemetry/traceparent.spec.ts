import { formatTraceparent, parseTraceparent } from 'src/common/telemetry/traceparent';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';

describe(parseTraceparent.name, () => {
  it("should read a version-00 header's trace id, parent id and flags", () => {
    expect(parseTraceparent(`00-${TRACE_ID}-${SPAN_ID}-01`)).toEqual({ traceId: TRACE_ID, spanId: SPAN_ID, flags: 1 });
    expect(parseTraceparent(`00-${TRACE_ID}-${SPAN_ID}-00`)).toEqual({ traceId: TRACE_ID, spanId: SPAN_ID, flags: 0 });
  });

  it('should read a later version, and ignore the fields it appends', () => {
    expect(parseTraceparent(`cc-${TRACE_ID}-${SPAN_ID}-01-what-comes-next`)).toEqual({
      traceId: TRACE_ID,
      spanId: SPAN_ID,
      flags: 1,
    });
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['repeated', [`00-${TRACE_ID}-${SPAN_ID}-01`, `00-${TRACE_ID}-${SPAN_ID}-01`]],
    ['version ff', `ff-${TRACE_ID}-${SPAN_ID}-01`],
    ['version 00 with a fifth field', `00-${TRACE_ID}-${SPAN_ID}-01-extra`],
    ['upper case', `00-${TRACE_ID.toUpperCase()}-${SPAN_ID}-01`],
    ['a short trace id', `00-${TRACE_ID.slice(1)}-${SPAN_ID}-01`],
    ['a long parent id', `00-${TRACE_ID}-${SPAN_ID}0-01`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${SPAN_ID}-01`],
    ['an all-zero parent id', `00-${TRACE_ID}-${'0'.repeat(16)}-01`],
    ['not hex', `00-${TRACE_ID.replace('4', 'g')}-${SPAN_ID}-01`],
    ['one-digit flags', `00-${TRACE_ID}-${SPAN_ID}-1`],
    ['oversized', `cc-${TRACE_ID}-${SPAN_ID}-01-${'x'.repeat(600)}`],
  ])('should ignore a header that is %s', (_, header) => {
    expect(parseTraceparent(header)).toBeNull();
  });
});

describe(formatTraceparent.name, () => {
  it('should write the version-00 header that parses back', () => {
    const header = formatTraceparent(TRACE_ID, SPAN_ID, 1);

    expect(header).toBe(`00-${TRACE_ID}-${SPAN_ID}-01`);
    expect(parseTraceparent(header)).toEqual({ traceId: TRACE_ID, spanId: SPAN_ID, flags: 1 });
  });
});
