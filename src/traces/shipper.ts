import { request } from 'undici';
import type { Logger } from '../lib/logger.js';
import { MAX_TRACES_PER_BATCH } from './ship-batch.js';
import type { TraceSpill } from './spill.js';
import type { TraceRecord } from './trace.js';

export interface TraceShipperOptions {
  /** Base URL of the control plane, without /api/v1. */
  controlPlaneUrl: string;
  apiKey: string;
  gatewayId: string;
  spill: TraceSpill;
  logger: Logger;
  /** How often queued records are sent. */
  intervalMs?: number;
  batchSize?: number;
  /** Records held in memory at most; past it they go to the spill without waiting for the timer. */
  maxPending?: number;
  requestTimeoutMs?: number;
}

/** The control plane refused a batch as invalid: retrying it would fail forever. */
class BatchRefusedError extends Error {}

/**
 * Ships trace records to the control plane (POST /api/v1/traces/sync-back) in batches, in order.
 * A batch that cannot be delivered goes to the spill; the spill is replayed, oldest first, before
 * anything newer is sent, so the control plane receives records in the order they were made.
 */
export class TraceShipper {
  private pending: TraceRecord[] = [];
  private running: Promise<void> = Promise.resolve();
  private readonly timer: NodeJS.Timeout;
  private readonly batchSize: number;
  private readonly maxPending: number;
  private refused = 0;

  constructor(private readonly options: TraceShipperOptions) {
    this.batchSize = Math.min(options.batchSize ?? 200, MAX_TRACES_PER_BATCH);
    this.maxPending = options.maxPending ?? 10_000;
    this.timer = setInterval(() => void this.flush(), options.intervalMs ?? 1000);
    this.timer.unref();
  }

  enqueue(trace: TraceRecord): void {
    this.pending.push(trace);
    if (this.pending.length >= this.maxPending) void this.flush();
  }

  /** Records in memory or on disk not yet delivered. */
  get undelivered(): number {
    return this.pending.length + this.options.spill.size;
  }

  /** Records lost: dropped at the spill's bound or refused by the control plane as invalid. */
  get droppedCount(): number {
    return this.options.spill.droppedCount + this.refused;
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
  }

  private async deliver(): Promise<void> {
    const spill = this.options.spill;
    let reachable = true;
    for (let segment = await spill.oldest(); segment !== undefined && reachable; segment = await spill.oldest()) {
      reachable = await this.send(segment.records);
      if (reachable) await spill.remove(segment.seq);
    }
    while (this.pending.length > 0) {
      const batch = this.pending.splice(0, this.batchSize);
      if (reachable) reachable = await this.send(batch);
      if (!reachable) await spill.append(batch);
    }
  }

  /** True when the batch is settled (delivered, or refused and counted); false when the control plane could not take it. */
  private async send(batch: readonly TraceRecord[]): Promise<boolean> {
    try {
      await this.post(batch);
      return true;
    } catch (err) {
      if (err instanceof BatchRefusedError) {
        this.refused += batch.length;
        this.options.logger.error({ err: err.message, dropped: batch.length, totalDropped: this.droppedCount }, 'control plane refused a trace batch; records dropped');
        return true;
      }
      this.options.logger.warn({ err: (err as Error).message, records: batch.length }, 'trace delivery failed; spilling to disk');
      return false;
    }
  }

  private async post(batch: readonly TraceRecord[]): Promise<void> {
    const timeout = this.options.requestTimeoutMs ?? 10_000;
    const res = await request(`${this.options.controlPlaneUrl}/api/v1/traces/sync-back`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.options.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ gatewayId: this.options.gatewayId, traces: batch }),
      headersTimeout: timeout,
      bodyTimeout: timeout,
    });
    const text = await res.body.text();
    if (res.statusCode === 400 || res.statusCode === 422) throw new BatchRefusedError(`${res.statusCode}: ${text.slice(0, 300)}`);
    if (res.statusCode >= 300) throw new Error(`control plane answered ${res.statusCode}: ${text.slice(0, 300)}`);
  }
}
