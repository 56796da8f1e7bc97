import { appendFile, mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../lib/logger.js';
import type { TraceRecord } from './trace.js';
import { traceLine } from './trace-line.js';

export interface TraceSinkOptions {
  /** Folder of the JSON-lines files; undefined keeps traces in memory only. */
  dir: string | undefined;
  /** The latest records kept in memory for `recent()`; none unless asked (the proxy reads none back). */
  ringSize?: number;
  /** Size at which the current file is rotated. */
  maxFileBytes?: number;
  /** Rotated files kept besides the current one. */
  maxFiles?: number;
  /** How long a queued record waits at most before it is written (a batch of 128 is written at once). */
  flushIntervalMs?: number;
  /** Records queued for the file at most; past it the oldest tenth queued is dropped and counted. */
  maxQueued?: number;
  /** Also hands every record, with its JSON line, to this (e.g. the shipper to the control plane); it must not block. */
  forward?: (trace: TraceRecord, line: string) => void;
  logger?: Logger;
}

/**
 * Records queued that are written without waiting for the timer. At 10,000 requests a second 128
 * wait about 13 ms, less than the time between two scavenges, so a record dies young; 512 waited
 * long enough to be copied twice and promoted, the old generation's largest inflow.
 */
const FLUSH_AT_RECORDS = 128;

/** Where a proxy's settled requests go: the trace sink, or from another I/O thread the way to it. */
export interface TraceOutlet {
  record(trace: TraceRecord): void;
  /** Records dropped because a bound was hit. */
  readonly droppedCount: number;
  close(): Promise<void>;
}

/**
 * Keeps the latest traces in a bounded ring (when asked) and appends every record as one JSON line under
 * `dir`, written in batches (at most `flushIntervalMs` after the first record of a batch is
 * queued, or as soon as one is full; a sink with nothing queued sets no timer, so an idle proxy is
 * not woken to write nothing). A record is serialised once,
 * as it is recorded: its line is what the file and the shipper both take, and a queued line
 * costs the heap one string where a record held an object graph.
 */
export class TraceSink implements TraceOutlet {
  readonly file: string | undefined;
  private readonly ring: TraceRecord[] = [];
  private ringStart = 0;
  private queue: string[] = [];
  /** Set while records are queued: it writes them when the first has waited `flushIntervalMs`. */
  private timer: NodeJS.Timeout | undefined;
  private readonly flushIntervalMs: number;
  private writing: Promise<void> = Promise.resolve();
  private bytesInFile = -1;
  private dropped = 0;
  private readonly ringSize: number;
  private readonly maxFileBytes: number;
  private readonly maxFiles: number;
  private readonly maxQueued: number;

  constructor(private readonly options: TraceSinkOptions) {
    this.ringSize = options.ringSize ?? 0;
    this.maxFileBytes = options.maxFileBytes ?? 16 * 1024 * 1024;
    this.maxFiles = options.maxFiles ?? 5;
    this.maxQueued = options.maxQueued ?? 100_000;
    this.flushIntervalMs = options.flushIntervalMs ?? 250;
    this.file = options.dir === undefined ? undefined : join(options.dir, 'traces.jsonl');
  }

  record(trace: TraceRecord): void {
    const { forward } = this.options;
    const line = this.file === undefined && forward === undefined ? '' : traceLine(trace);
    forward?.(trace, line);
    if (this.ring.length < this.ringSize) this.ring.push(trace);
    else if (this.ringSize > 0) {
      this.ring[this.ringStart] = trace;
      this.ringStart = (this.ringStart + 1) % this.ringSize;
    }
    if (this.file === undefined) return;
    if (this.queue.length >= this.maxQueued) {
      // A tenth at a time: shifting one record off a queue this long moves all the others (about
      // 100 µs a record at 100,000), and a stuck disk would charge that to every request.
      const drop = Math.max(1, Math.floor(this.maxQueued / 10));
      this.queue.splice(0, drop);
      this.dropped += drop;
      this.options.logger?.warn({ dropped: drop, totalDropped: this.dropped }, 'trace file queue full (the disk is not taking writes); the oldest records were dropped');
    }
    const queued = this.queue.push(line);
    if (queued === FLUSH_AT_RECORDS) void this.flush();
    else if (queued === 1) this.timer ??= setTimeout(this.onTimer, this.flushIntervalMs).unref();
  }

  private readonly onTimer = (): void => {
    this.timer = undefined;
    void this.flush();
  };

  /** The records in memory, oldest first. */
  recent(): TraceRecord[] {
    return [...this.ring.slice(this.ringStart), ...this.ring.slice(0, this.ringStart)];
  }

  get droppedCount(): number {
    return this.dropped;
  }

  /** Writes what is queued; concurrent calls are serialised. */
  flush(): Promise<void> {
    this.writing = this.writing.then(() => this.writeQueued());
    return this.writing;
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  private async writeQueued(): Promise<void> {
    if (this.file === undefined || this.queue.length === 0) return;
    const batch = this.queue.join('\n') + '\n';
    const count = this.queue.length;
    this.queue = [];
    try {
      if (this.bytesInFile < 0) {
        await mkdir(this.options.dir!, { recursive: true });
        this.bytesInFile = await stat(this.file).then((s) => s.size, () => 0);
      }
      // Encoded once: its length in bytes decides the rotation and is what the file grows by.
      const bytes = Buffer.from(batch);
      if (this.bytesInFile + bytes.length > this.maxFileBytes && this.bytesInFile > 0) await this.rotate();
      await appendFile(this.file, bytes);
      this.bytesInFile += bytes.length;
    } catch (err) {
      this.dropped += count;
      this.options.logger?.error({ err, dropped: count, totalDropped: this.dropped }, 'trace file write failed; records dropped');
    }
  }

  private async rotate(): Promise<void> {
    const file = this.file!;
    await rm(`${file}.${this.maxFiles}`, { force: true });
    for (let i = this.maxFiles - 1; i >= 1; i--) {
      await rename(`${file}.${i}`, `${file}.${i + 1}`).catch(() => undefined);
    }
    await rename(file, `${file}.1`);
    this.bytesInFile = 0;
  }
}
