import { InFlightRequests } from 'src/modules/health/in-flight-requests';

describe(InFlightRequests.name, () => {
  it('should be idle at once when nothing is in flight', async () => {
    const sut = new InFlightRequests();

    await expect(sut.idle(10)).resolves.toBe(true);
  });

  it('should become idle when the last piece of work leaves, counting a double leave once', async () => {
    const sut = new InFlightRequests();
    const first = sut.enter();
    const second = sut.enter();
    const idle = sut.idle(5_000);

    first();
    first();
    expect(sut.count).toBe(1);
    second();

    await expect(idle).resolves.toBe(true);
    expect(sut.count).toBe(0);
  });

  it('should give up after the timeout while work is still in flight', async () => {
    const sut = new InFlightRequests();
    sut.enter();

    await expect(sut.idle(20)).resolves.toBe(false);
    expect(sut.count).toBe(1);
  });
});
