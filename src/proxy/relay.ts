import type { Dispatcher } from 'undici';
import { UpstreamError, UpstreamTimeoutError } from '../lib/errors.js';
import { costUsd, type CatalogEntry } from '../upstream/catalog.js';
import { mergeUsageFromEvent, usageFromJsonBytes, type Usage } from '../traces/usage.js';
import type { Exchange } from './exchange.js';
import { dataLinesContaining, SseFramer } from './sse.js';

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

/** Error bodies are read whole (for the provider's message), but only this much of them. */
const ERROR_BODY_LIMIT = 64 * 1024;
/**
 * Non-streamed responses are collected up to this size (usage is read from them); a larger body
 * is relayed as it arrives instead.
 */
const BUFFERED_BODY_LIMIT = 8 * 1024 * 1024;

export interface RelayRequest {
  readonly path: string;
  readonly headers: string[];
  readonly body: Buffer | string;
  readonly headersTimeoutMs: number;
  readonly bodyTimeoutMs: number;
  readonly pricing: CatalogEntry | undefined;
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

type Mode = 'pending' | 'error' | 'buffer' | 'passthrough' | 'stream';

/**
 * Relays one upstream response to the client as an undici dispatch handler. Streams go out
 * event by event as they arrive, with backpressure both ways: when uWS reports the client is
 * behind, the upstream socket is paused until uWS says it can take more. Non-streamed bodies
 * are collected (bounded) so their usage can be read.
 */
export class RelayHandler implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private mode: Mode = 'pending';
  private status = 0;
  private headers: Array<[string, string]> = [];
  private chunks: Buffer[] = [];
  private size = 0;
  private framer: SseFramer | null = null;
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
      this.mode = 'error';
    } else if (isEventStream(headers)) {
      this.mode = 'stream';
      this.framer = new SseFramer();
      this.ex.begin(statusCode, this.headers, controller);
    } else {
      this.mode = 'buffer';
    }
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.ex.gone) return;
    switch (this.mode) {
      case 'stream': {
        const events = this.framer!.push(chunk);
        if (events !== null) this.forward(events);
        return;
      }
      case 'buffer':
        this.chunks.push(chunk);
        this.size += chunk.length;
        if (this.size > BUFFERED_BODY_LIMIT) this.switchToPassthrough(controller);
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

  onResponseEnd(): void {
    if (this.ex.gone) return;
    switch (this.mode) {
      case 'stream': {
        const rest = this.framer!.flush();
        if (rest !== null) this.forward(rest);
        this.settleUsage();
        this.ex.end();
        return;
      }
      case 'buffer': {
        const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
        this.chunks = [];
        Object.assign(this.usage, usageFromJsonBytes(body));
        this.settleUsage();
        this.ex.reply(this.status, this.headers, body);
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

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    if (err instanceof ClientClosedError || this.ex.gone) return;
    const failure = upstreamFailure(err, this.req);
    if (this.mode === 'passthrough') {
      this.ex.cut(failure.code);
      return;
    }
    // A stream keeps its status line; the client gets a final well-formed error event.
    this.settleUsage();
    this.ex.fail(failure);
  }

  private forward(data: Buffer): void {
    if (this.mode === 'stream') {
      for (const event of dataLinesContaining(data, '"usage"')) mergeUsageFromEvent(event, this.usage);
    }
    this.ex.write(data);
  }

  private switchToPassthrough(controller: Dispatcher.DispatchController): void {
    this.mode = 'passthrough';
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

  private settleUsage(): void {
    if (this.usage.inputTokens === undefined && this.usage.outputTokens === undefined) return;
    this.ex.usage = this.usage;
    if (this.req.pricing !== undefined) {
      this.ex.costUsd = costUsd(this.req.pricing, this.usage.inputTokens ?? 0, this.usage.outputTokens ?? 0);
    }
  }
}
