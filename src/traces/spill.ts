import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../lib/logger.js';
import { isTraceLine } from './trace-line.js';

interface Segment {
  seq: number;
  count: number;
}

const SEGMENT = /^(\d{12})\.jsonl$/;
const segmentName = (seq: number) => `${String(seq).padStart(12, '0')}.jsonl`;

/**
 * Trace records (JSON lines) the control plane could not take yet, on disk in numbered segment
 * files (one per failed batch) so they survive a restart and replay oldest first. Bounded by `maxRecords`: past
 * it, incoming records are dropped, counted and logged.
 */
export class TraceSpill {
  private dropped = 0;

  private constructor(
    private readonly dir: string,
    private readonly maxRecords: number,
    private readonly segments: Segment[],
    private readonly logger: Logger,
  ) {}

  static async open(dir: string, maxRecords: number, logger: Logger): Promise<TraceSpill> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const segments: Segment[] = [];
    for (const name of (await readdir(dir)).sort()) {
      const match = SEGMENT.exec(name);
      if (match === null) continue;
      const text = await readFile(join(dir, name), 'utf8');
      segments.push({ seq: Number(match[1]), count: text.split('\n').filter(Boolean).length });
    }
    return new TraceSpill(dir, maxRecords, segments, logger);
  }

  /** Records held on disk. */
  get size(): number {
    return this.segments.reduce((n, s) => n + s.count, 0);
  }

  get droppedCount(): number {
    return this.dropped;
  }

  /** Appends what fits under the bound as one new segment; the rest is dropped and counted. */
  async append(records: readonly string[]): Promise<void> {
    const room = Math.max(0, this.maxRecords - this.size);
    const kept = records.slice(0, room);
    if (kept.length > 0) {
      const seq = (this.segments.at(-1)?.seq ?? 0) + 1;
      await writeFile(join(this.dir, segmentName(seq)), kept.join('\n') + '\n', { mode: 0o600 });
      this.segments.push({ seq, count: kept.length });
    }
    const lost = records.length - kept.length;
    if (lost > 0) {
      this.dropped += lost;
      this.logger.error({ dropped: lost, totalDropped: this.dropped, bound: this.maxRecords }, 'trace spill full: records dropped');
    }
  }

  /**
   * The oldest segment's records, or undefined when the spill is empty. A damaged line is dropped,
   * counted and logged, and the segment written again without it, so it is counted once.
   */
  async oldest(): Promise<{ seq: number; records: string[] } | undefined> {
    for (;;) {
      const segment = this.segments[0];
      if (segment === undefined) return undefined;
      const text = await readFile(join(this.dir, segmentName(segment.seq)), 'utf8');
      const lines = text.split('\n').filter(Boolean);
      const records = lines.filter(isTraceLine);
      const damaged = lines.length - records.length;
      if (damaged > 0) {
        this.dropped += damaged;
        this.logger.error({ dropped: damaged, totalDropped: this.dropped, segment: segmentName(segment.seq) }, 'trace spill: damaged records skipped');
        await this.replace(segment.seq, records);
        if (records.length === 0) continue;
      }
      return { seq: segment.seq, records };
    }
  }

  /** Rewrites a segment with what is left of it (atomically), after the control plane took the rest. */
  async replace(seq: number, records: readonly string[]): Promise<void> {
    const segment = this.segments.find((s) => s.seq === seq);
    if (segment === undefined) return;
    if (records.length === 0) return this.remove(seq);
    const path = join(this.dir, segmentName(seq));
    await writeFile(`${path}.tmp`, records.join('\n') + '\n', { mode: 0o600 });
    await rename(`${path}.tmp`, path);
    segment.count = records.length;
  }

  /** Forgets a segment once the control plane has taken it. */
  async remove(seq: number): Promise<void> {
    await rm(join(this.dir, segmentName(seq)), { force: true });
    const index = this.segments.findIndex((s) => s.seq === seq);
    if (index >= 0) this.segments.splice(index, 1);
  }
}
