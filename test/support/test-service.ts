import { Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Logger } from 'pino';
import { LOGGER } from 'src/common/logging/logger';
import { APP_CONFIG, AppConfig, loadConfig } from 'src/config/app-config';

export interface TestService<T> {
  /** The service under test, built by Nest's injector as in the app. */
  sut: T;
  /** The jest mock that stands in for one of its dependencies (every method a `jest.fn()`). */
  mock<D>(dependency: Type<D>): jest.Mocked<D>;
  logger: jest.Mocked<Logger>;
  config: AppConfig;
}

/**
 * Builds `Service` with every injected class replaced by a mock of its whole surface, the logger by
 * a mock, and the configuration of a test run (`NODE_ENV=test` defaults, overridden by `config`).
 * Other injection tokens (REDIS, say) take the values in `tokens`; a token with none fails loudly.
 */
export async function newTestService<T>(
  Service: Type<T>,
  config: Partial<AppConfig> = {},
  tokens: [token: symbol | string, value: unknown][] = [],
): Promise<TestService<T>> {
  const logger = newTestLogger();
  const appConfig = { ...loadConfig({ NODE_ENV: 'test' }), ...config };
  const moduleRef = await Test.createTestingModule({
    providers: [
      Service,
      { provide: LOGGER, useValue: logger },
      { provide: APP_CONFIG, useValue: appConfig },
      ...tokens.map(([provide, useValue]) => ({ provide, useValue })),
    ],
  })
    .useMocker((token) => {
      if (typeof token !== 'function') {
        throw new Error(`newTestService(${Service.name}): no test double for the token ${String(token)}`);
      }
      return mockOf(token as Type);
    })
    .compile();
  return {
    sut: moduleRef.get(Service),
    mock: <D>(dependency: Type<D>) => moduleRef.get<Type<D>, jest.Mocked<D>>(dependency),
    logger,
    config: appConfig,
  };
}

/** Every method of a class, up its prototype chain, as a `jest.fn()` (resolving to undefined until told otherwise). */
export function mockOf<T>(type: Type<T>): jest.Mocked<T> {
  const mock: Record<string, jest.Mock> = {};
  for (let proto: object | null = type.prototype as object; proto && proto !== Object.prototype;) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const { value } = Object.getOwnPropertyDescriptor(proto, name) ?? {};
      if (name !== 'constructor' && typeof value === 'function' && !(name in mock)) {
        mock[name] = jest.fn();
      }
    }
    proto = Object.getPrototypeOf(proto) as object | null;
  }
  return mock as unknown as jest.Mocked<T>;
}

/** A pino logger whose level methods are mocks; `child` returns the same logger. */
export function newTestLogger(): jest.Mocked<Logger> {
  const logger = {
    fatal: jest.fn(),
    error: jest.fn(),
    warn: jest.fn(),
    info: jest.fn(),
    debug: jest.fn(),
    trace: jest.fn(),
  };
  return Object.assign(logger, { child: jest.fn(() => logger) }) as unknown as jest.Mocked<Logger>;
}
