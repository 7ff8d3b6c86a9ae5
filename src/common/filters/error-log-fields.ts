import { QueryFailedError } from 'typeorm';

/** What the logs may say about an unexpected error: where it came from, never what it carried. */
export interface ErrorLogFields {
  type: string;
  /** Postgres SQLSTATE or Node's system error code. */
  code?: string;
  constraint?: string;
  table?: string;
  column?: string;
  /** The stack without its first line, which repeats the message. */
  frames?: string[];
}

const MAX_FRAMES = 10;

/**
 * Error messages are left out on purpose: Postgres puts values into them (`Key (email)=(…)`,
 * `invalid input syntax for type uuid: "…"`), JSON.parse quotes the text it failed on, and a
 * TypeORM QueryFailedError carries the whole query and its parameters.
 */
export function errorLogFields(exception: unknown): ErrorLogFields {
  if (!(exception instanceof Error)) {
    return { type: typeof exception };
  }
  const details = (exception instanceof QueryFailedError ? exception.driverError : exception) as Record<
    string,
    unknown
  >;
  return {
    type: exception.constructor.name,
    code: stringField(details.code),
    constraint: stringField(details.constraint),
    table: stringField(details.table),
    column: stringField(details.column),
    frames: exception.stack
      ?.split('\n')
      .filter((line) => line.startsWith('    at '))
      .slice(0, MAX_FRAMES)
      .map((line) => line.trim()),
  };
}

function stringField(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
