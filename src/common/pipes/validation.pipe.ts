import { ValidationError, ValidationPipe } from '@nestjs/common';
import { ApiError } from 'src/common/errors/api-error';

function childPath(prefix: string, property: string): string {
  if (/^\d+$/.test(property)) {
    return `${prefix}[${property}]`;
  }
  return prefix ? `${prefix}.${property}` : property;
}

/** The first failing property as a path like `routes[0].channelId`, with its message. */
function firstFailure(errors: ValidationError[], prefix = ''): { param: string; message: string } | null {
  for (const error of errors) {
    const path = childPath(prefix, error.property);
    const message = Object.values(error.constraints ?? {})[0];
    if (message) {
      return { param: path, message };
    }
    const nested = firstFailure(error.children ?? [], path);
    if (nested) {
      return nested;
    }
  }
  return null;
}

export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    transform: true,
    whitelist: true,
    forbidNonWhitelisted: true,
    exceptionFactory: (errors) => {
      const failure = firstFailure(errors);
      return ApiError.invalid(failure?.message ?? 'Invalid request.', failure?.param ?? null);
    },
  });
}
