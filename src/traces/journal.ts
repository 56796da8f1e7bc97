import { close, closeSync, fdatasync, fdatasyncSync, openSync, writeSync } from 'node:fs';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../lib/logger.js';
import { isTraceLine } from './trace-line.js';

export interface TraceJournalOptions {
  /** How often written records are forced to disk (`fdatasync`), at most. */
  syncIntervalMs?: number;
}

const FILE = /^(\d{12})\.jsonl$/;
const fileName = (seq: number) => `${String(seq).padStart(12, '0')}.jsonl`;

/**
 * Write-ahead log of trace records the shipper holds in memory, so a process killed outright
 * (SIGKILL, OOM) loses none of them once they are written:
 *
 * - records completed in the same event-loop turn are appended together with one `write`, at the
 *   end of the turn: a record reaches the kernel within one turn of its request ending, and a
 *   killed process loses only what its last turn completed;
 * - written data is forced to the disk (`fdatasync`) at most every `syncIntervalMs` (1 s), which
 *   bounds what a power cut or kernel crash can lose;
 * - the shipper seals the current file when a delivery pass starts and drops the sealed files once
 *   the pass has handed their records to the control plane or the spill.
 *
 * On start, every file left over is read back (a torn last line is skipped) and its records are
 * delivered first; a record the control plane already took is ignored by it (traces are keyed by id).
 */
export class TraceJournal {
  private fd: number | null = null;
  private fileSeq: number;
  private sealed: number[];
  private buffered: string[] = [];
  private writeQueued = false;
  private dirty = false;
  private syncing: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;
  private failures = 0;

  private constructor(
    private readonly dir: string,
    leftover: number[],
    private readonly logger: Logger,
    syncIntervalMs: number,
  ) {
    this.sealed = leftover;
    this.fileSeq = leftover.at(-1) ?? 0;
    this.timer = setInterval(() => this.sync(), syncIntervalMs);
    this.timer.unref();
  }

  /** Opens the journal under `dir` and returns it with the records (JSON lines) an earlier process left unshipped, oldest first. */
  static async open(dir: string, logger: Logger, options: TraceJournalOptions = {}): Promise<{ journal: TraceJournal; replay: string[] }> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const seqs = (await readdir(dir))
      .map((name) => FILE.exec(name)?.[1])
      .filter((seq): seq is string => seq !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
    const replay: string[] = [];
    for (const seq of seqs) {
      for (const line of (await readFile(join(dir, fileName(seq)), 'utf8')).split('\n')) {
        if (line === '') continue;
        if (isTraceLine(line)) replay.push(line);
        else logger.warn({ file: fileName(seq) }, 'trace journal: a torn line skipped');
      }
    }
    return { journal: new TraceJournal(dir, seqs, logger, options.syncIntervalMs ?? 1000), replay };
  }

  /** Adds a record (its JSON line); it is written, with the others of this turn, when the turn ends. */
  append(line: string): void {
    this.buffered.push(line + '\n');
    if (this.writeQueued) return;
    this.writeQueued = true;
    setImmediate(() => this.write());
  }

  /** Closes the current file for appending; records appended from now on go to a new one. */
  seal(): void {
    this.write();
    if (this.fd === null) return;
    const fd = this.fd;
    this.fd = null;
    this.sealed.push(this.fileSeq);
    // An fdatasync in flight still uses the descriptor.
    void this.syncing.then(() => close(fd, () => undefined));
  }

  /** Deletes the files sealed up to now: their records were handed on. */
  async dropSealed(): Promise<void> {
    const sealed = this.sealed;
    this.sealed = [];
    await Promise.all(sealed.map((seq) => rm(join(this.dir, fileName(seq)), { force: true })));
  }

  /** Writes and syncs what is left and stops; files still holding records stay for the next start. */
  close(): void {
    clearInterval(this.timer);
    this.write();
    if (this.fd === null) return;
    if (this.dirty) fdatasyncSync(this.fd);
    closeSync(this.fd);
    this.fd = null;
  }

  private write(): void {
    this.writeQueued = false;
    if (this.buffered.length === 0) return;
    const text = this.buffered.length === 1 ? this.buffered[0]! : this.buffered.join('');
    this.buffered = [];
    try {
      this.fd ??= openSync(join(this.dir, fileName(++this.fileSeq)), 'a', 0o600);
      writeSync(this.fd, text);
      this.dirty = true;
      this.failures = 0;
    } catch (err) {
      // The records are still in the shipper's memory; only their protection against a crash is lost.
      if (this.failures++ === 0) this.logger.error({ err }, 'trace journal write failed; traces are held in memory only until it works again');
    }
  }

  private sync(): void {
    if (!this.dirty || this.fd === null) return;
    const fd = this.fd;
    this.dirty = false;
    this.syncing = this.syncing.then(
      () =>
        new Promise<void>((resolve) =>
          fdatasync(fd, (err) => {
            if (err) this.logger.warn({ err }, 'trace journal fdatasync failed');
            resolve();
          }),
        ),
    );
  }
}
