import type { Logger } from '../lib/logger.js';
import type { Refusal, TraceDeadLetter } from './dead-letter.js';
import type { TraceJournal } from './journal.js';
import { MAX_TRACES_PER_BATCH } from './ship-batch.js';
import type { TraceSpill } from './spill.js';
import type { TraceRecord } from './trace.js';
import { traceIdOf, traceLine } from './trace-line.js';

export interface TraceShipperOptions {
  /** Base URL of the control plane, without /api/v1. */
  controlPlaneUrl: string;
  apiKey: string;
  /** The shipping gateway; absent for an MCP proxy, which ships as the workspace's key. */
  gatewayId?: string | undefined;
  spill: TraceSpill;
  /**
   * Where records held in memory are logged so a killed process does not lose them; `replay` are
   * the records an earlier process left there, delivered first.
   */
  journal?: { journal: TraceJournal; replay: readonly string[] } | undefined;
  /** Where records the control plane refuses go; without it they are only counted and logged. */
  deadLetter?: TraceDeadLetter | undefined;
  logger: Logger;
  /** How often queued records are sent. */
  intervalMs?: number;
  batchSize?: number;
  /** Records held in memory at most; past it they go to the spill without waiting for the timer. */
  maxPending?: number;
  requestTimeoutMs?: number;
  /** First wait after a failure the control plane may recover from; doubles up to `retryMaxMs`. Default `intervalMs`. */
  retryBaseMs?: number;
  /** Longest wait between attempts. Default 60 × `intervalMs` (60 s). */
  retryMaxMs?: number;
}

/** How the control plane took a batch. */
type Outcome =
  | { kind: 'delivered' }
  /** 400, 413, 422: something in the batch cannot be stored; resending it unchanged would fail forever. */
  | { kind: 'refused'; refusal: Refusal }
  /** Unreachable, a timeout, 408, 425, 429, 5xx: try again later. */
  | { kind: 'transient'; reason: string; retryAfterMs: number | undefined }
  /** 401, 403, 404 and other 4xx: the key or gateway is wrong, not the records; keep them until it is fixed. */
  | { kind: 'held'; reason: string };

const REFUSED = new Set([400, 413, 422]);
const TRANSIENT = new Set([408, 425, 429]);

/**
 * Ships trace records to the control plane (POST /api/v1/traces/sync-back) in batches, in order.
 * A record is held, journaled, spilled and sent as its JSON line, made once.
 *
 * - A batch that cannot be delivered for now (the control plane unreachable, 5xx, 429, …) goes to
 *   the spill, and delivery backs off (the ship interval, 1 s, doubling to 60 times it, with
 *   jitter; `retry-after` honoured).
 *   The spill is replayed, oldest first, before anything newer is sent, so the control plane
 *   receives records in the order they were made.
 * - A batch the control plane refuses (400, 413, 422) is split in halves until the refused records
 *   stand alone: the good ones of the batch land, and each refused one goes to the dead-letter file,
 *   counted and logged, instead of being retried forever.
 * - A 401, 403 or 404 (a revoked key, an unknown gateway) says nothing about the records: they are
 *   kept in the spill and retried with the same backoff.
 */
export class TraceShipper {
  private pending: string[] = [];
  private running: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;
  private readonly batchSize: number;
  private readonly maxPending: number;
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;
  private failures = 0;
  private retryAt = 0;
  private refusedUnkept = 0;

  constructor(private readonly options: TraceShipperOptions) {
    this.batchSize = Math.min(options.batchSize ?? 200, MAX_TRACES_PER_BATCH);
    this.maxPending = options.maxPending ?? 10_000;
    const interval = options.intervalMs ?? 1000;
    this.retryBaseMs = options.retryBaseMs ?? interval;
    this.retryMaxMs = options.retryMaxMs ?? 60 * interval;
    this.pending = [...(options.journal?.replay ?? [])];
    this.timer = setInterval(() => void this.flush(), interval);
    this.timer.unref();
  }

  /** Queues a record; `line` is its JSON line when the caller has made it already. */
  enqueue(trace: TraceRecord, line = traceLine(trace)): void {
    this.options.journal?.journal.append(line);
    this.pending.push(line);
    if (this.pending.length >= this.maxPending) void this.flush();
  }

  /** Records in memory or on disk not yet delivered. */
  get undelivered(): number {
    return this.pending.length + this.options.spill.size;
  }

  /** Records the control plane refused, kept in the dead-letter file. */
  get deadLetteredCount(): number {
    return this.options.deadLetter?.size ?? 0;
  }

  /** Records lost: dropped at the spill's or the dead-letter file's bound, or refused with no dead-letter file. */
  get droppedCount(): number {
    return this.options.spill.droppedCount + (this.options.deadLetter?.droppedCount ?? 0) + this.refusedUnkept;
  }

  /** One delivery pass; passes never overlap. */
  flush(): Promise<void> {
    this.running = this.running.then(() => this.deliver());
    return this.running;
  }

  /** Stops the timer and makes a last pass; what is still undelivered stays in the spill for the next start. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
    this.options.journal?.journal.close();
  }

  /** Every record journaled when the pass starts ends it delivered, dead-lettered or in the spill; then its journal files go. */
  private async deliver(): Promise<void> {
    const journal = this.options.journal?.journal;
    journal?.seal();
    await this.deliverPending();
    await journal?.dropSealed();
  }

  private async deliverPending(): Promise<void> {
    const spill = this.options.spill;
    let blocked = Date.now() < this.retryAt;
    while (!blocked) {
      const segment = await spill.oldest();
      if (segment === undefined) break;
      const left = await this.settle(segment.records);
      if (left.length === 0) await spill.remove(segment.seq);
      else {
        if (left.length < segment.records.length) await spill.replace(segment.seq, left);
        blocked = true;
      }
    }
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, this.batchSize);
      const left = blocked ? batch : await this.settle(batch);
      if (left.length > 0) {
        blocked = true;
        await spill.append(left);
      }
    }
  }

  /**
   * Delivers what it can of `batch`, in order, and returns the records still to deliver (a suffix
   * of the batch): empty once every record is stored or dead-lettered.
   */
  private async settle(batch: readonly string[]): Promise<string[]> {
    const outcome = await this.post(batch);
    switch (outcome.kind) {
      case 'delivered':
        this.failures = 0;
        return [];
      case 'refused': {
        this.failures = 0;
        if (batch.length === 1) {
          await this.setAside(batch[0]!, outcome.refusal);
          return [];
        }
        const mid = Math.ceil(batch.length / 2);
        const left = await this.settle(batch.slice(0, mid));
        if (left.length > 0) return [...left, ...batch.slice(mid)];
        return this.settle(batch.slice(mid));
      }
      case 'transient':
        this.backOff(outcome.retryAfterMs);
        this.options.logger.warn({ err: outcome.reason, records: batch.length, retryInMs: this.retryAt - Date.now() }, 'trace delivery failed; spilling to disk');
        return [...batch];
      case 'held':
        this.backOff(undefined);
        this.options.logger.error({ err: outcome.reason, records: batch.length, retryInMs: this.retryAt - Date.now() }, 'control plane will not take traces with this key or gateway; keeping them on disk');
        return [...batch];
    }
  }

  private async setAside(line: string, refusal: Refusal): Promise<void> {
    if (this.options.deadLetter !== undefined) return this.options.deadLetter.add(line, refusal);
    this.refusedUnkept++;
    this.options.logger.error({ traceId: traceIdOf(line), status: refusal.status, reason: refusal.reason, totalDropped: this.droppedCount }, 'control plane refused a trace record; record dropped');
  }

  private backOff(retryAfterMs: number | undefined): void {
    this.failures++;
    const ceiling = Math.min(this.retryMaxMs, this.retryBaseMs * 2 ** Math.min(this.failures - 1, 30));
    const wait = ceiling / 2 + Math.random() * (ceiling / 2);
    this.retryAt = Date.now() + Math.max(wait, Math.min(retryAfterMs ?? 0, this.retryMaxMs));
  }

  private async post(batch: readonly string[]): Promise<Outcome> {
    const timeout = this.options.requestTimeoutMs ?? 10_000;
    try {
      // Loaded with the first batch: a process that ships nothing (an MCP wrapper with no control plane) never loads undici.
      const { request } = await import('undici');
      const res = await request(`${this.options.controlPlaneUrl}/api/v1/traces/sync-back`, {
        method: 'POST',
        headers: { authorization: `Bearer ${this.options.apiKey}`, 'content-type': 'application/json' },
        body: syncBackBody(this.options.gatewayId, batch),
        headersTimeout: timeout,
        bodyTimeout: timeout,
      });
      const text = await res.body.text();
      const status = res.statusCode;
      if (status >= 200 && status < 300) return { kind: 'delivered' };
      const reason = `control plane answered ${status}: ${text.slice(0, 300)}`;
      if (REFUSED.has(status)) return { kind: 'refused', refusal: { status, reason: text.slice(0, 300) } };
      if (TRANSIENT.has(status) || status >= 500 || status < 400) return { kind: 'transient', reason, retryAfterMs: retryAfterMs(res.headers['retry-after']) };
      return { kind: 'held', reason };
    } catch (err) {
      return { kind: 'transient', reason: (err as Error).message, retryAfterMs: undefined };
    }
  }
}

/** The sync-back body, `{ gatewayId, traces }`, around the records' lines as they are. */
function syncBackBody(gatewayId: string | undefined, lines: readonly string[]): string {
  return `{${gatewayId === undefined ? '' : `"gatewayId":${JSON.stringify(gatewayId)},`}"traces":[${lines.join(',')}]}`;
}

/** `retry-after` in seconds or as an HTTP date, in milliseconds from now. */
function retryAfterMs(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}
