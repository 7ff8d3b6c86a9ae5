/** @type {import('jest').Config} */
const common = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  rootDir: '.',
  moduleNameMapper: {
    '^src/(.*)$': '<rootDir>/src/$1',
    '^tools/(.*)$': '<rootDir>/tools/$1',
    '^test/(.*)$': '<rootDir>/test/$1',
  },
  // Transpile-only (tsc type-checks in `npm run check`).
  transform: { '^.+\\.[tj]s$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.spec.json' }] },
};

/** One fresh database per run for the projects that need one (one setup: Jest runs each path once). */
const withDatabase = {
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  setupFiles: ['<rootDir>/test/support/test-database.guard.ts'],
};

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
    { ...common, ...withDatabase, displayName: 'integration', testMatch: ['<rootDir>/test/**/*.integration-spec.ts'] },
    { ...common, ...withDatabase, displayName: 'e2e', testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'] },
  ],
};
