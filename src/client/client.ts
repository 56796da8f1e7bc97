import { Agent, request, type Dispatcher } from 'undici';
import { z } from 'zod';
import { parseSseEvents, SseFramer } from '../lib/sse.js';
import { VERSION } from '../lib/version.js';
import { readStoredCredentials } from '../machine/credentials.js';
import { budgetFromControlPlane, BudgetCache, type BudgetStatus } from './budget.js';
import { CircuitBreaker, type BreakerOptions } from './breaker.js';
import { ChatStream, ChunkAssembler, type ChatDelta, type ChatResult } from './chat-stream.js';
import { resolveContext, type RunContext } from './context.js';
import { GatewayUnreachableError, InvalidOptionsError, InvalidResponseError, SvcClientError, VerdictError } from './errors.js';
import type { OpenAIMessage } from './messages.js';
import {
  enforcementOf,
  errorFromResponse,
  errorFromStreamEvent,
  governanceNotices,
  hijackOf,
  traceIdOf,
  withheldNotice,
  withheldVerdict,
  type HijackEvent,
  type Verdict,
} from './outcomes.js';
import { budgetBodySchema, chatChunkSchema, chatCompletionSchema, headerValue } from './wire.js';
import { withoutTrailingSlashes } from '../lib/trailing-run.js';

/** The local proxy, when the options name none. */
export const DEFAULT_PROXY_URL = 'http://127.0.0.1:4000';
/** The local control plane (`--dev`), when nothing else names one. */
export const DEFAULT_CONTROL_PLANE_URL = 'http://127.0.0.1:3001';

export interface SvcClientOptions {
  /** A `vk_` virtual key (or a login token); sent to the proxy and, for checkBudget, to the control plane. */
  readonly apiKey: string;
  /** The proxy (data plane); default http://127.0.0.1:4000. A trailing `/v1` is accepted. */
  readonly baseUrl?: string;
  /**
   * The control plane checkBudget asks (`GET /api/v1/budget`; the proxy does not serve it).
   * Default: `SVC_CONTROL_PLANE_URL`, else the one `svc login` stored, else http://127.0.0.1:3001.
   */
  readonly controlPlaneUrl?: string;
  /** `x-svc-harness`; default `svc-client`. */
  readonly harness?: string;
  /** `x-session-id`: the conversation the anomaly detectors follow. Default: `SVC_SESSION_ID`. */
  readonly sessionId?: string;
  /** `x-workspace-id` (a proxy with keys takes the workspace from the key). Default: `SVC_WORKSPACE_ID`, else the one `svc login` stored. */
  readonly workspaceId?: string;
  /** Headers sent with every chat call. */
  readonly headers?: Readonly<Record<string, string>>;
  /** How long to wait for the answer's headers, and between two pieces of its body (default 300,000 ms). */
  readonly timeoutMs?: number;
  /** The undici dispatcher to send with; default one keep-alive Agent of the client's own (closed by close()). */
  readonly dispatcher?: Dispatcher;
  /** Milliseconds now (the budget cache and breakers go by it); default Date.now. */
  readonly clock?: () => number;
  /** Environment variables to resolve the run context and the defaults from; default process.env. */
  readonly env?: NodeJS.ProcessEnv;
  /** Where to look for the git checkout; default the process's working folder. */
  readonly cwd?: string;
}

export interface ChatOptions {
  /** Further chat completion fields: tools, tool_choice, temperature, max_tokens, … (model, messages and stream are the client's). */
  readonly params?: Readonly<Record<string, unknown>>;
  /** Headers for this call only. */
  readonly headers?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
}

export interface SvcClientEvents {
  /** The request was steered: a tool call substituted, a corrective card, a decide note. */
  hijack: HijackEvent;
  /** The policy refused the request or withheld its answer; chat throws a VerdictError too. */
  kill: Verdict;
}
export type SvcClientEvent = keyof SvcClientEvents;

const httpUrl = z.url({ protocol: /^https?$/ });
const optionsSchema = z.object({
  apiKey: z.string().trim().min(1, 'apiKey is required').max(4096),
  baseUrl: httpUrl.optional(),
  controlPlaneUrl: httpUrl.optional(),
  harness: z.string().min(1).max(64).optional(),
  sessionId: z.string().min(1).max(256).optional(),
  workspaceId: z.string().min(1).max(128).optional(),
  timeoutMs: z.number().int().positive().optional(),
});

/** `http://host:4000/v1/` → `http://host:4000`. */
function proxyOrigin(url: string): string {
  return withoutTrailingSlashes(url).replace(/\/v1$/, '');
}

const EVENT_STREAM = /^text\/event-stream\b/i;

function textOf(content: string | null | undefined | ReadonlyArray<{ text?: string | undefined; refusal?: string | undefined }>): string {
  if (typeof content === 'string') return content;
  if (content === null || content === undefined) return '';
  return content.map((p) => p.text ?? '').join('');
}

/**
 * The data-plane client: chat through the local proxy, with the proxy's policy outcomes raised as
 * `hijack` and `kill` events (a kill also throws VerdictError), the workspace budget, circuit
 * breakers for tasks, and the run's context. See docs/client.md.
 */
export class SvcClient {
  readonly baseUrl: string;
  readonly controlPlaneUrl: string;
  /** Branch, pull request, CI run and `~/.svc/config.json` (the local cap), resolved when the client was made. */
  readonly context: RunContext;
  private readonly apiKey: string;
  private readonly identity: Record<string, string>;
  private readonly extraHeaders: Readonly<Record<string, string>>;
  private readonly timeoutMs: number;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly clock: () => number;
  private readonly budget: BudgetCache;
  private readonly listeners: { [E in SvcClientEvent]: Set<(payload: SvcClientEvents[E]) => void> } = { hijack: new Set(), kill: new Set() };

  constructor(options: SvcClientOptions) {
    const parsed = optionsSchema.safeParse(options);
    if (!parsed.success) throw new InvalidOptionsError(`invalid client options: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'options'}: ${i.message}`).join('; ')}`);
    const opts = parsed.data;
    const env = options.env ?? process.env;
    this.context = resolveContext({ env, cwd: options.cwd });
    const stored = readStoredCredentials(env);
    this.apiKey = opts.apiKey;
    this.baseUrl = proxyOrigin(opts.baseUrl ?? DEFAULT_PROXY_URL);
    this.controlPlaneUrl = withoutTrailingSlashes(opts.controlPlaneUrl ?? (env.SVC_CONTROL_PLANE_URL || undefined) ?? stored?.controlPlaneUrl ?? DEFAULT_CONTROL_PLANE_URL);
    const session = opts.sessionId ?? (env.SVC_SESSION_ID || undefined);
    const workspace = opts.workspaceId ?? (env.SVC_WORKSPACE_ID || undefined) ?? stored?.workspaceId;
    this.identity = {
      'x-svc-harness': opts.harness ?? 'svc-client',
      ...(session === undefined ? {} : { 'x-session-id': session }),
      ...(workspace === undefined ? {} : { 'x-workspace-id': workspace }),
    };
    this.extraHeaders = options.headers ?? {};
    this.timeoutMs = opts.timeoutMs ?? 300_000;
    this.ownsDispatcher = options.dispatcher === undefined;
    this.dispatcher = options.dispatcher ?? new Agent({ keepAliveTimeout: 10_000 });
    this.clock = options.clock ?? Date.now;
    this.budget = new BudgetCache(() => this.fetchBudget(), this.clock);
  }

  /** Calls `listener` on each `hijack` or `kill`; returns a function that stops it. */
  on<E extends SvcClientEvent>(event: E, listener: (payload: SvcClientEvents[E]) => void): () => void {
    const set = Object.hasOwn(this.listeners, event) ? (this.listeners[event] as Set<(payload: SvcClientEvents[E]) => void>) : undefined;
    if (set === undefined) throw new InvalidOptionsError(`unknown event '${String(event)}': the client raises 'hijack' and 'kill'`);
    set.add(listener);
    return () => this.off(event, listener);
  }

  off<E extends SvcClientEvent>(event: E, listener: (payload: SvcClientEvents[E]) => void): void {
    if (Object.hasOwn(this.listeners, event)) (this.listeners[event] as Set<(payload: SvcClientEvents[E]) => void>).delete(listener);
  }

  /** One chat completion through the proxy. Throws VerdictError (after the `kill` event) when the policy blocks it. */
  async chat(model: string, messages: readonly OpenAIMessage[], opts: ChatOptions = {}): Promise<ChatResult> {
    const res = await this.send(model, messages, false, opts);
    const budget = this.budget.learn(res.headers);
    const text = await this.readBody(res.body, opts.signal);
    const traceId = traceIdOf(res.headers);
    const enforcement = enforcementOf(res.headers);
    if (res.statusCode >= 400) throw this.refusal(errorFromResponse(res.statusCode, res.headers, text));
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new InvalidResponseError(`the chat answer is not JSON: ${text.slice(0, 200)}`, { status: res.statusCode, traceId });
    }
    const parsed = chatCompletionSchema.safeParse(json);
    if (!parsed.success) throw new InvalidResponseError(`the chat answer is not a chat completion: ${z.prettifyError(parsed.error)}`, { status: res.statusCode, traceId });
    const answer = parsed.data;
    const choice = answer.choices[0]!;
    const content = textOf(choice.message.content);
    if (enforcement === 'KILL') {
      // The answer was withheld: what came is the notice that replaced it.
      throw this.refusal(new VerdictError(withheldVerdict(traceId, withheldNotice(content) ?? (content || 'the gateway withheld this response'), res.statusCode)));
    }
    const hijack = enforcement === 'HIJACK' ? this.raise('hijack', hijackOf(traceId, governanceNotices(content))) : null;
    const toolCalls = (choice.message.tool_calls ?? []).map((c) => ({ id: c.id, type: 'function' as const, function: { name: c.function.name, arguments: c.function.arguments } }));
    return {
      text: content,
      message: {
        role: 'assistant',
        content: typeof choice.message.content === 'string' || choice.message.content === null ? choice.message.content : content,
        ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        ...(typeof choice.message.refusal === 'string' ? { refusal: choice.message.refusal } : {}),
      },
      toolCalls,
      finishReason: choice.finish_reason ?? null,
      usage: answer.usage ? { inputTokens: answer.usage.prompt_tokens, outputTokens: answer.usage.completion_tokens } : null,
      model: answer.model ?? null,
      traceId,
      enforcement,
      hijack,
      budget,
    };
  }

  /** A streamed chat completion through the proxy; see ChatStream. Refusals raise `kill` and throw as chat's do. */
  stream(model: string, messages: readonly OpenAIMessage[], opts: ChatOptions = {}): ChatStream {
    return new ChatStream(() => this.streamChunks(model, messages, opts));
  }

  /**
   * The workspace's spend headroom: from a 30-second cache, refreshed by the `X-Svc-Budget-*`
   * headers of every chat answer, else from the control plane's `GET /api/v1/budget`.
   */
  checkBudget(): Promise<BudgetStatus> {
    return this.budget.check();
  }

  /** A circuit breaker for tasks of one type, on the client's clock unless it names its own. */
  breaker<T>(opts: BreakerOptions<T>): CircuitBreaker<T> {
    return new CircuitBreaker<T>({ clock: this.clock, ...opts });
  }

  /** Closes the client's connections (not a dispatcher it was given). */
  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  private async *streamChunks(model: string, messages: readonly OpenAIMessage[], opts: ChatOptions): AsyncGenerator<ChatDelta, ChatResult, undefined> {
    const res = await this.send(model, messages, true, opts);
    const budget = this.budget.learn(res.headers);
    const traceId = traceIdOf(res.headers);
    const enforcement = enforcementOf(res.headers);
    if (res.statusCode >= 400) throw this.refusal(errorFromResponse(res.statusCode, res.headers, await this.readBody(res.body, opts.signal)));
    if (!EVENT_STREAM.test(headerValue(res.headers, 'content-type') ?? '')) {
      res.body.destroy();
      throw new InvalidResponseError(`a streamed chat answer came as ${headerValue(res.headers, 'content-type') ?? 'no content type'}`, { status: res.statusCode, traceId });
    }
    const assembler = new ChunkAssembler();
    const framer = new SseFramer();
    let hijack: HijackEvent | null = null;
    let ended = false;
    try {
      const body = res.body as AsyncIterable<Buffer>;
      const iterator = body[Symbol.asyncIterator]();
      for (;;) {
        let step: IteratorResult<Buffer>;
        try {
          step = await iterator.next();
        } catch (err) {
          throw this.transportFailure(err, opts.signal, traceId);
        }
        const events = step.done === true ? framer.flush() : framer.push(step.value);
        if (events !== null) {
          for (const ev of parseSseEvents(events)) {
            if (ev.data === null) continue;
            if (ev.data.error !== undefined || ev.name === 'error') throw this.refusal(errorFromStreamEvent(ev.data, traceId));
            const chunk = chatChunkSchema.safeParse(ev.data);
            if (!chunk.success) throw new InvalidResponseError(`a streamed chunk is not a chat completion chunk: ${z.prettifyError(chunk.error)}`, { status: res.statusCode, traceId });
            const text = assembler.add(chunk.data);
            yield { text, finishReason: chunk.data.choices[0]?.finish_reason ?? null, raw: ev.data };
          }
        }
        if (step.done === true) break;
      }
      ended = true;
      const withheld = withheldNotice(assembler.text);
      if (withheld !== null) throw this.refusal(new VerdictError(withheldVerdict(traceId, withheld, res.statusCode)));
      const notices = governanceNotices(assembler.text);
      if (enforcement === 'HIJACK' || notices.length > 0) hijack = this.raise('hijack', hijackOf(traceId, notices));
      return {
        text: assembler.text,
        message: assembler.message,
        toolCalls: assembler.toolCalls,
        finishReason: assembler.finishReason,
        usage: assembler.usage,
        model: assembler.model,
        traceId,
        enforcement: hijack !== null ? 'HIJACK' : enforcement,
        hijack,
        budget,
      };
    } finally {
      if (!ended) {
        res.body.destroy();
        // Read only in part: a steer the header announced is still reported.
        if (enforcement === 'HIJACK' && hijack === null) this.raise('hijack', hijackOf(traceId, governanceNotices(assembler.text)));
      }
    }
  }

  private async send(model: string, messages: readonly OpenAIMessage[], stream: boolean, opts: ChatOptions): Promise<Dispatcher.ResponseData> {
    if (typeof model !== 'string' || model.trim() === '') throw new InvalidOptionsError('chat needs a model name');
    if (!Array.isArray(messages)) throw new InvalidOptionsError('chat needs an array of messages');
    const body = { ...opts.params, model, messages, stream, ...(stream ? { stream_options: { include_usage: true } } : {}) };
    const headers = {
      'user-agent': `svc-client/${VERSION}`,
      ...this.identity,
      ...this.extraHeaders,
      ...opts.headers,
      authorization: `Bearer ${this.apiKey}`,
      'content-type': 'application/json',
      accept: stream ? 'text/event-stream' : 'application/json',
    };
    try {
      return await request(`${this.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        dispatcher: this.dispatcher,
        signal: opts.signal,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
    } catch (err) {
      throw this.transportFailure(err, opts.signal, null);
    }
  }

  private async fetchBudget(): Promise<BudgetStatus> {
    let res: Dispatcher.ResponseData;
    try {
      res = await request(`${this.controlPlaneUrl}/api/v1/budget`, {
        method: 'GET',
        headers: { authorization: `Bearer ${this.apiKey}`, accept: 'application/json', 'user-agent': `svc-client/${VERSION}` },
        dispatcher: this.dispatcher,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
    } catch (err) {
      throw this.transportFailure(err, undefined, null, this.controlPlaneUrl);
    }
    const text = await this.readBody(res.body, undefined);
    if (res.statusCode >= 400) throw errorFromResponse(res.statusCode, res.headers, text);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new InvalidResponseError(`the control plane's budget is not JSON: ${text.slice(0, 200)}`, { status: res.statusCode });
    }
    const parsed = budgetBodySchema.safeParse(json);
    if (!parsed.success) throw new InvalidResponseError(`the control plane's budget is not in the expected shape: ${z.prettifyError(parsed.error)}`, { status: res.statusCode });
    return budgetFromControlPlane(parsed.data, this.clock());
  }

  private async readBody(body: Dispatcher.ResponseData['body'], signal: AbortSignal | undefined): Promise<string> {
    try {
      return await body.text();
    } catch (err) {
      throw this.transportFailure(err, signal, null);
    }
  }

  /** A caller's abort stays what it is; anything else on the wire means the gateway could not be reached. */
  private transportFailure(err: unknown, signal: AbortSignal | undefined, traceId: string | null, target = this.baseUrl): unknown {
    if (signal?.aborted === true || err instanceof SvcClientError) return err;
    return new GatewayUnreachableError(`the gateway at ${target} could not be reached or stopped answering: ${(err as Error).message}`, { cause: err, traceId });
  }

  /** Raises `kill` for a verdict; returns the error to throw. */
  private refusal(err: SvcClientError): SvcClientError {
    if (err instanceof VerdictError) this.raise('kill', err.verdict);
    return err;
  }

  private raise<E extends SvcClientEvent>(event: E, payload: SvcClientEvents[E]): SvcClientEvents[E] {
    for (const listener of this.listeners[event] as Set<(payload: SvcClientEvents[E]) => void>) {
      try {
        listener(payload);
      } catch (err) {
        // A listener's failure must not change the call's outcome.
        process.emitWarning(`an svc client '${event}' listener threw: ${(err as Error).message}`);
      }
    }
    return payload;
  }
}
