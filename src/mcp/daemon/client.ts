import { createConnection, type Socket } from 'node:net';
import type { Logger } from '../../lib/logger.js';
import type { ToolCallContext } from '../../policy/tool-judge.js';
import type { CallDecision, ResultReview } from '../governance.js';
import type { GovernedSession, ToolListReview } from '../governed-session.js';
import { daemonReplySchema, readLines } from './protocol.js';

interface Waiting {
  resolve(value: unknown): void;
  reject(err: Error): void;
}

/** How long connecting to the daemon may take before the wrapper governs in its own process. */
const CONNECT_TIMEOUT_MS = 2000;

/**
 * A harness session governed by the machine's MCP daemon (`SVC_MCP_PROXY_MODE=daemon`). When the
 * daemon goes away or cannot answer, the session carries on in this process (`fallback`, the same
 * governance a wrapper has in per-session mode) instead of failing the harness's calls.
 */
export class DaemonSession implements GovernedSession {
  private nextId = 1;
  private readonly waiting = new Map<number, Waiting>();
  private broken: Error | null = null;
  private local: Promise<GovernedSession> | null = null;
  /** A tool set being listed or reported: calls wait for it, as in this process. */
  private observing: Promise<unknown> = Promise.resolve();
  private workspace = '';

  private constructor(
    private readonly socket: Socket,
    readonly server: string,
    private readonly fallback: () => Promise<GovernedSession>,
    private readonly logger: Logger,
  ) {
    readLines(socket, (line) => this.received(line), () => this.fail(new Error('the daemon sent a message over the size limit')));
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => this.fail(new Error('the MCP daemon closed the connection')));
  }

  /** A session with the daemon at `path`, or null when none answers there. */
  static async connect(opts: { path: string; server: string; memberId: string | null; fallback: () => Promise<GovernedSession>; logger: Logger }): Promise<DaemonSession | null> {
    const socket = await new Promise<Socket | null>((resolve) => {
      const s = createConnection(opts.path);
      const timer = setTimeout(() => {
        s.destroy();
        resolve(null);
      }, CONNECT_TIMEOUT_MS);
      s.once('connect', () => {
        clearTimeout(timer);
        resolve(s);
      });
      s.once('error', () => {
        clearTimeout(timer);
        resolve(null);
      });
    });
    if (socket === null) return null;
    const session = new DaemonSession(socket, opts.server, opts.fallback, opts.logger);
    try {
      const hello = (await session.request({ op: 'hello', server: opts.server, memberId: opts.memberId })) as { workspaceId: string };
      session.workspace = hello.workspaceId;
      return session;
    } catch (err) {
      opts.logger.warn({ err: (err as Error).message }, 'the MCP daemon did not answer hello');
      socket.destroy();
      return null;
    }
  }

  get workspaceId(): string {
    return this.workspace;
  }

  async judgeCall(tool: string, args: Record<string, unknown> | undefined, ctx: ToolCallContext): Promise<CallDecision> {
    await this.observing;
    return this.ask('judge', { tool, args, ctx: { workspace: ctx.workspace, model: ctx.model, harness: ctx.harness, session: ctx.session, traceId: ctx.traceId } }, (s) => s.judgeCall(tool, args, ctx));
  }

  answered(callId: string, result: Record<string, unknown>): void {
    if (this.broken === null) this.socket.write(`${JSON.stringify({ op: 'answered', callId, result })}\n`);
    else void this.localSession().then((s) => s.answered(callId, result));
  }

  reviewResult(tool: string, result: Record<string, unknown>): Promise<ResultReview> {
    return this.ask('review', { tool, result }, (s) => s.reviewResult(tool, result));
  }

  rewriteToolList(result: Record<string, unknown>): Promise<ToolListReview> {
    return this.ask('list', { result }, (s) => s.rewriteToolList(result));
  }

  observeTools(listed: readonly unknown[] | Promise<readonly unknown[] | null>): void {
    this.observing = this.observing.then(async () => {
      const tools = await listed;
      if (tools !== null) await this.ask('observe', { tools }, async (s) => s.observeTools(tools));
    });
  }

  close(): void {
    this.broken ??= new Error('closed');
    this.socket.destroy();
  }

  private async ask<T>(op: string, body: Record<string, unknown>, locally: (session: GovernedSession) => Promise<T>): Promise<T> {
    if (this.broken === null) {
      try {
        return (await this.request({ op, ...body })) as T;
      } catch (err) {
        this.logger.warn({ op, err: (err as Error).message }, 'the MCP daemon could not answer: governing in this process');
      }
    }
    return locally(await this.localSession());
  }

  private localSession(): Promise<GovernedSession> {
    return (this.local ??= this.fallback());
  }

  private request(message: Record<string, unknown>): Promise<unknown> {
    if (this.broken !== null) return Promise.reject(this.broken);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.socket.write(`${JSON.stringify({ id, ...message })}\n`);
    });
  }

  private received(line: string): void {
    let reply;
    try {
      reply = daemonReplySchema.parse(JSON.parse(line));
    } catch {
      return this.fail(new Error('the daemon sent something that is not a reply'));
    }
    if (reply.id === null) return reply.ok ? undefined : this.fail(new Error(reply.error));
    const waiting = this.waiting.get(reply.id);
    if (waiting === undefined) return;
    this.waiting.delete(reply.id);
    if (reply.ok) waiting.resolve(reply.value);
    else waiting.reject(new Error(reply.error));
  }

  private fail(err: Error): void {
    this.broken ??= err;
    for (const w of this.waiting.values()) w.reject(err);
    this.waiting.clear();
    this.socket.destroy();
  }
}
