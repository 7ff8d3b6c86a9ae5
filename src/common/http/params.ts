import { ParseUUIDPipe } from '@nestjs/common';
import { ApiError } from 'src/common/errors/api-error';

/** A path parameter that must be a UUID; anything else is a 400 naming the parameter. */
export const uuidParam = (name: string) =>
  new ParseUUIDPipe({ exceptionFactory: () => ApiError.invalid(`'${name}' must be a UUID.`, name) });

const CHANNEL_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
// Model ids may hold a slash (`meta-llama/llama-3-70b`); it arrives URL-encoded as %2F.
const MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/;

const patternParam = (pattern: RegExp, name: string, allowed: string) => ({
  transform(value: string): string {
    if (!pattern.test(value)) {
      throw ApiError.invalid(`'${name}' must be 1 to 128 characters: letters, digits or ${allowed}.`, name);
    }
    return value;
  },
});

export const channelIdParam = () => patternParam(CHANNEL_ID, 'channelId', '. _ : -');
export const modelIdParam = () => patternParam(MODEL_ID, 'modelId', '. _ : / -');

/** A model id, or `*` meaning every model (rate-limit overrides). */
export const modelIdOrWildcardParam = () => {
  const modelId = modelIdParam();
  return { transform: (value: string): string => (value === '*' ? value : modelId.transform(value)) };
};

// An account group's id: a short lower-case name an operator picks, e.g. `wholesale`.
const GROUP_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;

export const groupIdParam = () => ({
  transform(value: string): string {
    if (!GROUP_ID.test(value)) {
      throw ApiError.invalid(
        "'groupId' must be 1 to 64 characters: lower-case letters, digits, _ or -, starting with a letter or digit.",
        'groupId',
      );
    }
    return value;
  },
});
