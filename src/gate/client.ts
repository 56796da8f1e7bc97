import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { readStoredCredentials } from '../machine/credentials.js';
import { appendEvents, eventLogPath } from './event-log.js';
import { withoutTrailingSlashes } from '../lib/trailing-run.js';

/** Where a gate client reaches the control plane when neither its config nor `SVC_CONTROL_PLANE_URL` says: the local one (`--dev`). */
export const DEFAULT_CONTROL_PLANE_URL = 'http://127.0.0.1:3001';

export interface GateClientConfig {
  readonly baseUrl?: string;
  readonly apiKey?: string;
  readonly workspaceId?: string;
  readonly sessionId?: string;
  /** Sent as harnessType, to attribute incidents. */
  readonly harness?: string;
  /** Whether a call is refused when the hook gate cannot give a verdict. */
  readonly failClosed?: boolean;
  readonly timeoutMs?: number;
  /** Where events wait when they cannot be reported (`svc connect` drains it); none: they are dropped. */
  readonly eventLog?: string;
}

/** The hook gate's answer: a verdict, a request it could not read (always a block), or none. */
export type HookGateAnswer =
  | {
      readonly kind: 'verdict';
      readonly verdict: 'allow' | 'block' | 'hold';
      readonly code: string | null;
      readonly reason: string | null;
      readonly rule: string | null;
      /** Which check decided (`decide`, `wasm`, `mcp`, `dlp`, …). */
      readonly source: string | null;
      readonly message: string | null;
      readonly holdId: string | null;
      readonly incidentId: string | null;
      readonly degraded: boolean;
      /** DLP detectors whose non-blocking patterns matched the arguments. */
      readonly flagged: readonly string[];
      /** An observe-only workspace's allow: what the verdict would have been. */
      readonly wouldBlock: { readonly code: string | null; readonly rule: string | null; readonly reason: string | null } | null;
    }
  | { readonly kind: 'invalid'; readonly message: string }
  | { readonly kind: 'unavailable'; readonly reason: string };

export interface HookEventInput {
  readonly type: string;
  readonly toolName?: string | null;
  readonly code?: string | null;
  readonly rule?: string | null;
  readonly reason?: string | null;
  readonly holdId?: string | null;
  readonly incidentId?: string | null;
  readonly [detail: string]: unknown;
}

/**
 * Loads node:http or node:https when a request is first made: a hook process with no control
 * plane to ask loads neither (a few ms each). Not `import()`: the hook runs bundled as a script,
 * which has no loader for one.
 */
const load = createRequire(import.meta.url);

/** A control plane's answer past this many bytes is not read: none of its answers comes near it. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/** Why a request failed, as the socket said it: both addresses' reasons when a name had two and neither answered. */
function failureOf(err: unknown): string {
  if (err instanceof AggregateError && err.message === '') return err.errors.map((e: Error) => e.message).join('; ');
  return (err as Error).message;
}

/**
 * One request to the control plane with node:http (node:https for an https URL), answered with
 * its status and body text. Not `fetch`: Node loads its fetch on first use, about 30 ms of CPU
 * for a process that lives for one tool call. A redirect is an answer like any other (never
 * followed: the key is never carried elsewhere); the whole exchange is bounded by `timeoutMs`.
 */
function send(url: URL, method: string, headers: Record<string, string>, body: string | undefined, timeoutMs: number): Promise<{ status: number; text: string }> {
  const { request } = load(url.protocol === 'https:' ? 'node:https' : 'node:http') as typeof import('node:http');
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (err: Error | null, answer?: { status: number; text: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err === null) resolve(answer!);
      else {
        req.destroy();
        reject(err);
      }
    };
    const req = request(url, { method, headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_ANSWER_BYTES) settle(new Error(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`));
        else chunks.push(chunk);
      });
      res.on('end', () => settle(null, { status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      // An answer cut short: the response errs ('aborted') and closes without its end.
      const cut = () => settle(new Error('the connection closed before the answer was complete'));
      res.on('error', cut);
      res.on('close', cut);
    });
    const timer = setTimeout(() => settle(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    req.on('error', (err) => settle(err));
    req.end(body);
  });
}

function wouldBlockOf(w: Record<string, unknown>): { code: string | null; rule: string | null; reason: string | null } {
  const text = (k: string) => (typeof w[k] === 'string' ? (w[k] as string) : null);
  return { code: text('code'), rule: text('rule'), reason: text('reason') };
}

/** The gate's link to the control plane (seed 002 "Gate client configuration"). */
export class GateClient {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly workspaceId: string;
  readonly sessionId: string;
  readonly harness: string;
  readonly failClosed: boolean;
  readonly timeoutMs: number;
  readonly eventLog: string | undefined;
  /** How events reach the control plane; tests and hooks may wait for it. */
  private reporting: Promise<void> = Promise.resolve();

  constructor(config: GateClientConfig = {}) {
    this.baseUrl = withoutTrailingSlashes(config.baseUrl ?? process.env.SVC_CONTROL_PLANE_URL ?? DEFAULT_CONTROL_PLANE_URL);
    this.apiKey = config.apiKey ?? '';
    this.workspaceId = config.workspaceId ?? '';
    this.sessionId = config.sessionId ?? '';
    this.harness = config.harness ?? 'generic';
    this.failClosed = config.failClosed ?? true;
    this.timeoutMs = config.timeoutMs ?? 2000;
    this.eventLog = config.eventLog;
  }

  /**
   * From `SVC_CONTROL_PLANE_URL`, `SVC_API_KEY`, `SVC_WORKSPACE_ID`, `SVC_SESSION_ID`, falling back to
   * the key, workspace and control plane `svc login` stored under `~/.svc/`. Throws without a session id.
   */
  static fromEnv(env: NodeJS.ProcessEnv = process.env, overrides: GateClientConfig = {}): GateClient {
    const stored = readStoredCredentials(env);
    const sessionId = overrides.sessionId ?? env.SVC_SESSION_ID;
    if (!sessionId) throw new Error('GateClient.fromEnv needs a session id: set SVC_SESSION_ID');
    return new GateClient({
      baseUrl: env.SVC_CONTROL_PLANE_URL || stored?.controlPlaneUrl || DEFAULT_CONTROL_PLANE_URL,
      apiKey: env.SVC_API_KEY || stored?.apiKey || '',
      workspaceId: env.SVC_WORKSPACE_ID || stored?.workspaceId || '',
      eventLog: eventLogPath(env),
      ...overrides,
      sessionId,
    });
  }

  /** POST /hook-gate within the client's timeout. Never rejects. */
  async hookGate(toolName: string, toolInput: unknown): Promise<HookGateAnswer> {
    let status: number;
    let body: Record<string, unknown>;
    try {
      const answer = await this.post('/hook-gate', { toolName, toolInput, sessionId: this.sessionId || null, harnessType: this.harness, gateSource: 'sdk' });
      status = answer.status;
      body = answer.body;
    } catch (err) {
      return { kind: 'unavailable', reason: `the control plane could not be reached: ${(err as Error).message}` };
    }
    if (status === 400) return { kind: 'invalid', message: String((body.error as { message?: unknown } | undefined)?.message ?? 'the request could not be read') };
    const verdict = body.verdict;
    if (status >= 300 || (verdict !== 'allow' && verdict !== 'block' && verdict !== 'hold')) {
      const code = (body.error as { code?: unknown } | undefined)?.code ?? body.code;
      return { kind: 'unavailable', reason: `the hook gate answered ${status}${code ? ` ${String(code)}` : ''} without a verdict` };
    }
    const text = (k: string) => (typeof body[k] === 'string' ? (body[k] as string) : null);
    return {
      kind: 'verdict',
      verdict,
      code: text('code'),
      reason: text('reason'),
      rule: text('rule'),
      source: text('source'),
      message: text('message'),
      holdId: text('holdId'),
      incidentId: text('incidentId'),
      degraded: body.degraded === true,
      flagged: Array.isArray(body.flagged) ? body.flagged.filter((f): f is string => typeof f === 'string') : [],
      wouldBlock: typeof body.wouldBlock === 'object' && body.wouldBlock !== null ? wouldBlockOf(body.wouldBlock as Record<string, unknown>) : null,
    };
  }

  /** Reports gate decisions (POST /hook-events), best effort: a failure is dropped, never thrown. */
  report(events: readonly HookEventInput[]): Promise<void> {
    if (events.length === 0) return this.reporting;
    const at = new Date().toISOString();
    const stamped = events.map((e) => ({ eventId: randomUUID(), at, gateSource: 'sdk', harness: this.harness, sessionId: this.sessionId || null, ...e }));
    // Not delivered (unreachable, 5xx, a revoked key): kept in the event log for svc connect to send later.
    const keep = async () => {
      if (this.eventLog !== undefined) await appendEvents(this.eventLog, stamped);
    };
    this.reporting = this.reporting.then(() =>
      this.post('/hook-events', { events: stamped }).then(
        (answer) => (answer.status >= 200 && answer.status < 300 ? undefined : answer.status === 400 ? undefined : keep()),
        keep,
      ),
    );
    return this.reporting;
  }

  /** Resolves once every report made so far has been sent (or given up). */
  flush(): Promise<void> {
    return this.reporting;
  }

  /** An unexpired approval of this exact call (GET /decisions/approved-bypasses); throws when it cannot tell. */
  async approvedBypass(key: { rule: string; tool: string; argumentsSha256: string }): Promise<{ holdId: string } | null> {
    const query = new URLSearchParams(key);
    const answer = await this.call('GET', `/decisions/approved-bypasses?${query}`);
    if (answer.status !== 200) throw new Error(`the control plane answered ${answer.status}`);
    const first = (answer.body.bypasses as Array<{ holdId: string; expiresAt: string }> | undefined)?.find((b) => Date.parse(b.expiresAt) > Date.now());
    return first === undefined ? null : { holdId: first.holdId };
  }

  /** The SOP register's rules (GET /policy/resolve); throws when it cannot get them. */
  async sopRules(): Promise<unknown[]> {
    const answer = await this.call('GET', '/policy/resolve');
    if (answer.status !== 200 || !Array.isArray(answer.body.rules)) throw new Error(`the control plane answered ${answer.status}`);
    return answer.body.rules as unknown[];
  }

  /** Records a hold (POST /decisions); throws when it cannot. */
  async recordHold(hold: { tool: string; rule: string; reason: string; arguments: unknown; argumentsSha256: string }): Promise<{ holdId: string; incidentId: string | null }> {
    const answer = await this.post('/decisions', { ...hold, source: 'gate', sessionId: this.sessionId || null, harness: this.harness.slice(0, 64), origin: 'gate' });
    if (answer.status !== 200 && answer.status !== 201) throw new Error(`the control plane answered ${answer.status}`);
    return { holdId: String(answer.body.id), incidentId: typeof answer.body.incidentId === 'string' ? answer.body.incidentId : null };
  }

  private post(path: string, body: unknown) {
    return this.call('POST', path, body);
  }

  private async call(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
    let answer: { status: number; text: string };
    try {
      const headers: Record<string, string> = { authorization: `Bearer ${this.apiKey}` };
      if (body !== undefined) headers['content-type'] = 'application/json';
      answer = await send(new URL(`${this.baseUrl}/api/v1${path}`), method, headers, body === undefined ? undefined : JSON.stringify(body), this.timeoutMs);
    } catch (err) {
      throw new Error(failureOf(err));
    }
    const text = answer.text;
    let parsed: Record<string, unknown> = {};
    try {
      parsed = text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
    } catch {
      parsed = {};
    }
    return { status: answer.status, body: parsed };
  }
}
