import pino from 'pino';
import { inJob, jobLogFields } from 'src/common/logging/job-context';

describe(inJob.name, () => {
  it("should stamp the job's name and id on every line logged while it runs, awaits included, and none after", async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ mixin: jobLogFields }, { write: (line: string) => lines.push(JSON.parse(line)) });

    await Promise.all([
      inJob({ name: 'settle-recorded', id: '41' }, async () => {
        logger.info('claimed');
        await new Promise((resolve) => setImmediate(resolve));
        logger.warn('settled');
      }),
      inJob({ name: 'confirm', id: 'order-7' }, async () => {
        await Promise.resolve();
        logger.info('credited');
      }),
    ]);
    logger.info('idle');

    expect(lines.map(({ msg, job, jobId }) => ({ msg, job, jobId }))).toEqual([
      { msg: 'claimed', job: 'settle-recorded', jobId: '41' },
      { msg: 'credited', job: 'confirm', jobId: 'order-7' },
      { msg: 'settled', job: 'settle-recorded', jobId: '41' },
      { msg: 'idle', job: undefined, jobId: undefined },
    ]);
  });
});
