import { readdirSync, readFileSync } from 'node:fs';

// USER_HZ: the unit of utime/stime in /proc/<pid>/stat; 100 on every mainstream Linux build.
export const CLOCK_TICKS_PER_SEC = 100;

/** Readers of Linux /proc; each answers 0 (or nothing) where /proc is missing, rather than failing the run. */

export function rssKb(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

/** utime + stime (all threads) and the command name, from /proc/<pid>/stat. */
export function processTicks(pid: number | string): { ticks: number; comm: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    // Fields 14 and 15 (utime, stime), counted from field 3 which follows the `(comm)` field.
    const fields = stat.slice(close + 2).split(' ');
    return { ticks: Number(fields[11]) + Number(fields[12]), comm: stat.slice(stat.indexOf('(') + 1, close) };
  } catch {
    return undefined;
  }
}

/** Every process on the machine, by PID. */
export function allProcessTicks(): Map<number, { ticks: number; comm: string }> {
  const all = new Map<number, { ticks: number; comm: string }>();
  let entries: string[] = [];
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return all;
  }
  for (const pid of entries) {
    const found = processTicks(pid);
    if (found) {
      all.set(Number(pid), found);
    }
  }
  return all;
}

/**
 * All CPUs' time from the first line of /proc/stat: `busy` is everything but idle and iowait;
 * `tasks` only what is charged to processes (user, nice, system), comparable with per-process sums.
 */
export function hostTicks(): { busy: number; tasks: number } {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1, 9).map(Number);
    const [user, nice, system, , , irq, softirq, steal] = fields;
    return { busy: user + nice + system + irq + softirq + steal, tasks: user + nice + system };
  } catch {
    return { busy: 0, tasks: 0 };
  }
}

/** TcpExt ListenOverflows from /proc/net/netstat: a header line of names, then a line of values. */
export function listenOverflows(): number {
  try {
    const lines = readFileSync('/proc/net/netstat', 'utf8').split('\n');
    const header = lines.findIndex((line) => line.startsWith('TcpExt:'));
    const index = lines[header].split(' ').indexOf('ListenOverflows');
    return index > 0 ? Number(lines[header + 1].split(' ')[index]) : 0;
  } catch {
    return 0;
  }
}
