import { ValueTransformer } from 'typeorm';

/** pg returns int8 as a string; money and counters live in bigint, never in a float. */
export const bigintTransformer: ValueTransformer = {
  to: (value: bigint | null | undefined) => (value === null || value === undefined ? value : value.toString()),
  from: (value: string | null) => (value === null ? null : BigInt(value)),
};
