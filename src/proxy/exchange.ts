import type { HttpResponse } from '@trufflesuite/uws-js-unofficial';
import { traceId } from '../lib/ids.js';
import { isoTime } from '../lib/iso-time.js';
import type { Slotted } from '../lib/slot-set.js';
import { SvcError } from '../lib/errors.js';
import type { Finding } from '../policy/inspect.js';
import type { AttemptRecord } from './upstream-call.js';
import type { AnomalyTrace, Enforcement, TraceRecord } from '../traces/trace.js';
import type { ToolCallRecord } from './tool-calls-review.js';
import type { ResponseRuleRecord } from './response-rules.js';
import type { Usage } from '../traces/usage.js';
import type { Wire } from '../upstream/target.js';
import type { IntakeHeaders } from './intake.js';
import { errorBody, statusLine, streamErrorEvent } from './respond.js';

/** The upstream side of a relay, paused while the client is behind. */
export interface FlowControl {
  pause(): void;
  resume(): void;
}

/** The incident a refusal was recorded under; `recorded` when this very refusal was counted by it. */
export interface KillIncident {
  readonly incidentId: string;
  readonly recorded: boolean;
}

export interface ExchangeHooks {
  /** Called once when the exchange is over (answered, failed or abandoned by the client). */
  settled(exchange: Exchange, trace: TraceRecord): void;
  /** Records a KILL with the control plane before it is answered, when there is one; never rejects. */
  recordKill?(trace: TraceRecord): Promise<KillIncident | null> | undefined;
}

const JSON_TYPE = 'application/json';

interface Head {
  readonly status: number;
  readonly headers: ReadonlyArray<readonly [string, string]>;
  /** Room it takes in the cork buffer (an upper bound: the status line, our own headers, and these). */
  readonly bytes: number;
}

/**
 * The largest write made inside one cork. uWS corks into a 16 KiB buffer; a corked write that
 * does not fit flushes the cork buffer first, and if the socket refuses that flush the write's
 * own data is dropped while its chunk header was already queued: the client sees corrupt chunked
 * framing. Writes up to this size always fit, so that path is never taken.
 */
const CORK_SAFE_BYTES = 16 * 1024 - 512;
/** The status line and the headers every response carries (trace id, overhead, enforcement), with room to spare. */
const HEAD_OVERHEAD_BYTES = 256;

/**
 * One client request from intake to its last byte: owns the uWS response (every write is corked
 * and skipped once the client is gone), the trace record, and the abort wiring to the upstream.
 */
export class Exchange implements Slotted {
  readonly id: string;
  /** Its place in the proxy's set of requests in flight (SlotSet); -1 outside it. */
  slot = -1;
  readonly startedAt = performance.now();
  private readonly startedWall = Date.now();
  /** The client closed the connection. */
  aborted = false;
  /** The response is complete (or abandoned); nothing more may be written. */
  private ended = false;
  /** The status line went out; errors from here on must travel inside the body. */
  committed = false;
  private onAbort: (() => void) | null = null;
  private settledOnce = false;
  /** A refusal is waiting for its incident id; nothing else may answer meanwhile. */
  private failing = false;
  /** Chunks waiting while the client is behind; the upstream is paused meanwhile, which keeps this short. */
  private backlog: Buffer[] = [];
  private blocked = false;
  private flushScheduled = false;
  private endWhenDrained = false;
  private flow: FlowControl | null = null;
  /** Writes made in this tick, sent together in one cork when the tick's synchronous work is done. */
  private pending: Buffer[] = [];
  private pendingFlushQueued = false;
  /** A begun response's status line and headers, until they leave with the tick's writes (or alone at its end). */
  private head: Head | null = null;
  /** When the first upstream attempt went out and when the upstream last finished answering (performance.now; 0 = not yet). */
  private upstreamSentAt = 0;
  private upstreamDoneAt = 0;
  /** The proxy's own time up to the status line (see overheadMs), once it went out. */
  private overheadAtHeaders: number | null = null;

  /** SHA-256 of the virtual key the caller authenticated with (not on the trace; a hold names its requester by it). */
  keySha256: string | undefined;
  // Trace fields filled along the way.
  workspace: string;
  model: string | null = null;
  provider: string | null = null;
  stream = false;
  status = 0;
  ttfbMs: number | null = null;
  usage: Usage | null = null;
  costUsd: number | null = null;
  enforcement: Enforcement = 'BYPASS';
  error: string | null = null;
  /** The incident a KILL was recorded under before it was answered (see TraceRecord.incidentId). */
  incidentId: string | null = null;
  findings: Finding[] = [];
  shadow = false;
  usageEstimated = false;
  /** The cost is at the conservative price of a model the catalog does not price. */
  priceEstimated = false;
  warnings: string[] = [];
  /** Headers every response of this exchange carries (the budget ones). */
  extraHeaders: ReadonlyArray<readonly [string, string]> = [];
  /** Budget was reserved for this request and must be settled when it ends. */
  metered = false;
  /** Whether the request is traffic worth a trace; health checks and harness probes are not. */
  traced = true;
  /** Upstream attempts that failed and were retried or fell back (the last attempt is the trace's own). */
  attempts: AttemptRecord[] = [];
  cache: 'hit' | 'miss' | null = null;
  anomaly: AnomalyTrace | null = null;
  toolCalls: ToolCallRecord[] = [];
  requestRule: TraceRecord['requestRule'] = null;
  responseRule: ResponseRuleRecord | null = null;

  constructor(
    readonly res: HttpResponse,
    readonly route: string,
    /** The query string as the client sent it, without its `?`. */
    readonly query: string,
    readonly wire: Wire,
    readonly headers: IntakeHeaders,
    defaultWorkspace: string,
    private readonly hooks: ExchangeHooks,
  ) {
    this.id = traceId(this.startedWall);
    this.workspace = headers.workspace ?? defaultWorkspace;
    res.onAborted(() => this.handleClientAbort());
  }

  /** Registers what to cancel if the client leaves (the upstream request). */
  setAbortHandler(fn: (() => void) | null): void {
    this.onAbort = fn;
  }

  get gone(): boolean {
    return this.aborted || this.ended;
  }

  private handleClientAbort(): void {
    this.aborted = true;
    this.ended = true;
    if (this.status === 0) this.status = 499;
    this.error ??= 'client_closed';
    const fn = this.onAbort;
    this.onAbort = null;
    fn?.();
    this.settle();
  }

  /** The first upstream attempt is going out now. */
  markUpstreamSent(): void {
    if (this.upstreamSentAt === 0) this.upstreamSentAt = performance.now();
  }

  /** The upstream has answered all the proxy waits for before it responds (the whole body, or a stream's first events). */
  markUpstreamDone(): void {
    this.upstreamDoneAt = performance.now();
  }

  /**
   * The proxy's own milliseconds from intake to now: everything except the span from the first
   * upstream attempt going out to the upstream's answer (retries and their backoff included in
   * that span, as they are spent waiting on the upstream).
   */
  private overheadMs(): number {
    const elapsed = performance.now() - this.startedAt;
    return this.upstreamSentAt > 0 && this.upstreamDoneAt >= this.upstreamSentAt ? elapsed - (this.upstreamDoneAt - this.upstreamSentAt) : elapsed;
  }

  private writeHeaders(status: number, headers: ReadonlyArray<readonly [string, string]>): void {
    this.overheadAtHeaders = Math.round(this.overheadMs() * 100) / 100;
    this.res.writeStatus(statusLine(status));
    this.res.writeHeader('x-svc-trace-id', this.id);
    this.res.writeHeader('x-svc-overhead-ms', this.overheadAtHeaders.toFixed(2));
    this.res.writeHeader('x-svc-enforcement', this.enforcement);
    for (const [k, v] of this.extraHeaders) this.res.writeHeader(k, v);
    for (const [k, v] of headers) this.res.writeHeader(k, v);
  }

  /** A complete response; small bodies go out in a single write. */
  reply(status: number, headers: ReadonlyArray<readonly [string, string]>, body: string | Buffer, closeConnection = false): void {
    if (this.gone) return;
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    if (bytes.length > CORK_SAFE_BYTES) {
      this.begin(status, headers, null);
      this.write(bytes);
      this.end();
      return;
    }
    this.status = status;
    this.ended = true;
    this.committed = true;
    this.res.cork(() => {
      this.writeHeaders(status, headers);
      this.res.end(bytes, closeConnection);
    });
    this.settle();
  }

  replyJson(status: number, body: unknown): void {
    this.reply(status, [['content-type', JSON_TYPE]], JSON.stringify(body));
  }

  /**
   * Starts a streamed response: the status line and headers go out now. `flow` is paused when the
   * client falls behind and resumed once it has caught up.
   */
  begin(status: number, headers: ReadonlyArray<readonly [string, string]>, flow: FlowControl | null): void {
    if (this.gone) return;
    this.status = status;
    this.committed = true;
    this.flow = flow;
    this.res.onWritable(() => {
      // uWS corks around its own callbacks, where a write larger than the cork buffer is unsafe
      // (see CORK_SAFE_BYTES); the held chunks go out just after, each piece in its own cork.
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flushBacklog());
      }
      return true;
    });
    // The status line leaves at the end of this tick, with whatever is written in it: an upstream
    // read usually brings the headers and the first events together, and they go out in one syscall.
    let bytes = HEAD_OVERHEAD_BYTES;
    for (const [k, v] of headers) bytes += k.length + v.length + 4;
    for (const [k, v] of this.extraHeaders) bytes += k.length + v.length + 4;
    this.head = { status, headers, bytes };
    this.queueFlush();
  }

  /**
   * Queues a chunk of a begun response. Chunks written in the same tick (one upstream read often
   * holds many SSE events) leave together in one cork and one syscall.
   */
  write(chunk: Buffer | string): void {
    if (this.gone) return;
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (this.blocked) {
      this.backlog.push(bytes);
      return;
    }
    this.pending.push(bytes);
    this.queueFlush();
  }

  private queueFlush(): void {
    if (this.pendingFlushQueued) return;
    this.pendingFlushQueued = true;
    queueMicrotask(() => this.flushPending());
  }

  private flushPending(): void {
    this.pendingFlushQueued = false;
    if (this.gone) return;
    const data = this.takePending();
    if (data === null) return this.flushHead();
    if (this.blocked) this.backlog.push(data);
    else if (!this.writePieces(data)) this.flow?.pause();
  }

  private takePending(): Buffer | null {
    if (this.pending.length === 0) return null;
    const data = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending);
    this.pending = [];
    return data;
  }

  /** Sends the status line and headers if they are still held, in a cork of their own. */
  private flushHead(): void {
    if (this.head !== null) this.res.cork(() => this.writeHeldHead());
  }

  /** Writes the held status line and headers, if any, into the current cork (callers make sure they fit). */
  private writeHeldHead(): void {
    const head = this.head;
    if (head === null) return;
    this.head = null;
    this.writeHeaders(head.status, head.headers);
  }

  /**
   * Writes `bytes` in cork-sized pieces, each in its own cork. On backpressure the unsent rest
   * goes to the front of the backlog and nothing more is written until uWS reports the socket
   * writable: uWS keeps what a refused write could not send, and writing on regardless takes its
   * least safe path.
   */
  private writePieces(bytes: Buffer): boolean {
    if (this.head !== null && this.head.bytes + Math.min(bytes.length, CORK_SAFE_BYTES) > CORK_SAFE_BYTES) this.flushHead();
    for (let offset = 0; offset < bytes.length; offset += CORK_SAFE_BYTES) {
      const piece = offset === 0 && bytes.length <= CORK_SAFE_BYTES ? bytes : bytes.subarray(offset, offset + CORK_SAFE_BYTES);
      let ok = true;
      this.res.cork(() => {
        // The first piece carries the held status line when both fit in the cork (checked above).
        this.writeHeldHead();
        ok = this.res.write(piece);
      });
      if (!ok) {
        this.blocked = true;
        const rest = offset + CORK_SAFE_BYTES;
        if (rest < bytes.length) this.backlog.unshift(bytes.subarray(rest));
        return false;
      }
    }
    return true;
  }

  private flushBacklog(): void {
    this.flushScheduled = false;
    if (this.gone) return;
    while (this.backlog.length > 0) {
      if (!this.writePieces(this.backlog.shift()!)) return;
    }
    this.blocked = false;
    if (this.endWhenDrained) this.end();
    else this.flow?.resume();
  }

  /** Ends a begun response, once whatever is held for a slow client has gone out. */
  end(): void {
    if (this.gone) return;
    if (!this.blocked) {
      // The last bytes, the status line if still held, and the end of the body in one cork when they fit.
      const data = this.takePending();
      const size = data?.length ?? 0;
      if (size + (this.head?.bytes ?? 0) <= CORK_SAFE_BYTES) {
        this.ended = true;
        this.res.cork(() => {
          this.writeHeldHead();
          if (data !== null) this.res.write(data);
          this.res.end();
        });
        this.settle();
        return;
      }
      if (data !== null) this.pending.push(data);
    }
    this.flushPending();
    this.flushHead();
    if (this.blocked) {
      this.endWhenDrained = true;
      return;
    }
    this.ended = true;
    this.res.cork(() => this.res.end());
    this.settle();
  }

  /** Drops the connection without a proper end, so the client cannot mistake a cut body for a whole one. */
  cut(code: string): void {
    if (this.gone) return;
    this.ended = true;
    this.error ??= code;
    this.res.close();
    this.settle();
  }

  /**
   * Refuses or fails the request in the route's provider shape. Before the status line this is an
   * ordinary error response; inside a stream it is a final error event, then the end.
   */
  fail(err: SvcError, closeConnection = false): void {
    if (this.gone || this.failing) return;
    this.error = err.code;
    const recording = this.enforcement === 'KILL' && this.traced ? this.hooks.recordKill?.(this.toTrace()) : undefined;
    if (recording === undefined) {
      this.sendFailure(err, closeConnection, null);
      return;
    }
    // A KILL names its incident: it waits (bounded by the control plane client's timeout) for it.
    this.failing = true;
    void recording.then((incident) => {
      this.failing = false;
      if (incident?.recorded === true) this.incidentId = incident.incidentId;
      this.sendFailure(err, closeConnection, incident?.incidentId ?? null);
    });
  }

  private sendFailure(err: SvcError, closeConnection: boolean, incidentId: string | null): void {
    if (this.gone) return;
    if (!this.committed) {
      const headers: Array<readonly [string, string]> = [['content-type', JSON_TYPE], ...Object.entries(err.headers)];
      if (incidentId !== null) headers.push(['x-svc-incident-id', incidentId]);
      this.reply(err.status, headers, errorBody(this.wire, err, this.id, incidentId), closeConnection);
      return;
    }
    this.write(streamErrorEvent(this.wire, err, this.id, incidentId));
    this.end();
  }

  /** A tool call a rule refused: substituted (the agent was steered), or only recorded in shadow mode. */
  recordToolCall(record: ToolCallRecord): void {
    this.toolCalls.push(record);
    // An approved hold let the call through: recorded, nothing changed.
    if (record.action === 'hold_approved_bypass_used') return;
    if (!record.substituted) this.shadow = true;
    else if (this.enforcement !== 'KILL') this.enforcement = 'HIJACK';
  }

  /** A response a rule refused: withheld (the request is killed), or only recorded in shadow mode. */
  recordResponseRule(record: ResponseRuleRecord): void {
    this.responseRule = record;
    if (!record.withheld) this.shadow = true;
    else this.enforcement = 'KILL';
  }

  /** The trace record as it stands. */
  toTrace(): TraceRecord {
    return {
      id: this.id,
      time: isoTime(this.startedWall),
      workspace: this.workspace,
      session: this.headers.session,
      harness: this.headers.harness,
      route: this.route,
      model: this.model,
      provider: this.provider,
      stream: this.stream,
      status: this.status,
      latencyMs: Math.round((performance.now() - this.startedAt) * 100) / 100,
      ttfbMs: this.ttfbMs,
      overheadMs: this.overheadAtHeaders,
      inputTokens: this.usage?.inputTokens ?? null,
      outputTokens: this.usage?.outputTokens ?? null,
      costUsd: this.costUsd,
      enforcement: this.enforcement,
      error: this.error,
      incidentId: this.incidentId,
      findings: this.findings,
      shadow: this.shadow,
      usageEstimated: this.usageEstimated,
      priceEstimated: this.priceEstimated,
      warnings: this.warnings,
      attempts: this.attempts,
      cache: this.cache,
      anomaly: this.anomaly,
      toolCalls: this.toolCalls,
      requestRule: this.requestRule,
      responseRule: this.responseRule,
    };
  }

  private settle(): void {
    if (this.settledOnce) return;
    this.settledOnce = true;
    this.onAbort = null;
    this.hooks.settled(this, this.toTrace());
  }
}
