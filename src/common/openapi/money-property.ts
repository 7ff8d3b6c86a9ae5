import { ApiProperty } from '@nestjs/swagger';

/** An exact USD amount on the wire (CONTRACT "Money"): up to 9 whole digits and 9 decimals, maybe negative. */
export const MONEY_PATTERN = '^-?\\d{1,9}(\\.\\d{1,9})?$';

/** A money field in the OpenAPI document: a string with the money pattern, never a number. */
export const ApiMoney = (options: { description?: string; example: string; nullable?: boolean; required?: boolean }) =>
  ApiProperty({ type: String, pattern: MONEY_PATTERN, ...options });
