import { appendFile, chmod, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../lib/logger.js';
import { traceIdOf } from './trace-line.js';

/** Why a record was set aside: the control plane's status and what it said. */
export interface Refusal {
  status: number;
  reason: string;
}

export const DEAD_LETTER_FILE = 'dead-letter.jsonl';

/**
 * Trace records the control plane refused (400, 413 or 422 for that record alone): retrying them
 * would fail forever, so each is appended to `dead-letter.jsonl` (0600, in a 0700 folder) as
 * `{ at, status, reason, record }` with a log line, and counted. The file is kept for a person to
 * read or replay; past `maxRecords` further refusals are only counted and logged.
 */
export class TraceDeadLetter {
  private dropped = 0;

  private constructor(
    readonly file: string,
    private readonly maxRecords: number,
    private held: number,
    private readonly logger: Logger,
  ) {}

  static async open(dir: string, maxRecords: number, logger: Logger): Promise<TraceDeadLetter> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await chmod(dir, 0o700);
    const file = join(dir, DEAD_LETTER_FILE);
    let held = 0;
    try {
      held = (await readFile(file, 'utf8')).split('\n').filter(Boolean).length;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    return new TraceDeadLetter(file, maxRecords, held, logger);
  }

  /** Records in the file. */
  get size(): number {
    return this.held;
  }

  /** Refused records not kept because the file was full. */
  get droppedCount(): number {
    return this.dropped;
  }

  /** Keeps a refused record (its JSON line). */
  async add(line: string, refusal: Refusal): Promise<void> {
    if (this.held >= this.maxRecords) {
      this.dropped++;
      this.logger.error({ traceId: traceIdOf(line), status: refusal.status, reason: refusal.reason, dropped: this.dropped, bound: this.maxRecords }, 'control plane refused a trace record; the dead-letter file is full, record dropped');
      return;
    }
    const head = JSON.stringify({ at: new Date().toISOString(), status: refusal.status, reason: refusal.reason });
    await appendFile(this.file, `${head.slice(0, -1)},"record":${line}}\n`, { mode: 0o600 });
    this.held++;
    this.logger.error({ traceId: traceIdOf(line), status: refusal.status, reason: refusal.reason, deadLettered: this.held, file: this.file }, 'control plane refused a trace record; kept in the dead-letter file');
  }
}
