import {
  allWorkerResources,
  useWorkerResources,
  WORKER_DATABASES_VARIABLE,
  WORKER_REDIS_VARIABLE,
} from 'test/support/test-worker-resources';

describe(useWorkerResources.name, () => {
  const run = {
    [WORKER_DATABASES_VARIABLE]:
      'postgres://h/gateway_test_1 postgres://h/gateway_test_1_w2 postgres://h/gateway_test_1_w3',
    [WORKER_REDIS_VARIABLE]: 'redis://h/4 redis://h/5 redis://h/6',
  };

  it("should point each worker's files at that worker's own database and Redis db", () => {
    const seen = ['1', '2', '3'].map((worker) => {
      const env: NodeJS.ProcessEnv = { ...run, JEST_WORKER_ID: worker };
      useWorkerResources(env);
      return [env.DATABASE_URL, env.REDIS_URL];
    });

    expect(seen).toEqual([
      ['postgres://h/gateway_test_1', 'redis://h/4'],
      ['postgres://h/gateway_test_1_w2', 'redis://h/5'],
      ['postgres://h/gateway_test_1_w3', 'redis://h/6'],
    ]);
  });

  it('should give a run in band (worker 1, or no worker id) the first pair, and leave the URLs alone without a list', () => {
    const inBand: NodeJS.ProcessEnv = { ...run };
    useWorkerResources(inBand);
    const unset: NodeJS.ProcessEnv = { DATABASE_URL: 'postgres://h/gateway_test_x', JEST_WORKER_ID: '2' };
    useWorkerResources(unset);

    expect([inBand.DATABASE_URL, inBand.REDIS_URL]).toEqual(['postgres://h/gateway_test_1', 'redis://h/4']);
    expect(unset).toEqual({ DATABASE_URL: 'postgres://h/gateway_test_x', JEST_WORKER_ID: '2' });
  });

  it('should list every database and Redis db of the run for the teardown', () => {
    expect(allWorkerResources(run)).toEqual({
      databases: run[WORKER_DATABASES_VARIABLE].split(' '),
      redis: run[WORKER_REDIS_VARIABLE].split(' '),
    });
  });
});
