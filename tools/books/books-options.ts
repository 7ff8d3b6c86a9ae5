export interface BooksOptions {
  rows: number;
  accounts: number;
  months: number;
  samples: number;
  /** Create a database of its own on DATABASE_URL's server and drop it afterwards. */
  fresh: boolean;
}

export const BOOKS_USAGE = `usage: node dist-tools/tools/bin/seed-books.js [--rows N] [--accounts N] [--months N] [--samples N] [--fresh]
  --rows      usage records to load (default 10000000), each with its ledger entry
  --accounts  accounts they are spread over (default 1000)
  --months    months they are spread over, ending with this one (default 6)
  --samples   runs of each timed query (default 200)
  --fresh     load into a new database on DATABASE_URL's server and drop it when done`;

const LIMITS = {
  rows: [1_000, 1_000_000_000],
  accounts: [1, 1_000_000],
  months: [1, 120],
  samples: [1, 100_000],
} as const;

/** Parses the seed's arguments; throws a message naming the bad one. */
export function parseBooksArgs(args: string[]): BooksOptions {
  const options: BooksOptions = { rows: 10_000_000, accounts: 1_000, months: 6, samples: 200, fresh: false };
  for (let index = 0; index < args.length; index++) {
    const name = args[index].replace(/^--/, '');
    if (name === 'fresh') {
      options.fresh = true;
      continue;
    }
    if (!(name in LIMITS)) {
      throw new Error(`unknown argument ${args[index]}\n${BOOKS_USAGE}`);
    }
    const key = name as keyof typeof LIMITS;
    const value = Number(args[++index]);
    const [min, max] = LIMITS[key];
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new Error(`--${key} must be an integer from ${min} to ${max}`);
    }
    options[key] = value;
  }
  if (options.rows < options.accounts) {
    throw new Error('--rows must be at least --accounts');
  }
  return options;
}
