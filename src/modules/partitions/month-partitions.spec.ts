import {
  expiredUsagePartitions,
  monthOf,
  monthPartition,
  monthsCovered,
  partitionsAhead,
} from 'src/modules/partitions/month-partitions';

describe('month partitions', () => {
  it('should name and bound a month in UTC, whatever the time in it', () => {
    expect(monthPartition('usage_records', new Date('2026-12-31T23:59:59.999Z'))).toEqual({
      table: 'usage_records',
      name: 'usage_records_p2026_12',
      from: new Date('2026-12-01T00:00:00.000Z'),
      to: new Date('2027-01-01T00:00:00.000Z'),
    });
  });

  it('should create this month and the two after it, across a year end', () => {
    expect(partitionsAhead('ledger_entries', new Date('2026-11-24T18:00:00Z')).map((p) => p.name)).toEqual([
      'ledger_entries_p2026_11',
      'ledger_entries_p2026_12',
      'ledger_entries_p2027_01',
    ]);
  });

  it('should read a month back from its name, and nothing from other names', () => {
    expect(monthOf('usage_records', 'usage_records_p2026_02')).toEqual(new Date('2026-02-01T00:00:00Z'));
    expect(monthOf('usage_records', 'ledger_entries_p2026_02')).toBeNull();
    expect(monthOf('usage_records', 'usage_records_p2026_13')).toBeNull();
    expect(monthOf('usage_records', 'usage_records_default')).toBeNull();
  });

  it('should keep the current month and the retention months before it', () => {
    const names = [
      'usage_records_p2026_08',
      'usage_records_p2026_09',
      'usage_records_p2026_10',
      'usage_records_p2026_11',
    ];
    const now = new Date('2026-11-01T00:00:00Z');
    expect(expiredUsagePartitions(names, now, 1)).toEqual(['usage_records_p2026_08', 'usage_records_p2026_09']);
    expect(expiredUsagePartitions(names, now, 3)).toEqual([]);
    expect(expiredUsagePartitions([...names, 'usage_records_old'], now, 2)).toEqual(['usage_records_p2026_08']);
  });

  it('should count the months ahead that have a partition, stopping at the first gap', () => {
    const now = new Date('2026-12-15T00:00:00Z');
    const names = ['usage_records_p2026_12', 'usage_records_p2027_01', 'usage_records_p2027_03'];
    expect(monthsCovered('usage_records', names, now)).toBe(1);
    expect(monthsCovered('usage_records', [...names, 'usage_records_p2027_02'], now)).toBe(3);
    expect(monthsCovered('ledger_entries', names, now)).toBe(-1);
  });
});
