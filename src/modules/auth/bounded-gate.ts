import { ApiError, ErrorKind } from 'src/common/errors/api-error';

/**
 * Runs at most `concurrency` tasks at once; up to `queueLimit` more wait in order, and past that a
 * task is refused at once with 503. Nothing waits unbounded, so a flood costs its senders a fast
 * refusal instead of costing every other request of the process its latency.
 */
export class BoundedGate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly concurrency: number,
    private readonly queueLimit: number,
    private readonly refusal: () => ApiError = overloaded,
  ) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.concurrency) {
      if (this.waiting.length >= this.queueLimit) {
        throw this.refusal();
      }
      // The releasing task hands its place over directly, so `active` never drops and is retaken.
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.active++;
    }
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) {
        next();
      } else {
        this.active--;
      }
    }
  }
}

const overloaded = () =>
  new ApiError(ErrorKind.Overloaded, 'Too many sign-ins are in progress. Retry in a moment.', null, undefined, {
    'retry-after': '1',
  });
