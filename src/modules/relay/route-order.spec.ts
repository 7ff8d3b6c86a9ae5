import { orderRoutes } from 'src/modules/relay/route-order';

const route = (name: string, priority: number, weight: number) => ({ name, channel: { priority, weight } });

describe(orderRoutes.name, () => {
  it('should try higher priorities first', () => {
    const ordered = orderRoutes([route('low', 0, 100), route('high', 10, 1), route('mid', 5, 1)]);
    expect(ordered.map((r) => r.name)).toEqual(['high', 'mid', 'low']);
  });

  it('should split traffic within a priority by weight', () => {
    const routes = [route('a', 0, 3), route('b', 0, 1)];
    let seed = 1;
    const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const leads = { a: 0, b: 0 };
    for (let i = 0; i < 4000; i++) {
      leads[orderRoutes(routes, random)[0].name as 'a' | 'b']++;
    }
    expect(leads.a / 4000).toBeGreaterThan(0.7);
    expect(leads.a / 4000).toBeLessThan(0.8);
  });

  it('should put weight 0 last within its priority', () => {
    for (let i = 0; i < 50; i++) {
      expect(orderRoutes([route('zero', 0, 0), route('one', 0, 1)])[0].name).toBe('one');
    }
  });
});
