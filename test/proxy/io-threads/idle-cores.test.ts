import t from 'tap';
import type { CpuInfo } from 'node:os';
import { IdleCores } from '../../../src/proxy/io-threads/idle-cores.js';

/** Per-CPU counters as `os.cpus()` gives them: busy and idle milliseconds since boot. */
const cpu = (busy: number, idle: number): CpuInfo => ({ model: 'test', speed: 1, times: { user: busy, nice: 0, sys: 0, idle, irq: 0 } });

t.test('idle cores between readings, from the per-CPU counters', async (t) => {
  const readings = [
    [cpu(1000, 5000), cpu(2000, 4000)],
    [cpu(2000, 5000), cpu(2000, 5000)], // one core busy for the second, the other idle
    [cpu(2500, 5500), cpu(2500, 5500)], // both half busy
    [cpu(2500, 5500), cpu(2500, 5500)], // no time passed
  ];
  const idle = new IdleCores(() => readings.shift()!);
  t.equal(idle.sample(), 1);
  t.equal(idle.sample(), 1);
  t.equal(idle.sample(), 0, 'no time read as no idle core');
});

t.test('a system that gives no per-CPU counters reads as unknown, which holds no thread back', async (t) => {
  t.equal(new IdleCores(() => []).sample(), Number.POSITIVE_INFINITY);
});

t.test('reads this machine', async (t) => {
  const idle = new IdleCores();
  const sample = idle.sample();
  t.ok(sample >= 0 && Number.isFinite(sample));
});
