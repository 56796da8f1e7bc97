import { meterModule } from './meter.js';
import type { MeterOutcome, MeterTask } from './metering.js';

/**
 * The Piscina entry of the metering worker: binaryen runs here, never on the main thread. It runs
 * none of a rule's code; rules run metered on the thread that asks for a verdict.
 */
export default function run(task: MeterTask): MeterOutcome {
  const progress = new Float64Array(task.progress);
  progress[1] = Date.now();
  progress[0] = 1;
  try {
    return { bytes: meterModule(task.bytes) };
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  }
}
