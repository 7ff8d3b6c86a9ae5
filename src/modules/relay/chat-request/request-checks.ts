import { ApiError } from 'src/common/errors/api-error';

/*
 * Checks that the OpenAI-style bodies share field for field (chat completions and the legacy text
 * completions), each a 400 naming the field it refuses.
 */

export type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
export const isAbsent = (value: unknown) => value === undefined || value === null;

/** `stream_options`, only beside `stream: true`; whether it asks for the usage chunk. */
export function checkStreamOptions(body: Json, stream: boolean): boolean {
  const options = body.stream_options;
  if (isAbsent(options)) {
    return false;
  }
  if (!stream) {
    throw ApiError.invalid("stream_options is only allowed when 'stream' is true.", 'stream_options');
  }
  if (!isObject(options)) {
    throw ApiError.invalid('stream_options must be an object.', 'stream_options');
  }
  if (!isAbsent(options.include_usage) && typeof options.include_usage !== 'boolean') {
    throw ApiError.invalid('stream_options.include_usage must be a boolean.', 'stream_options.include_usage');
  }
  return options.include_usage === true;
}

/** `stop`: a string, or at most `maxItems` strings. */
export function checkStop(stop: unknown, maxItems: number): void {
  if (isAbsent(stop) || typeof stop === 'string') {
    return;
  }
  if (!Array.isArray(stop) || stop.length > maxItems || !stop.every((sequence) => typeof sequence === 'string')) {
    throw ApiError.invalid(`stop must be a string or an array of at most ${maxItems} strings.`, 'stop');
  }
}
