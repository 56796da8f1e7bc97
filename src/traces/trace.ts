import type { Finding } from '../policy/inspect.js';
import type { AnomalyMode, AnomalyResponse } from '../policy/anomaly/anomaly-policy.js';
import type { TracedAnomalyFinding } from '../policy/anomaly/guard.js';
import type { AttemptRecord } from '../proxy/upstream-call.js';
import type { ToolCallRecord } from '../proxy/tool-calls-review.js';
import type { ResponseRuleRecord } from '../proxy/response-rules.js';

/** What the anomaly detectors found over the request's tool-call history, and what the gateway did. */
export interface AnomalyTrace {
  mode: AnomalyMode;
  findings: readonly TracedAnomalyFinding[];
  /** The strongest response drawn, or null when the findings were only recorded. */
  response: AnomalyResponse | null;
  /**
   * `steered`: the card went upstream with the request; `reasked`: the model's answer continued
   * the loop, was discarded, and the model was asked again with the card; `answer_accepted`: a
   * reask whose first answer broke out of the loop; `killed`: refused.
   */
  outcome: 'steered' | 'reasked' | 'answer_accepted' | 'killed' | null;
  /** The corrective card as it was sent (or would have been, for a reask the model's answer made unnecessary). */
  card: string | null;
}

export type Enforcement = 'BYPASS' | 'ENHANCE' | 'HIJACK' | 'KILL';

/** An MCP `tools/call` through `svc mcp wrap`: which tool of which server, and what became of it (never its arguments). */
export interface McpCallTrace {
  readonly server: string;
  readonly tool: string;
  /** allow, redacted (arguments or result), warned (a finding that did not refuse), block, hold, or failed (the server answered an error or went away). */
  readonly verdict: 'allow' | 'redacted' | 'warned' | 'block' | 'hold' | 'failed';
  /** The seed's refusal code (SERVER_NOT_ALLOWED, …), when one applies. */
  readonly code: string | null;
  /** The setting or detector that refused or changed the call. */
  readonly rule: string | null;
}

/** One record per request, refusals included. */
export interface TraceRecord {
  id: string;
  /** Start of the request, RFC 3339. */
  time: string;
  workspace: string;
  session: string | null;
  harness: string | null;
  route: string;
  model: string | null;
  provider: string | null;
  stream: boolean;
  status: number;
  /** Milliseconds from intake to the last byte (or the refusal). */
  latencyMs: number;
  /** Milliseconds from intake to the first upstream byte relayed, when there was one. */
  ttfbMs: number | null;
  /**
   * The proxy's own milliseconds up to the response's status line, the upstream's time excluded
   * (the `x-svc-overhead-ms` header); null when no response went out.
   */
  overheadMs: number | null;
  inputTokens: number | null;
  outputTokens: number | null;
  costUsd: number | null;
  enforcement: Enforcement;
  /** The error code of a refusal or failure. */
  error: string | null;
  /**
   * The incident the control plane recorded this refusal under before the refusal went out (the
   * refusal names it, and the control plane does not count the trace again); null otherwise.
   */
  incidentId: string | null;
  /** What the policy engine found in the request and the response (never the matched text). */
  findings: readonly Finding[];
  /** ff_shadow_enforcement was on: `findings` say what would have happened; nothing was changed. */
  shadow: boolean;
  /** The provider reported no usage; tokens and cost are the proxy's estimate. */
  usageEstimated: boolean;
  /**
   * The model is not in the catalog (nor in contractedRates): reservation and cost are at its
   * provider's conservative price, not its own.
   */
  priceEstimated: boolean;
  /** Conditions worth a look that did not refuse the request (a soft cap passed, the shared store unreachable). */
  warnings: readonly string[];
  /** Upstream attempts that failed and were retried or fell back; the final attempt is this record's model, provider and status. */
  attempts: readonly AttemptRecord[];
  /** The anomaly detectors' part; null when they are off, found nothing, or the route carries no conversation. */
  anomaly: AnomalyTrace | null;
  /** The exact response cache's part: `hit`, `miss`, or null when it was not consulted. */
  cache: 'hit' | 'miss' | null;
  /** Tool calls the model emitted that a rule refused, each substituted by a notice (enforcement HIJACK). */
  toolCalls: readonly ToolCallRecord[];
  /** The WASM rule that refused the request itself, when one did. */
  requestRule: { readonly rule: string; readonly action: 'block' | 'hold'; readonly reason: string } | null;
  /** The WASM rule that refused a (non-streamed) response, when one did. */
  responseRule: ResponseRuleRecord | null;
  /** Set on the record of an MCP tool call (route `mcp:tools/call`). */
  mcp?: McpCallTrace;
}
