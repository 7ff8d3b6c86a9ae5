import { testDatabaseName } from 'test/support/test-database';

// Runs before each test file that reaches Postgres (jest.config.js setupFiles): those files connect
// to DATABASE_URL, as the app under test does.
testDatabaseName(process.env.DATABASE_URL);
