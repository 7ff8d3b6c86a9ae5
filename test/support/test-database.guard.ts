import { testDatabaseName } from 'test/support/test-database';
import { useWorkerResources } from 'test/support/test-worker-resources';

// Runs before each test file that reaches Postgres (jest.config.js setupFiles): those files connect
// to DATABASE_URL and REDIS_URL, as the app under test does, their worker's own.
useWorkerResources();
testDatabaseName(process.env.DATABASE_URL);
