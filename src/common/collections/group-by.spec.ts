import { groupBy } from 'src/common/collections/group-by';

describe(groupBy.name, () => {
  it('should keep the groups in the order of their first item, and each group in the items order', () => {
    const items = [
      { account: 'b', n: 1 },
      { account: 'a', n: 2 },
      { account: 'b', n: 3 },
    ];

    const groups = groupBy(items, (item) => item.account);

    expect([...groups]).toEqual([
      ['b', [items[0], items[2]]],
      ['a', [items[1]]],
    ]);
  });

  it('should give no group for no items', () => {
    expect(groupBy([], String).size).toBe(0);
  });
});
