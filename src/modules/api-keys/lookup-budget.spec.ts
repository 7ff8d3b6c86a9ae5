import { LookupBudget } from 'src/modules/api-keys/lookup-budget';

describe(LookupBudget.name, () => {
  it('should allow the budget per address per minute, then say how long until the window resets', () => {
    const sut = new LookupBudget(2);
    expect(sut.take('10.0.0.1', 1_000)).toBeNull();
    expect(sut.take('10.0.0.1', 2_000)).toBeNull();
    expect(sut.take('10.0.0.1', 11_000)).toBe(50_000);
    expect(sut.take('10.0.0.2', 11_000)).toBeNull();

    expect(sut.take('10.0.0.1', 61_000)).toBeNull();
  });

  it('should give back a lookup of a key that existed, without going below zero', () => {
    const sut = new LookupBudget(1);
    expect(sut.take('10.0.0.1', 0)).toBeNull();
    sut.refund('10.0.0.1');
    sut.refund('10.0.0.1');
    expect(sut.take('10.0.0.1', 1)).toBeNull();
    expect(sut.take('10.0.0.1', 2)).not.toBeNull();
  });
});
