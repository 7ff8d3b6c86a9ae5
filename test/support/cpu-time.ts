/**
 * The CPU time `work` took, in milliseconds: what it costs, without the pauses of a machine whose
 * other test files are running. (On a shared VM a descheduled core can still be charged: bounds keep room.)
 */
export function cpuMillisecondsOf(work: () => unknown): number {
  const before = process.cpuUsage();
  work();
  const { user, system } = process.cpuUsage(before);
  return (user + system) / 1000;
}
