import { parseBooksArgs } from 'tools/books/books-options';

describe(parseBooksArgs.name, () => {
  it('should default to 10 million rows over 1,000 accounts', () => {
    expect(parseBooksArgs([])).toEqual({ rows: 10_000_000, accounts: 1_000, months: 6, samples: 200, fresh: false });
  });

  it('should read each option', () => {
    expect(
      parseBooksArgs(['--rows', '50000', '--accounts', '50', '--months', '3', '--samples', '20', '--fresh']),
    ).toEqual({ rows: 50_000, accounts: 50, months: 3, samples: 20, fresh: true });
  });

  it('should refuse unknown, malformed or inconsistent arguments', () => {
    expect(() => parseBooksArgs(['--row', '5'])).toThrow('unknown argument --row');
    expect(() => parseBooksArgs(['--months', '0'])).toThrow('--months must be an integer from 1 to 120');
    expect(() => parseBooksArgs(['--rows', '2000', '--accounts', '3000'])).toThrow(
      '--rows must be at least --accounts',
    );
  });
});
