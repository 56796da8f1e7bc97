import type { Finding } from '../policy/inspect.js';
import type { ToolCallContext } from '../policy/tool-judge.js';
import type { CallDecision, McpGovernance, ResultReview } from './governance.js';
import { McpSessionAnomalies } from './session-anomalies.js';

/** A `tools/list` answer as the model may see it, and the injections acted on or reported. */
export interface ToolListReview {
  readonly result: Record<string, unknown>;
  readonly injections: ReadonlyArray<{ readonly tool: string; readonly finding: Finding }>;
}

/**
 * The workspace's MCP policy for one harness session with one server: what the relay asks. Answered
 * in this process (`LocalSession`) or by the machine's MCP daemon over its socket (`DaemonSession`).
 */
export interface GovernedSession {
  readonly server: string;
  readonly workspaceId: string;
  /** The verdict on a `tools/call` before it reaches the server. Never rejects. */
  judgeCall(tool: string, args: Record<string, unknown> | undefined, ctx: ToolCallContext): Promise<CallDecision>;
  /** The server's answer to a forwarded call (for the anomaly detectors). */
  answered(callId: string, result: Record<string, unknown>): void;
  /** The server's answer to a call, reviewed before the harness sees it. */
  reviewResult(tool: string, result: Record<string, unknown>): Promise<ResultReview>;
  /** A `tools/list` answer rewritten before the model sees it. */
  rewriteToolList(result: Record<string, unknown>): Promise<ToolListReview>;
  /** The tool set the server lists now, checked against its pin; calls wait for the registry's word. */
  observeTools(listed: readonly unknown[] | Promise<readonly unknown[] | null>): void;
}

/** A session governed in this process: the governance of its server, and the session's own calls for the anomaly detectors. */
export class LocalSession implements GovernedSession {
  private readonly anomalies = new McpSessionAnomalies();

  constructor(private readonly governance: McpGovernance) {}

  get server(): string {
    return this.governance.server;
  }

  get workspaceId(): string {
    return this.governance.workspaceId;
  }

  judgeCall(tool: string, args: Record<string, unknown> | undefined, ctx: ToolCallContext): Promise<CallDecision> {
    return this.governance.judgeCall(tool, args, ctx, this.anomalies);
  }

  answered(callId: string, result: Record<string, unknown>): void {
    this.anomalies.answered(callId, result);
  }

  async reviewResult(tool: string, result: Record<string, unknown>): Promise<ResultReview> {
    return this.governance.reviewResult(tool, result);
  }

  async rewriteToolList(result: Record<string, unknown>): Promise<ToolListReview> {
    return this.governance.rewriteToolList(result);
  }

  observeTools(listed: readonly unknown[] | Promise<readonly unknown[] | null>): void {
    this.governance.observeTools(listed);
  }
}
