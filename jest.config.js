const { readFileSync } = require('node:fs');
const { join } = require('node:path');

/**
 * SWC transpiles the TypeScript (tsc type-checks it in `npm run check`): the same options as `npm run
 * build` and the compiled entrypoints the e2e tests spawn (test/support/entrypoint-build.ts), legacy
 * decorators with their metadata as Nest's injector reads it; source maps inline, for Jest's traces.
 */
const swcOptions = { ...JSON.parse(readFileSync(join(__dirname, '.swcrc'), 'utf8')), sourceMaps: 'inline' };

/** @type {import('jest').Config} */
const common = {
  testEnvironment: 'node',
  rootDir: '.',
  moduleNameMapper: {
    '^src/(.*)$': '<rootDir>/src/$1',
    '^tools/(.*)$': '<rootDir>/tools/$1',
    '^test/(.*)$': '<rootDir>/test/$1',
  },
  transform: { '^.+\\.[tj]s$': ['@swc/jest', swcOptions] },
};

/** One fresh database per run for the projects that need one (one setup: Jest runs each path once). */
const withDatabase = {
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  setupFiles: ['<rootDir>/test/support/test-database.guard.ts'],
};

/**
 * The billing, rate-limit and payment suites again, on a three-master Redis Cluster the project's
 * setup starts for the run (cluster-global-setup.ts), plus the cluster's own specs. Only with
 * GATEWAY_TEST_CLUSTER=1 (`npm run test:cluster`): `npm test` runs every listed project, and this
 * one repeats suites it already ran.
 */
const cluster = {
  ...common,
  displayName: 'cluster',
  globalSetup: '<rootDir>/test/support/cluster-global-setup.ts',
  globalTeardown: '<rootDir>/test/support/cluster-global-teardown.ts',
  setupFiles: withDatabase.setupFiles,
  testMatch: [
    '<rootDir>/test/cluster/**/*.cluster-spec.ts',
    ...[
      'integration/account-registry.integration-spec.ts',
      'integration/usage-queue.integration-spec.ts',
      'integration/settlement.integration-spec.ts',
      'e2e/billing-smoke.e2e-spec.ts',
      'e2e/billing-charges.e2e-spec.ts',
      'e2e/billing-concurrency.e2e-spec.ts',
      'e2e/billing-faults.e2e-spec.ts',
      'e2e/console-key-controls.e2e-spec.ts',
      'e2e/rate-limits-window.e2e-spec.ts',
      // Two API processes: shared windows, and a model and an override heard over pub/sub.
      'e2e/rate-limits-cluster.e2e-spec.ts',
      'e2e/rate-limits-tokens.e2e-spec.ts',
      'e2e/payments-smoke.e2e-spec.ts',
      'e2e/payments-redemptions.e2e-spec.ts',
    ].map((suite) => `<rootDir>/test/${suite}`),
  ],
};

/**
 * The suites that hold Postgres state across statements (payments, settlement, the chain watchers'
 * lease, statement timeouts) again, with every connection of the run through a PgBouncer in
 * transaction mode that the project's setup starts (pgbouncer-global-setup.ts), plus its own spec.
 * Only with GATEWAY_TEST_PGBOUNCER=1 (`npm run test:pgbouncer`), like the cluster project. The chain
 * watchers' lease is proved by its own spec here; the Hardhat chain suite stays in the direct run.
 */
const pgbouncer = {
  ...common,
  displayName: 'pgbouncer',
  globalSetup: '<rootDir>/test/support/pgbouncer-global-setup.ts',
  globalTeardown: '<rootDir>/test/support/pgbouncer-global-teardown.ts',
  setupFiles: withDatabase.setupFiles,
  testMatch: [
    '<rootDir>/test/pgbouncer/**/*.pgbouncer-spec.ts',
    ...[
      'integration/statement-timeout.integration-spec.ts',
      'integration/chain-lease.integration-spec.ts',
      'integration/settlement.integration-spec.ts',
      'integration/usage-queue.integration-spec.ts',
      'e2e/billing-smoke.e2e-spec.ts',
      'e2e/payments-smoke.e2e-spec.ts',
      'e2e/payments-redemptions.e2e-spec.ts',
    ].map((suite) => `<rootDir>/test/${suite}`),
  ],
};

/**
 * Minutes of their own each, on their own fixtures: the production image assembled and built, the demo
 * built and started, books and partitions at scale, a local Hardhat chain. `npm test` runs them (the
 * `slow` project); `npm run test:integration` / `test:e2e` leave them out.
 */
const slowSuites = [
  'e2e/production-image.e2e-spec.ts',
  'e2e/demo-front-door.e2e-spec.ts',
  'integration/books-at-scale.integration-spec.ts',
  'integration/partition-books.integration-spec.ts',
  'integration/erc20-watcher.integration-spec.ts',
].map((suite) => `<rootDir>/test/${suite}`);

module.exports = {
  testTimeout: 30000,
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: [
        '<rootDir>/src/**/*.spec.ts',
        '<rootDir>/tools/**/*.spec.ts',
        '<rootDir>/test/support/**/*.spec.ts',
        // deploy/'s manifests, alert rules and dashboard, checked against the code (no database needed).
        '<rootDir>/test/deploy/**/*.spec.ts',
      ],
    },
    // Repositories and services on the run's fresh Postgres (and Redis), without the HTTP app.
    {
      ...common,
      ...withDatabase,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/**/*.integration-spec.ts'],
      testPathIgnorePatterns: slowSuites,
    },
    {
      ...common,
      ...withDatabase,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      testPathIgnorePatterns: slowSuites,
    },
    { ...common, ...withDatabase, displayName: 'slow', testMatch: slowSuites },
    ...(process.env.GATEWAY_TEST_CLUSTER === '1' ? [cluster] : []),
    ...(process.env.GATEWAY_TEST_PGBOUNCER === '1' ? [pgbouncer] : []),
  ],
};
