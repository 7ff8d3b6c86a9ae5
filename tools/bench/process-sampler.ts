import { performance } from 'node:perf_hooks';
import { round } from 'tools/bench/load-result';
import {
  allProcessTicks,
  CLOCK_TICKS_PER_SEC,
  hostTicks,
  listenOverflows,
  processTicks,
  rssKb,
} from 'tools/bench/proc-stats';

export interface ProcessUsage {
  /** Highest VmRSS seen, MB. */
  peakRssMb: number;
  /** CPU time over wall time, in percent of one core (this machine's ceiling is 100 × cores). */
  cpuPercent: number;
  /** CPU seconds (all threads, user + system) inside the measured window; null if no window was marked. */
  windowCpuSec: number | null;
}

export interface SampledUsage {
  processes: Record<string, ProcessUsage>;
  /** Busy time of the whole machine, in percent of one core: on 2 cores, 200 means saturated. */
  hostCpuPercent: number;
  /**
   * CPU used by anything but the bench's own processes, Postgres and Redis (percent of one core):
   * someone else's build or test suite competing for the same cores. High values void the row.
   */
  otherCpuPercent: number;
  /**
   * Connections the kernel dropped because a listener's accept queue was full (host-wide
   * TcpExt ListenOverflows). Each costs its client a SYN retransmit: a second or more of stall.
   */
  listenOverflows: number;
}

const SAMPLE_EVERY_MS = 200;
/** Shared services the gateway itself loads; their CPU is part of the gateway's cost, not a disturbance. */
const SERVICES = new Set(['postgres', 'redis-server']);

/**
 * Peak RSS (VmRSS from /proc/<pid>/status every 200 ms), average CPU, and CPU time inside the
 * measured window (between markWindowOpen and markWindowClose) of a few named processes while a run
 * goes on, plus the whole machine's CPU and how much of it was not ours: on a small box
 * shared by load generator, gateway, Postgres and Redis, a throughput figure means little without
 * knowing whether the box was full, and with what.
 */
export class ProcessSampler {
  private readonly peakKb = new Map<string, number>();
  private readonly startTicks = new Map<string, number>();
  private readonly windowOpenTicks = new Map<string, number>();
  private readonly windowCloseTicks = new Map<string, number>();
  private readonly startAll = allProcessTicks();
  private readonly startHost = hostTicks();
  private readonly startOverflows = listenOverflows();
  private readonly startedAt = performance.now();
  private readonly timer: NodeJS.Timeout;

  /** `named`: processes to report on; `own`: every PID the bench started (and itself). */
  constructor(
    private readonly named: Record<string, number>,
    private readonly own: Set<number>,
  ) {
    for (const [name, pid] of Object.entries(named)) {
      this.startTicks.set(name, processTicks(pid)?.ticks ?? 0);
    }
    this.sample();
    this.timer = setInterval(() => this.sample(), SAMPLE_EVERY_MS);
  }

  /** The measured window starts now: CPU per request counts from here (the warm-up is over). */
  markWindowOpen(): void {
    this.readTicks(this.windowOpenTicks);
  }

  markWindowClose(): void {
    this.readTicks(this.windowCloseTicks);
  }

  stop(): SampledUsage {
    clearInterval(this.timer);
    this.sample();
    const elapsedSec = (performance.now() - this.startedAt) / 1000;
    const percent = (ticks: number) =>
      elapsedSec > 0 ? Math.round((ticks / CLOCK_TICKS_PER_SEC / elapsedSec) * 100) : 0;
    const processes: Record<string, ProcessUsage> = {};
    for (const [name, pid] of Object.entries(this.named)) {
      const opened = this.windowOpenTicks.get(name);
      const closed = this.windowCloseTicks.get(name);
      processes[name] = {
        peakRssMb: Math.round((this.peakKb.get(name) ?? 0) / 102.4) / 10,
        cpuPercent: percent((processTicks(pid)?.ticks ?? 0) - (this.startTicks.get(name) ?? 0)),
        windowCpuSec:
          opened !== undefined && closed !== undefined ? round((closed - opened) / CLOCK_TICKS_PER_SEC) : null,
      };
    }
    let accounted = 0;
    for (const [pid, { ticks, comm }] of allProcessTicks()) {
      if (this.own.has(pid) || SERVICES.has(comm)) {
        accounted += ticks - (this.startAll.get(pid)?.ticks ?? 0);
      }
    }
    const host = hostTicks();
    return {
      processes,
      hostCpuPercent: percent(host.busy - this.startHost.busy),
      // Derived from the host total so short-lived processes (test workers) count even after they exit.
      otherCpuPercent: Math.max(0, percent(host.tasks - this.startHost.tasks - accounted)),
      listenOverflows: listenOverflows() - this.startOverflows,
    };
  }

  private readTicks(into: Map<string, number>): void {
    for (const [name, pid] of Object.entries(this.named)) {
      const ticks = processTicks(pid)?.ticks;
      if (ticks !== undefined) {
        into.set(name, ticks);
      }
    }
  }

  private sample(): void {
    for (const [name, pid] of Object.entries(this.named)) {
      const kb = rssKb(pid);
      if (kb > (this.peakKb.get(name) ?? 0)) {
        this.peakKb.set(name, kb);
      }
    }
  }
}

/**
 * CPU per successful request in the window, µs. /proc counts CPU in 10 ms ticks, so a window read to
 * ±1 tick is within 1 % once the process used a second of CPU in it (10 s at 10 % of a core).
 */
export function cpuPerRequestUs(windowCpuSec: number | null, requests: number): number | null {
  return windowCpuSec === null || requests === 0 ? null : Math.round((windowCpuSec * 1e6) / requests);
}
