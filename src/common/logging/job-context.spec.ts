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

  it("should keep one line's own fields off the next line, in a job and outside one", async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ mixin: jobLogFields }, { write: (line: string) => lines.push(JSON.parse(line)) });

    logger.error({ err: 'boom' }, 'outside');
    logger.info('after');
    await inJob({ name: 'confirm', id: '9' }, async () => {
      logger.warn({ orderId: 'o1' }, 'first');
      await Promise.resolve();
      logger.info('second');
    });

    expect(lines.map(({ msg, err, orderId, job }) => ({ msg, err, orderId, job }))).toEqual([
      { msg: 'outside', err: 'boom', orderId: undefined, job: undefined },
      { msg: 'after', err: undefined, orderId: undefined, job: undefined },
      { msg: 'first', err: undefined, orderId: 'o1', job: 'confirm' },
      { msg: 'second', err: undefined, orderId: undefined, job: 'confirm' },
    ]);
  });
});
