import { prefersCsv, toCsv } from 'src/common/http/csv';

describe('toCsv', () => {
  it('should write a header row and CRLF-terminated records', () => {
    expect(
      toCsv(
        ['a', 'b'],
        [
          ['1', 2],
          [null, undefined],
        ],
      ),
    ).toBe('a,b\r\n1,2\r\n,\r\n');
  });

  it('should quote only fields with a comma, a quote, CR or LF, doubling quotes', () => {
    expect(toCsv(['x'], [['plain'], ['a,b'], ['say "hi"'], ['two\nlines'], ['cr\r']])).toBe(
      'x\r\nplain\r\n"a,b"\r\n"say ""hi"""\r\n"two\nlines"\r\n"cr\r"\r\n',
    );
  });

  it('should keep money strings exactly as given', () => {
    expect(toCsv(['cost'], [['0.000001875'], ['12345.000000001']])).toBe('cost\r\n0.000001875\r\n12345.000000001\r\n');
  });
});

describe('prefersCsv', () => {
  it.each([
    [undefined, false],
    ['', false],
    ['application/json', false],
    ['*/*', false],
    ['text/csv', true],
    ['text/csv; charset=utf-8', true],
    ['TEXT/CSV', true],
    ['application/json, text/csv', true],
    ['application/json, text/csv;q=0.5', false],
    ['text/csv;q=0.9, application/json;q=0.8', true],
    ['text/csv;q=0', false],
  ])('should read %p as %p', (accept, expected) => {
    expect(prefersCsv(accept)).toBe(expected);
  });
});
