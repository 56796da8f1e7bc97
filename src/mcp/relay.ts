import { performance } from 'node:perf_hooks';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { traceId } from '../lib/ids.js';
import type { Logger } from '../lib/logger.js';
import type { Finding } from '../policy/inspect.js';
import type { McpCallTrace, TraceRecord } from '../traces/trace.js';
import { mcpCallTrace } from './call-trace.js';
import type { GovernedSession } from './governed-session.js';

type Json = Record<string, unknown>;

/** Pages of a server's own tool listing read at most (a server that never ends its cursor chain). */
const MAX_TOOL_PAGES = 100;
const OWN_REQUEST_TIMEOUT_MS = 10_000;

export interface McpRelayOptions {
  /** Towards the harness (the MCP client). */
  readonly harness: Transport;
  /** Towards the real server. */
  readonly server: Transport;
  /** The workspace's policy for this session. */
  readonly policy: GovernedSession;
  /** Receives one trace record per `tools/call`. */
  readonly record: (trace: TraceRecord) => void;
  readonly logger: Logger;
  readonly session: string | null;
  readonly harnessName: string | null;
}

/** A harness request forwarded to the server and not yet answered. */
interface Pending {
  readonly method: string;
  readonly call?: CallInFlight;
  /** The request's `_meta.progressToken`: the server's progress for it travels with the request (its own HTTP stream). */
  readonly progressToken?: string | number;
  /** A `tools/list` asking for a later page. */
  readonly paged?: boolean;
}

interface CallInFlight {
  readonly id: string;
  readonly tool: string;
  readonly startedAt: number;
  readonly started: number;
  readonly outcome: 'allow' | 'redacted';
  readonly findings: readonly string[];
  readonly warnings: readonly string[];
}

/**
 * Relays JSON-RPC messages between a harness and an MCP server, one message at a time and in
 * order in each direction: requests, responses, notifications (progress, cancellation, list
 * changes, logging) and the server's own requests (sampling, elicitation, roots) pass untouched.
 * Only two things are read: a `tools/call` is judged before it is forwarded (a refusal is
 * answered to the harness as a tool error result and never reaches the server), and the server's
 * answers to `tools/list` and `tools/call` are reviewed before the harness sees them.
 */
export class McpRelay {
  private toServer: Promise<void> = Promise.resolve();
  private toHarness: Promise<void> = Promise.resolve();
  private readonly pending = new Map<RequestId, Pending>();
  private serverGone = false;
  /** Requests the relay itself sent the server (its own tool listings), by id: their answers stay here. */
  private readonly own = new Map<RequestId, (message: Json) => void>();
  private ownIds = 0;
  /** Whether the server declared tools in its answer to `initialize`. */
  private serverHasTools = false;

  constructor(private readonly options: McpRelayOptions) {
    options.harness.onmessage = (message) => (this.toServer = this.toServer.then(() => this.fromHarness(message)).catch((err: unknown) => this.failed('towards the server', err)));
    options.server.onmessage = (message) => this.sendToHarness(() => this.fromServer(message), this.requestOfProgress(message));
  }

  /** Resolves once every message read so far has been passed on. */
  async drained(): Promise<void> {
    await this.toServer;
    await this.toHarness;
  }

  /**
   * The server is gone: every request it will now never answer gets a JSON-RPC error, so the
   * harness is not left waiting, and later requests are answered the same way.
   */
  serverClosed(reason: string): Promise<void> {
    this.serverGone = true;
    for (const [id, pending] of this.pending) this.answerClosed(id, pending, reason);
    this.pending.clear();
    for (const answer of this.own.values()) answer({ error: { message: reason } });
    this.own.clear();
    return this.drained();
  }

  private async fromHarness(message: JSONRPCMessage): Promise<void> {
    const m = message as Json;
    if (typeof m.method === 'string' && m.id !== undefined) {
      const id = m.id as RequestId;
      if (this.serverGone) return this.answerClosed(id, { method: m.method }, 'the MCP server has exited');
      if (m.method === 'tools/call') {
        const call = await this.judge(id, (m.params ?? {}) as Json);
        if (call === null) return;
        const pending = { method: m.method, call: call.inFlight, progressToken: progressTokenOf(m) };
        this.pending.set(id, pending);
        return this.forwardRequest(id, pending, call.message(message));
      }
      const paged = m.method === 'tools/list' && ((m.params ?? {}) as Json).cursor !== undefined;
      const pending = { method: m.method, progressToken: progressTokenOf(m), paged };
      this.pending.set(id, pending);
      if (!this.serverGone) await this.forwardRequest(id, pending, message);
      return;
    } else if (m.method === 'notifications/cancelled') {
      this.cancelled(((m.params ?? {}) as Json).requestId as RequestId);
    }
    if (this.serverGone) return;
    await this.options.server.send(message);
    // The tool set is checked against its pin before the first call, not only when the harness lists it.
    if (m.method === 'notifications/initialized' && this.serverHasTools) this.checkToolSet();
  }

  /**
   * Lists the server's tools itself (every page) and reports them to the registry; calls wait
   * for the registry's word. Done once the session is initialised and whenever the server says
   * its list changed, so a server that changes its tools mid-session is caught before its next call.
   */
  private checkToolSet(): void {
    this.options.policy.observeTools(
      this.listTools().catch((err: unknown) => {
        this.options.logger.warn({ server: this.options.policy.server, err: (err as Error).message }, 'the MCP server\'s tools could not be listed for the registry');
        return null;
      }),
    );
  }

  private async listTools(): Promise<unknown[]> {
    const tools: unknown[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const answer = await this.ownRequest('tools/list', cursor === undefined ? {} : { cursor });
      const result = (answer.result ?? {}) as Json;
      if (!Array.isArray(result.tools)) throw new Error(`the server answered tools/list with ${answer.error === undefined ? 'no tools' : JSON.stringify(answer.error)}`);
      tools.push(...result.tools);
      if (typeof result.nextCursor !== 'string' || result.nextCursor === '') return tools;
      cursor = result.nextCursor;
    }
    return tools;
  }

  /** A request of the relay's own; a server that leaves it unanswered for OWN_REQUEST_TIMEOUT_MS fails it (calls do not wait on it forever). */
  private ownRequest(method: string, params: Json): Promise<Json> {
    const id = `svc-governance-${++this.ownIds}`;
    return new Promise<Json>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.own.delete(id);
        reject(new Error(`no answer to ${method} in ${OWN_REQUEST_TIMEOUT_MS} ms`));
      }, OWN_REQUEST_TIMEOUT_MS);
      timer.unref();
      this.own.set(id, (answer) => {
        clearTimeout(timer);
        resolve(answer);
      });
      this.options.server.send({ jsonrpc: '2.0', id, method, params } as JSONRPCMessage).catch((err: unknown) => {
        clearTimeout(timer);
        this.own.delete(id);
        reject(err as Error);
      });
    });
  }

  /** A request the server cannot be sent (an HTTP upstream down) is answered to the harness at once. */
  private async forwardRequest(id: RequestId, pending: Pending, message: JSONRPCMessage): Promise<void> {
    try {
      await this.options.server.send(message);
    } catch (err) {
      if (this.pending.get(id) !== pending) return;
      this.pending.delete(id);
      this.answerClosed(id, pending, `the MCP server could not be reached: ${(err as Error).message}`);
    }
  }

  private async fromServer(message: JSONRPCMessage): Promise<JSONRPCMessage | null> {
    const m = message as Json;
    if (m.method === 'notifications/tools/list_changed') this.checkToolSet();
    if (m.method !== undefined || m.id === undefined) return message;
    const id = m.id as RequestId;
    const own = this.own.get(id);
    if (own !== undefined) {
      this.own.delete(id);
      own(m);
      return null;
    }
    const pending = this.pending.get(id);
    if (pending === undefined) return message;
    this.pending.delete(id);
    const result = m.result as Json | undefined;
    if (pending.method === 'initialize' && result !== undefined) this.serverHasTools = typeof result.capabilities === 'object' && result.capabilities !== null && 'tools' in result.capabilities;
    if (pending.method === 'tools/list' && result !== undefined) {
      // A whole listing (not one page of several) is the tool set the model is about to see.
      if (!pending.paged && Array.isArray(result.tools) && result.nextCursor === undefined) this.options.policy.observeTools(result.tools);
      const listed = await this.options.policy.rewriteToolList(result);
      for (const { tool, finding } of listed.injections) {
        this.options.logger.warn({ server: this.options.policy.server, tool, detector: finding.detector, action: finding.action }, 'prompt injection in an MCP tool description');
      }
      return { ...message, result: listed.result } as JSONRPCMessage;
    }
    if (pending.call === undefined) return message;
    if (result === undefined) {
      const error = (m.error ?? {}) as Json;
      this.options.policy.answered(pending.call.id, { content: [{ type: 'text', text: String(error.message ?? 'error') }], isError: true });
      this.trace(pending.call, { verdict: 'failed', code: null, rule: null }, [], ['the server answered an error']);
      return message;
    }
    this.options.policy.answered(pending.call.id, result);
    const review = await this.options.policy.reviewResult(pending.call.tool, result);
    const findings = review.findings;
    if (review.blockedBy !== null) {
      this.trace(pending.call, { verdict: 'block', code: null, rule: review.blockedBy }, findings);
    } else {
      const changed = pending.call.outcome === 'redacted' || findings.some((f) => f.action === 'redact');
      const verdict = changed ? 'redacted' : findings.length > 0 ? 'warned' : 'allow';
      this.trace(pending.call, { verdict, code: null, rule: changed ? (pending.call.findings[0] ?? findings[0]?.detector ?? null) : null }, findings);
    }
    return { ...message, result: review.result } as JSONRPCMessage;
  }

  /** The judged call to forward (its arguments possibly redacted), or null when it was answered here. */
  private async judge(id: RequestId, params: Json): Promise<{ inFlight: CallInFlight; message: (original: JSONRPCMessage) => JSONRPCMessage } | null> {
    const startedAt = Date.now();
    const started = performance.now();
    const tool = typeof params.name === 'string' ? params.name : '';
    const args = typeof params.arguments === 'object' && params.arguments !== null ? (params.arguments as Json) : undefined;
    const trace = traceId(startedAt);
    const decision = await this.options.policy.judgeCall(tool, args, {
      workspace: this.options.policy.workspaceId,
      model: '',
      harness: this.options.harnessName,
      session: this.options.session,
      traceId: trace,
    });
    const inFlight: CallInFlight = { id: trace, tool, startedAt, started, outcome: 'allow', findings: [], warnings: [] };
    if (decision.kind === 'refuse') {
      this.sendToHarness(() => ({ jsonrpc: '2.0', id, result: decision.result }) as JSONRPCMessage);
      this.trace(inFlight, { verdict: decision.outcome, code: decision.code, rule: decision.rule }, []);
      return null;
    }
    for (const warning of decision.warnings) this.options.logger.warn({ server: this.options.policy.server, tool }, warning);
    const forwarded: CallInFlight = { ...inFlight, outcome: decision.outcome, findings: decision.findings, warnings: decision.warnings };
    if (decision.outcome !== 'redacted') return { inFlight: forwarded, message: (original) => original };
    return {
      inFlight: forwarded,
      message: (original) => ({ ...original, params: { ...params, arguments: decision.arguments } }) as JSONRPCMessage,
    };
  }

  private cancelled(id: RequestId | undefined): void {
    if (id === undefined) return;
    const pending = this.pending.get(id);
    if (pending === undefined) return;
    this.pending.delete(id);
    if (pending.call !== undefined) this.trace(pending.call, { verdict: 'failed', code: null, rule: null }, [], ['cancelled by the harness']);
  }

  private answerClosed(id: RequestId, pending: Pending, reason: string): void {
    if (pending.call !== undefined) this.trace(pending.call, { verdict: 'failed', code: null, rule: null }, [], [reason]);
    this.sendToHarness(() => ({ jsonrpc: '2.0', id, error: { code: ErrorCode.ConnectionClosed, message: `svc: ${reason}` } }) as JSONRPCMessage);
  }

  /** The pending request a progress notification from the server belongs to, if any. */
  private requestOfProgress(message: JSONRPCMessage): RequestId | undefined {
    const m = message as Json;
    if (m.method !== 'notifications/progress') return undefined;
    const token = ((m.params ?? {}) as Json).progressToken;
    for (const [id, pending] of this.pending) if (pending.progressToken !== undefined && pending.progressToken === token) return id;
    return undefined;
  }

  private sendToHarness(make: () => JSONRPCMessage | null | Promise<JSONRPCMessage | null>, relatedRequestId?: RequestId): void {
    const options = relatedRequestId === undefined ? undefined : { relatedRequestId };
    this.toHarness = this.toHarness
      .then(async () => {
        const message = await make();
        return message === null ? undefined : this.options.harness.send(message, options);
      })
      .catch((err: unknown) => this.failed('towards the harness', err));
  }

  private trace(call: CallInFlight, outcome: Omit<McpCallTrace, 'server' | 'tool'>, findings: readonly Finding[], warnings: readonly string[] = []): void {
    this.options.record(
      mcpCallTrace({
        id: call.id,
        startedAt: call.startedAt,
        latencyMs: Math.round((performance.now() - call.started) * 1000) / 1000,
        workspace: this.options.policy.workspaceId,
        session: this.options.session,
        harness: this.options.harnessName,
        mcp: { server: this.options.policy.server, tool: call.tool, ...outcome },
        findings,
        warnings: [...call.warnings, ...warnings],
      }),
    );
  }

  private failed(direction: string, err: unknown): void {
    this.options.logger.error({ err, direction }, 'an MCP message could not be relayed');
  }
}

function progressTokenOf(request: Json): string | number | undefined {
  const meta = ((request.params ?? {}) as Json)._meta;
  const token = meta !== null && typeof meta === 'object' ? (meta as Json).progressToken : undefined;
  return typeof token === 'string' || typeof token === 'number' ? token : undefined;
}
