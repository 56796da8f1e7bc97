import type { Dispatcher } from 'undici';
import { asBuffer } from '../lib/bytes.js';
import { UpstreamError, UpstreamTimeoutError, type SvcError } from '../lib/errors.js';
import { isJsonObject, type JsonObject } from '../lib/json.js';
import { costUsd } from '../upstream/catalog.js';
import { estimateTokens } from '../state/budget.js';
import type { Pricing } from './metering.js';
import { mergeUsageFromEvent, usageFromJsonBytes, type Usage } from '../traces/usage.js';
import type { InspectionResult } from '../policy/task.js';
import type { Finding } from '../policy/inspect.js';
import type { PolicyConfig } from '../policy/policy-config.js';
import { refusalResponse } from '../policy/refusal.js';
import { StreamRedactor } from '../policy/stream.js';
import type { Exchange } from './exchange.js';
import type { RouteKind } from './routes.js';
import type { RetryHook } from './upstream-call.js';
import { MAX_CACHED_BYTES, type CachedResponse } from './response-cache.js';
import { dataLinesWithObject, SseFramer } from '../lib/sse.js';
import { annotateBody, StreamNoteTap, type JudgeText } from './response-notes.js';
import { reviewResponseToolCalls } from './tool-calls.js';
import { andThen, type MaybePromise } from '../lib/maybe-promise.js';
import { reviewResponse, type ResponseReview } from './response-rules.js';
import type { ToolCallReview } from './tool-calls-review.js';
import { ToolCallStreamGate } from './tool-calls-stream.js';

/** Upstream response headers that must not be relayed (hop-by-hop, or recomputed by uWS). */
const DROP_RESPONSE_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
  'set-cookie',
  'date',
]);

/**
 * What a stream's usage lines are found by: the end of the `"usage"` key. A search for a needle
 * that starts with a quote, the commonest character in JSON, stops at every quote; a value cannot
 * hold this one, as a quote inside a string is escaped.
 */
const USAGE_KEY_END = 'usage"';

/** Error bodies are read whole (for the provider's message), but only this much of them. */
const ERROR_BODY_LIMIT = 64 * 1024;
/**
 * Non-streamed responses are collected up to this size (usage is read from them); a larger body
 * is relayed as it arrives instead.
 */
const BUFFERED_BODY_LIMIT = 8 * 1024 * 1024;
/**
 * A response the policy must inspect is collected whole up to this size; past it the request
 * fails closed rather than relaying text nobody inspected.
 */
const INSPECTED_BODY_LIMIT = 64 * 1024 * 1024;

/** A complete response on its way through the stages that read it, and its parse while none has changed it. */
interface InspectedBody {
  readonly body: Buffer;
  readonly parsed: JsonObject | null;
}

export interface RelayRequest {
  readonly path: string;
  readonly headers: string[];
  readonly body: Buffer | string;
  readonly headersTimeoutMs: number;
  readonly bodyTimeoutMs: number;
  readonly pricing: Pricing;
  /** For estimating usage when the provider reports none. */
  readonly estimate: { readonly inputBytes: number; readonly maxOutputTokens: number };
  readonly kind: RouteKind;
  /** The policy responses must pass, or null when nothing inspects them. */
  readonly responsePolicy: PolicyConfig | null;
  /** Runs an inspection (inline or in a worker, as the engine decides). */
  readonly inspect: (policy: PolicyConfig, parsed: unknown, raw: Buffer) => Promise<InspectionResult>;
  /** Asked before a failure that nothing of has reached the client goes to the client. */
  readonly retry: RetryHook;
  /** Judges the tool calls the model emits; null when no judge is active (nothing is held). */
  readonly toolCalls: ToolCallReview | null;
  /** Judges a complete non-streamed response; null when no rule evaluates responses. */
  readonly responseRules: ResponseReview | null;
  /** Receives a complete successful response as relayed, for the exact cache; null when not caching. */
  readonly cache: ((response: CachedResponse) => void) | null;
  /** Shown a complete non-streamed answer before the client; true when it was discarded and the model asked again. */
  readonly reask?: ((answer: Buffer) => boolean) | null;
  /** Judges a complete response's text for decide `on: response` rules (never rejects); null when none apply. */
  readonly notes: JudgeText | null;
}

class ClientClosedError extends Error {
  constructor() {
    super('client closed the connection');
    this.name = 'ClientClosedError';
  }
}

function relayableHeaders(headers: Record<string, string | string[] | undefined>): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const name in headers) {
    if (DROP_RESPONSE_HEADERS.has(name)) continue;
    const value = headers[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) out.push([name, v]);
    else out.push([name, value]);
  }
  return out;
}

function isEventStream(headers: Record<string, string | string[] | undefined>): boolean {
  const type = headers['content-type'];
  return typeof type === 'string' && type.startsWith('text/event-stream');
}

/** Translates a transport failure into what the client is told. */
function upstreamFailure(err: Error & { code?: string }, req: RelayRequest): UpstreamError {
  switch (err.code) {
    case 'UND_ERR_HEADERS_TIMEOUT':
      return new UpstreamTimeoutError(req.headersTimeoutMs);
    case 'UND_ERR_BODY_TIMEOUT':
      return new UpstreamTimeoutError(req.bodyTimeoutMs, 'sent nothing more');
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new UpstreamError('The upstream provider could not be reached.', { code: 'upstream_unreachable', cause: err });
    default:
      return new UpstreamError('The upstream connection was reset before the response completed.', { code: 'upstream_reset', cause: err });
  }
}

type Mode = 'pending' | 'error' | 'retry' | 'buffer' | 'passthrough' | 'stream';

/** An error event at the start of a stream: OpenAI's `data: {"error"…}` or Anthropic's `event: error`. */
function startsWithStreamError(events: Buffer): boolean {
  const head = events.subarray(0, 256).toString('utf8');
  return head.startsWith('event: error') || /^data: ?\{"error"/.test(head) || head.startsWith('data: {"type":"error"');
}

class RetryingError extends Error {
  constructor() {
    super('retrying on another attempt');
    this.name = 'RetryingError';
  }
}

/**
 * Relays one upstream response to the client as an undici dispatch handler. Streams go out as
 * they arrive, with backpressure both ways: when uWS reports the client is behind, the upstream
 * socket is paused until uWS says it can take more. Non-streamed bodies are collected (bounded)
 * so their usage can be read.
 *
 * A chunked stream reaches the handler one chunk at a time, and a provider writes each event in a
 * chunk of its own, so one socket read hands over many chunks in a row, synchronously. They are
 * gathered and framed, redacted and relayed together once the read is parsed (a microtask), as
 * they would leave in one write anyway: the per-event work is paid per read.
 */
export class RelayHandler implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private mode: Mode = 'pending';
  private status = 0;
  private headers: Array<[string, string]> = [];
  private chunks: Buffer[] = [];
  private size = 0;
  /** Response body bytes relayed or collected, for estimating output when no usage comes. */
  private bodyBytes = 0;
  private framer: SseFramer | null = null;
  /** Stream chunks of the read being parsed, not yet framed (see the class comment). */
  private unframed: Buffer[] = [];
  private framingQueued = false;
  private redactor: StreamRedactor | null = null;
  private noteTap: StreamNoteTap | null = null;
  private gate: ToolCallStreamGate | null = null;
  /** A stream's 200 waits for its first events: an error there can still be retried. */
  private streamBegun = false;
  private retryAfter: string | undefined;
  /** What went to the client, kept for the cache while it stays under the bound. */
  private relayed: Buffer[] | null = null;
  private relayedBytes = 0;
  private readonly usage: Usage = { inputTokens: undefined, outputTokens: undefined };

  constructor(
    private readonly ex: Exchange,
    private readonly req: RelayRequest,
  ) {
    ex.setAbortHandler(() => this.controller?.abort(new ClientClosedError()));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.ex.gone) controller.abort(new ClientClosedError());
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    if (statusCode < 200) return;
    this.status = statusCode;
    this.headers = relayableHeaders(headers);
    this.ex.ttfbMs = Math.round((performance.now() - this.ex.startedAt) * 100) / 100;
    if (statusCode >= 400) {
      const retryAfter = headers['retry-after'];
      this.retryAfter = typeof retryAfter === 'string' ? retryAfter : undefined;
      this.mode = this.req.retry.allows({ status: statusCode, retryAfter: this.retryAfter }) ? 'retry' : 'error';
    } else if (isEventStream(headers)) {
      this.mode = 'stream';
      this.framer = new SseFramer();
      if (this.req.responsePolicy !== null) this.redactor = new StreamRedactor(this.req.responsePolicy);
      if (this.req.notes !== null && statusCode === 200) this.noteTap = new StreamNoteTap(this.req.kind, this.req.notes);
      if (this.req.toolCalls !== null) {
        this.gate = ToolCallStreamGate.for(this.req.kind, this.req.toolCalls, (data) => this.release(data));
      }
    } else {
      this.mode = 'buffer';
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.ex.gone) return;
    this.bodyBytes += chunk.length;
    switch (this.mode) {
      case 'stream':
        this.unframed.push(chunk);
        if (!this.framingQueued) {
          this.framingQueued = true;
          queueMicrotask(() => this.frameRead(controller));
        }
        return;
      case 'retry':
        return;
      case 'buffer':
        this.chunks.push(chunk);
        this.size += chunk.length;
        if (this.req.responsePolicy === null) {
          if (this.size > BUFFERED_BODY_LIMIT) this.switchToPassthrough(controller);
        } else if (this.size > INSPECTED_BODY_LIMIT) {
          controller.abort(new Error('response too large to inspect'));
          this.ex.fail(
            new UpstreamError(`The response exceeds ${INSPECTED_BODY_LIMIT} bytes and cannot be inspected; it was not relayed.`, {
              code: 'response_not_inspectable',
            }),
          );
        }
        return;
      case 'passthrough':
        this.forward(chunk);
        return;
      case 'error':
        if (this.size < ERROR_BODY_LIMIT) {
          this.chunks.push(chunk);
          this.size += chunk.length;
        }
        return;
      case 'pending':
        return;
    }
  }

  onResponseEnd(controller: Dispatcher.DispatchController): void {
    // The read that ended the stream may have brought its last events.
    if (this.mode === 'stream' && !this.frameRead(controller)) return;
    if (this.ex.gone) return;
    if (!this.streamBegun && this.mode !== 'passthrough') this.ex.markUpstreamDone();
    switch (this.mode) {
      case 'retry':
        this.req.retry.retry({ status: this.status, retryAfter: this.retryAfter });
        return;
      case 'stream': {
        if (!this.streamBegun) this.beginStream(null);
        const rest = this.framer!.flush();
        if (rest !== null) this.forwardEvents(rest);
        this.finishRedaction();
        this.settleUsage();
        if (this.gate === null && this.noteTap === null) this.endStream();
        else void this.finishStream();
        return;
      }
      case 'buffer': {
        const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
        this.chunks = [];
        Object.assign(this.usage, usageFromJsonBytes(body));
        this.settleUsage();
        if (this.req.reask?.(body) === true) return;
        this.inspectPolicy(body)
          .then((inspected) => this.reviewToolCalls(inspected))
          .then((reviewed) => this.reviewText(reviewed))
          .then((judged) => this.annotate(judged))
          .then(
            (relayed) => {
              this.keepForCache(relayed);
              this.offerToCache(false);
              this.ex.reply(this.status, this.headers, relayed);
            },
            (err: SvcError) => this.ex.fail(err),
          );
        return;
      }
      case 'passthrough':
        this.settleUsage();
        this.ex.end();
        return;
      case 'error':
        this.relayUpstreamError();
        return;
      case 'pending':
        this.ex.fail(new UpstreamError('The upstream provider sent no response.', { code: 'upstream_reset' }));
    }
  }

  onResponseError(controller: Dispatcher.DispatchController, err: Error & { code?: string }): void {
    if (err instanceof ClientClosedError || err instanceof RetryingError || this.ex.gone) return;
    // Events that arrived before the failure go out first (and so commit the stream), as they would have alone.
    if (this.mode === 'stream' && !this.frameRead(controller)) return;
    const committed = this.mode === 'passthrough' || (this.mode === 'stream' && this.streamBegun);
    if (!committed && err.code !== undefined && this.req.retry.allows({ code: err.code })) {
      this.req.retry.retry({ code: err.code });
      return;
    }
    const failure = upstreamFailure(err, this.req);
    if (this.mode === 'passthrough') {
      this.ex.cut(failure.code);
      return;
    }
    // A stream keeps its status line; the client gets a final well-formed error event.
    this.settleUsage();
    this.ex.fail(failure);
  }

  /**
   * Frames and relays the stream chunks gathered from the read being parsed. A stream's first
   * events decide whether it begins or, when they are an error a retry may answer, is retried
   * instead. Answers false when the stream is no longer relayed (the client left, or it is retried).
   */
  private frameRead(controller: Dispatcher.DispatchController): boolean {
    this.framingQueued = false;
    const chunks = this.unframed;
    if (chunks.length === 0) return !this.ex.gone && this.mode === 'stream';
    this.unframed = [];
    if (this.ex.gone || this.mode !== 'stream') return false;
    const events = this.framer!.push(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    if (events === null) return true;
    if (!this.streamBegun) {
      this.ex.markUpstreamDone();
      if (startsWithStreamError(events) && this.req.retry.allows({ code: 'stream_error' })) {
        this.mode = 'retry';
        controller.abort(new RetryingError());
        this.req.retry.retry({ code: 'stream_error' });
        return false;
      }
      this.beginStream(controller);
    }
    this.forwardEvents(events);
    return !this.ex.gone;
  }

  private beginStream(controller: Dispatcher.DispatchController | null): void {
    this.streamBegun = true;
    this.ex.begin(this.status, this.headers, controller);
  }

  private endStream(): void {
    this.offerToCache(true);
    this.ex.end();
  }

  /** Stream events on their way out: through the tool-call gate when there is one. */
  private emit(events: Buffer): void {
    if (this.gate === null) this.release(events);
    else this.gate.push(events);
  }

  /** Events the gate let through; the note tap holds back a stream's terminal events until its note is written. */
  private release(events: Buffer): void {
    this.forward(this.noteTap === null ? events : this.noteTap.observe(events));
  }

  /** Held tool calls are released or substituted first, then the note (if any) goes before the stream's end. */
  private async finishStream(): Promise<void> {
    if (this.gate !== null) await this.gate.finish();
    if (this.noteTap !== null) this.forward(await this.noteTap.finish());
    this.endStream();
  }

  private forward(data: Buffer): void {
    this.keepForCache(data);
    this.ex.write(data);
  }

  private keepForCache(data: Buffer): void {
    if (this.req.cache === null || this.status !== 200) return;
    this.relayed ??= [];
    this.relayedBytes += data.length;
    if (this.relayedBytes > MAX_CACHED_BYTES) this.relayed.length = 0;
    else this.relayed.push(data);
  }

  /** Offers the complete response to the cache, unless it failed, was refused or grew too big. */
  private offerToCache(stream: boolean): void {
    if (this.req.cache === null || this.status !== 200 || this.ex.error !== null || this.ex.enforcement === 'KILL' || this.ex.enforcement === 'HIJACK') return;
    if (this.relayed === null || this.relayedBytes > MAX_CACHED_BYTES) return;
    const contentType = this.headers.find(([k]) => k === 'content-type')?.[1] ?? 'application/json';
    this.req.cache({
      status: 200,
      contentType,
      stream,
      inputTokens: this.usage.inputTokens ?? null,
      outputTokens: this.usage.outputTokens ?? null,
      body: Buffer.concat(this.relayed),
    });
  }

  /** Complete SSE events: usage read, redaction applied, then relayed. */
  private forwardEvents(events: Buffer): void {
    // Decoded once, for the usage search and the redactor.
    const text = events.toString('utf8');
    for (const event of dataLinesWithObject(text, USAGE_KEY_END)) mergeUsageFromEvent(event, this.usage);
    this.emit(this.redactor === null ? events : this.redactor.push(events, text));
  }

  private finishRedaction(): void {
    if (this.redactor === null) return;
    const rest = this.redactor.finish();
    if (rest !== null) this.emit(rest);
    this.recordFindings(this.redactor.findings, this.redactor.blockedBy !== null);
  }

  /** Writes the decide rules' note into a complete successful response (never into a refusal). */
  private annotate(body: Buffer): MaybePromise<Buffer> {
    const notes = this.req.notes;
    return notes !== null && this.status === 200 && this.ex.enforcement !== 'KILL' ? annotateBody(this.req.kind, body, notes) : body;
  }

  /** The response as the policy leaves it, with its parse when the policy left it as it came (the review then need not parse it again). */
  private async inspectPolicy(body: Buffer): Promise<InspectedBody> {
    const policy = this.req.responsePolicy;
    if (policy === null) return { body, parsed: null };
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      return { body, parsed: null };
    }
    // Inspection writes only redactions into `parsed`, and then answers a new body.
    const result = await this.req.inspect(policy, parsed, body);
    this.ex.shadow = result.shadow;
    this.recordFindings(result.findings, result.verdict === 'blocked');
    if (result.verdict === 'blocked') return { body: Buffer.from(JSON.stringify(refusalResponse(this.req.kind, parsed as Record<string, unknown>, result.blockedBy!.detector))), parsed: null };
    return result.body !== null ? { body: asBuffer(result.body), parsed: null } : { body, parsed: isJsonObject(parsed) ? parsed : null };
  }

  /** A complete response's tool calls put to the judges; refused ones substituted. */
  private reviewToolCalls(inspected: InspectedBody): MaybePromise<InspectedBody> {
    if (this.req.toolCalls === null) return inspected;
    return andThen(reviewResponseToolCalls(this.req.kind, inspected.body, this.req.toolCalls, inspected.parsed ?? undefined), (body) =>
      body === inspected.body ? inspected : { body, parsed: null },
    );
  }

  /** A complete response put to the rules that evaluate responses; a refused one replaced by a notice. */
  private reviewText({ body, parsed }: InspectedBody): MaybePromise<Buffer> {
    if (this.req.responseRules === null) return body;
    return reviewResponse(this.req.kind, body, this.req.responseRules, (record) => this.ex.recordResponseRule(record), parsed ?? undefined);
  }

  private recordFindings(findings: readonly Finding[], blocked: boolean): void {
    if (findings.length === 0) return;
    this.ex.findings.push(...findings);
    if (this.req.responsePolicy!.shadow) return;
    if (blocked) this.ex.enforcement = 'KILL';
    else if (this.ex.enforcement === 'BYPASS' && findings.some((f) => f.action === 'redact')) this.ex.enforcement = 'ENHANCE';
  }

  private switchToPassthrough(controller: Dispatcher.DispatchController): void {
    this.mode = 'passthrough';
    this.ex.markUpstreamDone();
    this.ex.begin(this.status, this.headers, controller);
    const held = this.chunks;
    this.chunks = [];
    for (const chunk of held) this.forward(chunk);
  }

  /** The provider's own error, relayed with its status when it is in the route's shape. */
  private relayUpstreamError(): void {
    const body = Buffer.concat(this.chunks);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      parsed = undefined;
    }
    const wellFormed =
      typeof parsed === 'object' && parsed !== null && 'error' in parsed && typeof (parsed as { error: unknown }).error === 'object';
    this.ex.error = 'upstream_' + this.status;
    if (wellFormed) {
      this.ex.reply(this.status, this.headers, body);
      return;
    }
    const retryAfter = this.headers.find(([k]) => k === 'retry-after');
    this.ex.fail(
      new UpstreamError(`The upstream provider answered ${this.status}.`, {
        status: this.status,
        headers: retryAfter ? { 'retry-after': retryAfter[1] } : {},
      }),
    );
  }

  /**
   * Usage as the provider reported it, or the proxy's estimate when it reported none: input from
   * the request's size, output from the bytes relayed (which counts framing too, so it errs high)
   * capped at the request's output limit.
   */
  private settleUsage(): void {
    if (this.usage.inputTokens === undefined && this.usage.outputTokens === undefined) {
      this.usage.inputTokens = estimateTokens(this.req.estimate.inputBytes);
      this.usage.outputTokens = Math.min(this.req.estimate.maxOutputTokens, estimateTokens(this.bodyBytes));
      this.ex.usageEstimated = true;
    }
    this.ex.usage = this.usage;
    this.ex.costUsd = costUsd(this.req.pricing, this.usage.inputTokens ?? 0, this.usage.outputTokens ?? 0);
  }
}
