interface Weighted {
  channel: { priority: number; weight: number };
}

/**
 * The order in which to try a model's routes: higher channel priority first; within one priority a
 * weighted random order (each route leads with probability weight / total weight). Weight 0 means
 * "only as a last resort within its priority".
 */
export function orderRoutes<T extends Weighted>(routes: readonly T[], random: () => number = Math.random): T[] {
  if (routes.length <= 1) {
    return [...routes];
  }
  // Efraimidis–Spirakis: sorting by u^(1/w) draws a weighted permutation in one pass.
  const keyed = routes.map((route) => {
    const weight = route.channel.weight;
    return { route, key: weight > 0 ? Math.pow(random(), 1 / weight) : -1 + random() };
  });
  keyed.sort((a, b) => b.route.channel.priority - a.route.channel.priority || b.key - a.key);
  return keyed.map((entry) => entry.route);
}
