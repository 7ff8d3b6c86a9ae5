import { ApiError, ErrorKind } from 'src/common/errors/api-error';
import { BoundedGate } from 'src/modules/auth/bounded-gate';

/** A task that finishes when told to, recording how many tasks ran at once. */
function controlledTasks() {
  let running = 0;
  let peak = 0;
  const finishers: (() => void)[] = [];
  const task = () => {
    running++;
    peak = Math.max(peak, running);
    return new Promise<void>((resolve) =>
      finishers.push(() => {
        running--;
        resolve();
      }),
    );
  };
  const finishNext = async () => {
    finishers.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { task, finishNext, peak: () => peak, started: () => finishers.length };
}

describe(BoundedGate.name, () => {
  it('should run no more than its concurrency at once and start the queued tasks in order', async () => {
    const sut = new BoundedGate(2, 10);
    const tasks = controlledTasks();
    const order: number[] = [];
    const runs = [0, 1, 2, 3, 4].map((index) => sut.run(() => tasks.task().then(() => order.push(index))));
    await new Promise((resolve) => setImmediate(resolve));
    expect(tasks.started()).toBe(2);

    for (let i = 0; i < 5; i++) {
      await tasks.finishNext();
    }
    await Promise.all(runs);
    expect(tasks.peak()).toBe(2);
    expect(order).toEqual([0, 1, 2, 3, 4]);
  });

  it('should refuse with 503 at once, without running the task, when the queue is full', async () => {
    const sut = new BoundedGate(1, 2);
    const tasks = controlledTasks();
    const admitted = [sut.run(tasks.task), sut.run(tasks.task), sut.run(tasks.task)];
    const refusedTask = jest.fn(tasks.task);

    const refused = await sut.run(refusedTask).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).kind).toBe(ErrorKind.Overloaded);
    expect((refused as ApiError).headers['retry-after']).toBe('1');
    expect(refusedTask).not.toHaveBeenCalled();

    for (let i = 0; i < 3; i++) {
      await tasks.finishNext();
    }
    await Promise.all(admitted);
  });

  it('should free its place when a task fails', async () => {
    const sut = new BoundedGate(1, 0);
    await expect(sut.run(() => Promise.reject(new Error('scrypt failed')))).rejects.toThrow('scrypt failed');
    await expect(sut.run(() => Promise.resolve('next'))).resolves.toBe('next');
  });
});
