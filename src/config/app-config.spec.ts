import { ConfigError, HOLD_SWEEP_AGE_MS, loadConfig } from 'src/config/app-config';
import { HOLD_TIMEOUT_MS } from 'src/modules/billing/hold-sweeper.service';

describe(loadConfig.name, () => {
  it('should default MAX_REQUEST_MS to 10 minutes, below the hold sweeper age', () => {
    expect(loadConfig({ NODE_ENV: 'test' }).relay.maxRequestMs).toBe(600_000);
    expect(HOLD_SWEEP_AGE_MS).toBe(HOLD_TIMEOUT_MS);
  });

  it('should refuse a MAX_REQUEST_MS at or above the hold sweeper age', () => {
    expect(() => loadConfig({ NODE_ENV: 'test', MAX_REQUEST_MS: String(HOLD_TIMEOUT_MS) })).toThrow(
      new ConfigError(
        `Invalid environment variable MAX_REQUEST_MS: must be below the hold sweeper's age (${HOLD_TIMEOUT_MS} ms)`,
      ),
    );
    expect(loadConfig({ NODE_ENV: 'test', MAX_REQUEST_MS: String(HOLD_TIMEOUT_MS - 1) }).relay.maxRequestMs).toBe(
      HOLD_TIMEOUT_MS - 1,
    );
  });
});
