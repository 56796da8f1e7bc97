import { cpus, type CpuInfo } from 'node:os';

/**
 * Measures how many of the machine's cores sat idle between one reading and the next, in cores
 * (1.5 = one and a half cores' worth of idle time), from the kernel's per-CPU time counters.
 */
export class IdleCores {
  private last: { idle: number; total: number; cores: number };

  constructor(private readonly read: () => CpuInfo[] = cpus) {
    this.last = sum(read());
  }

  /**
   * Idle cores since the previous call (since construction for the first). Infinity when the
   * system gives no per-CPU counters (some containers): unknown does not hold a thread back.
   */
  sample(): number {
    const now = sum(this.read());
    if (now.cores === 0) return Number.POSITIVE_INFINITY;
    const total = now.total - this.last.total;
    const idle = now.idle - this.last.idle;
    this.last = now;
    return total > 0 ? (idle / total) * now.cores : 0;
  }
}

function sum(infos: CpuInfo[]): { idle: number; total: number; cores: number } {
  let idle = 0;
  let total = 0;
  for (const { times } of infos) {
    idle += times.idle;
    total += times.user + times.nice + times.sys + times.idle + times.irq;
  }
  return { idle, total, cores: infos.length };
}
