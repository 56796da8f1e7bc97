import uWS, { type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from '@trufflesuite/uws-js-unofficial';
import { z } from 'zod';
import {
  ConfigError,
  InvalidRequestError,
  NotFoundError,
  PayloadTooLargeError,
  PolicyBlockedError,
  RuleDeniedError,
  ShuttingDownError,
  SvcError,
  UnsupportedMediaTypeError,
} from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';
import { SlotSet } from '../lib/slot-set.js';
import { listenExclusive, listenShared } from '../lib/listen.js';
import { VERSION } from '../lib/version.js';
import type { RuntimeConfig } from '../config/runtime.js';
import type { ModelCatalog } from '../upstream/catalog.js';
import { PoolRegistry } from '../upstream/pools.js';
import { assertSupported, routeProvider } from '../upstream/resolve.js';
import { buildTarget, resolvePlatformKeys } from '../upstream/target.js';
import type { TraceOutlet } from '../traces/sink.js';
import { PolicyEngine } from '../policy/engine.js';
import type { Finding } from '../policy/inspect.js';
import { buildPolicyConfig, type PolicyConfig } from '../policy/policy-config.js';
import { HardCapExceededError, hardCapEnforced, type Store } from '../state/index.js';
import { budgetHeaders, conservativePrice, maxOutputTokens, pricingFor, reservationUsd } from './metering.js';
import { Admission } from './admission.js';
import { OutgoingBody, resolveAttemptTarget, type PreparedTarget } from './attempt.js';
import { UpstreamCall, type RetryHook } from './upstream-call.js';
import { decodeCached, encodeCached, type CachedResponse } from './response-cache.js';
import { attemptTargets, effectiveRetry, type AttemptTarget } from '../upstream/retry-plan.js';
import { authenticate } from './auth.js';
import { Exchange, type ExchangeHooks, type KillIncident } from './exchange.js';
import { upstreamRequestHeaders } from './forward-headers.js';
import { isJsonContentType, readBody, readHeaders } from './intake.js';
import { readRequestBody } from './request-body.js';
import { RelayHandler, type RelayRequest } from './relay.js';
import { AnomalyResponder, type AnomalyPlan } from './anomaly-response.js';
import type { ToolCallContext, ToolCallJudge } from '../policy/tool-judge.js';
import { mcpPolicyFrom, type McpPolicy } from '../policy/mcp.js';
import type { ToolCallPolicy } from '../policy/tool-verdict.js';
import type { HoldsService } from './holds-client.js';
import { WasmRules } from '../policy/wasm/wasm-rules.js';
import { wasmDir } from '../policy/wasm/rule-files.js';
import { carriesToolCalls } from './tool-calls.js';
import { ToolCallReview } from './tool-calls-review.js';
import type { ResponseReview } from './response-rules.js';
import { PROVIDER_ROUTES, type ProviderRoute } from './routes.js';
import type { DecideRuntime } from '../decide/runtime.js';
import { answerDecisionTraffic, DECISION_ROUTES, type DecisionRoute } from './decisions.js';
import { ProxyMetrics, type MetricsSnapshot } from './metrics.js';
import type { SessionJudge } from '../policy/anomaly/sessions.js';
import { responseNotesFor } from './decide-hooks.js';

export interface ProxyServerOptions {
  host: string;
  port: number;
  config: RuntimeConfig;
  catalog: ModelCatalog;
  sink: TraceOutlet;
  logger: Logger;
  /** Worker threads for the policy engine. */
  threads: number;
  /** Budgets and the response cache: a RedisStore for a fleet, else the embedded MemoryStore. */
  store: Store;
  /** Wall clock for budget periods (UTC days and months); tests move it past midnight. */
  clock?: () => number;
  env?: NodeJS.ProcessEnv;
  /** The policy worker module; tests substitute one that crashes. */
  policyWorkerUrl?: URL;
  /** Decide rules (loaded at start); closed with the server. */
  decide?: DecideRuntime;
  /**
   * Builds the decide runtime for another set of config-supplied decide rules; with it, decide
   * rules follow each config set with setConfig.
   */
  loadDecide?: (configRecords: readonly unknown[]) => Promise<DecideRuntime>;
  /**
   * Holds with the control plane: where a held tool call is recorded and an approval of it looked
   * up, and where refused calls are reported. Without it (no control plane) a held call stays
   * held and its notice says no hold id could be recorded.
   */
  holds?: HoldsService;
  /** Where sessions' anomaly memories are kept; by default in this server. */
  sessions?: SessionJudge;
  /**
   * The proxy's I/O threads as one: `/health` and `/metrics` answer for all of them. Without it
   * they answer for this server alone.
   */
  cluster?: ClusterView;
  /** Listen on a port other I/O threads of this process listen on too (SO_REUSEPORT). */
  sharedPort?: boolean;
  /** Report process-wide metrics (Node's, the store's, the trace sink's); off in the other I/O threads. Default true. */
  processMetrics?: boolean;
}

/** What one I/O thread counts for `/health`: summed over threads. */
export interface ThreadState {
  inflight: number;
  /** Requests this thread has taken since it started. */
  requests: number;
  workers: ReturnType<PolicyEngine['state']>;
  wasm: ReturnType<WasmRules['health']>;
}

/** The proxy's I/O threads seen from one of them. */
export interface ClusterView {
  /** The `/health` body for every thread, the request asking for it excluded from `inflight`. */
  health(): Promise<Record<string, unknown>>;
  metrics(): Promise<{ contentType: string; body: string }>;
}

/**
 * The envelope every provider route needs; the rest of the body is the provider's business (and
 * not copied: a loose object would copy every other field of every request).
 */
const providerBodySchema = z.object({
  model: z.string().min(1).max(256),
  stream: z.boolean().optional(),
});

const ANTHROPIC_DEFAULTS: ReadonlyArray<readonly [string, string]> = [
  ['content-type', 'application/json'],
  ['anthropic-version', '2023-06-01'],
];
const OPENAI_DEFAULTS: ReadonlyArray<readonly [string, string]> = [['content-type', 'application/json']];

/** Paths harnesses GET to see that the gateway is up (HEAD on any path is answered the same way). */
const PROBE_PATHS = ['/', '/api/hello'];

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

/** What every attempt of a request sends with. */
interface UpstreamRequest {
  raw: Buffer;
  maxOutputTokens: number;
  responsePolicy: PolicyConfig | null;
  notes: RelayRequest['notes'];
  toolCalls: ToolCallReview | null;
  responseRules: ResponseReview | null;
}

/**
 * Everything derived from one configuration, built once when it is applied and captured by each
 * request at intake, so a request never mixes two config versions however long it runs.
 */
interface ActiveConfig {
  readonly config: RuntimeConfig;
  readonly policy: PolicyConfig;
  readonly admission: Admission;
  readonly platformKeys: ReadonlyMap<string, string>;
  readonly decide: DecideRuntime | null;
  /** Everything that judges the tool calls a model emits, asked in this order. */
  readonly toolJudges: readonly ToolCallJudge[];
  /** The workspace's MCP server lists, applied to `mcp__<server>__<tool>` calls. */
  readonly mcp: McpPolicy;
}

/** The port-4000 data plane: uWS at the edge, undici to the providers. */
export class ProxyServer implements ExchangeHooks {
  private active: ActiveConfig;
  private readonly app: TemplatedApp;
  private readonly pools: PoolRegistry;
  private listenSocket: us_listen_socket | null = null;
  private readonly inflight = new SlotSet<Exchange>();
  private requests = 0;
  private draining = false;
  private readonly startedAt = Date.now();
  private readonly env: NodeJS.ProcessEnv;
  private readonly engine: PolicyEngine;
  private readonly anomalies: AnomalyResponder;
  private readonly wasmRules: WasmRules;
  /** Decide runtimes replaced by a config change, each closed once the requests holding it are done. */
  private readonly retiring = new Set<Promise<void>>();
  private readonly metrics: ProxyMetrics;
  port = 0;

  constructor(private readonly options: ProxyServerOptions) {
    this.env = options.env ?? process.env;
    this.anomalies = new AnomalyResponder(options.sessions);
    this.engine = new PolicyEngine({
      threads: options.threads,
      inlineMaxBytes: options.config.limits.inlineInspectMaxBytes,
      logger: options.logger,
      workerUrl: options.policyWorkerUrl,
    });
    const { dir, ...wasm } = options.config.wasm;
    this.wasmRules = new WasmRules({ ...wasm, dir: wasmDir(this.env, dir), logger: options.logger });
    this.active = this.activate(options.config, options.decide ?? null);
    if (options.config.openMode && !isLoopback(options.host)) {
      throw new ConfigError(`no virtual key is configured: the proxy runs open and may only bind a loopback address, not ${options.host}`);
    }
    const limits = options.config.limits;
    this.pools = new PoolRegistry({
      connections: limits.upstreamConnections,
      headersTimeoutMs: limits.upstreamHeadersTimeoutMs,
      bodyTimeoutMs: limits.upstreamBodyTimeoutMs,
    });
    this.metrics = new ProxyMetrics(new Set([...PROVIDER_ROUTES.map((r) => r.path), ...Object.values(DECISION_ROUTES), '/v1/models']), {
      engine: () => this.engine.state(),
      store: () => this.options.store.health(),
      wasm: () => {
        const health = this.wasmRules.health();
        return { rules: health.rules.length, failed: health.failed.length, fuelExhausted: health.runner?.fuelExhausted ?? 0, remembered: health.runner?.remembered ?? 0 };
      },
      tracesDropped: () => this.options.sink.droppedCount,
      inflight: () => this.inflight.size,
    }, options.processMetrics ?? true);
    this.app = uWS.App();
    for (const route of PROVIDER_ROUTES) this.app.post(route.path, (res, req) => this.handleProviderRoute(res, req, route));
    for (const [name, path] of Object.entries(DECISION_ROUTES) as Array<[DecisionRoute, string]>) {
      this.app.post(path, (res, req) => this.handleDecisionRoute(res, req, name, path));
    }
    this.app.get('/v1/models', (res, req) => this.handleModels(res, req));
    this.app.get('/health', (res, req) => this.handleHealth(res, req));
    this.app.get('/metrics', (res, req) => this.handleMetrics(res, req));
    // Harnesses check that their base URL answers before the first model call (Claude Code sends
    // HEAD /api/hello); these are not model calls.
    this.app.head('/*', (res, req) => this.handleProbe(res, req));
    for (const path of PROBE_PATHS) this.app.get(path, (res, req) => this.handleProbe(res, req));
    this.app.any('/*', (res, req) => this.handleNotFound(res, req));
  }

  /**
   * Swaps the whole configuration at once; requests already running keep the one they started with.
   * When its decide rules differ from those in force (and the server can load decide rules), the
   * new rules' runtime is built first and the swap happens when it is ready (the returned promise);
   * otherwise at once. Calls must not overlap.
   */
  setConfig(config: RuntimeConfig): Promise<void> {
    const current = this.active.decide;
    if (this.options.loadDecide === undefined || JSON.stringify(config.decideRules) === JSON.stringify(this.active.config.decideRules)) {
      this.active = this.activate(config, current);
      return Promise.resolve();
    }
    return this.options.loadDecide(config.decideRules).then((decide) => {
      this.active = this.activate(config, decide);
      if (current !== null) this.retire(current);
    });
  }

  /** Compiles what a configuration implies, logging (once) the parts of it that are ignored. */
  private activate(config: RuntimeConfig, decide: DecideRuntime | null): ActiveConfig {
    const policy = buildPolicyConfig({ version: config.version, settings: config.settings, localPii: config.piiDetectors, env: this.env });
    this.engine.prepare(policy);
    const admission = new Admission(config);
    for (const entry of admission.egress.invalid) this.options.logger.warn({ entry }, 'egress allow entry ignored: not a host, .suffix or CIDR');
    const toolJudges = decide === null ? [this.wasmRules] : [this.wasmRules, decide.tools];
    const mcp = mcpPolicyFrom(config.settings, config.mcpServers);
    return Object.freeze({ config, policy, admission, platformKeys: resolvePlatformKeys(config, this.env), decide, toolJudges, mcp });
  }

  /** Closes a replaced decide runtime once every request that was running when it was replaced has finished. */
  private retire(decide: DecideRuntime): void {
    const holders = [...this.inflight];
    const done = (async () => {
      while (holders.some((ex) => this.inflight.has(ex))) await new Promise((r) => setTimeout(r, 100));
      await decide.close();
    })()
      .catch((err: unknown) => this.options.logger.error({ err }, 'closing a replaced decide runtime failed'))
      .finally(() => this.retiring.delete(done));
    this.retiring.add(done);
  }

  private now(): number {
    return this.options.clock?.() ?? Date.now();
  }

  private readonly inspect = (policy: PolicyConfig, parsed: unknown, raw: Buffer) => this.engine.inspect(policy, parsed, raw);

  get currentConfig(): RuntimeConfig {
    return this.active.config;
  }

  get inflightCount(): number {
    return this.inflight.size;
  }

  async listen(): Promise<number> {
    await this.wasmRules.start();
    const socket = await (this.options.sharedPort === true ? listenShared : listenExclusive)(this.app, this.options.host, this.options.port);
    this.listenSocket = socket;
    this.port = uWS.us_socket_local_port(socket);
    return this.port;
  }

  /**
   * Stops accepting, lets in-flight requests finish for up to `drainMs`, then cuts the rest.
   */
  async close(drainMs = this.active.config.limits.drainTimeoutMs): Promise<void> {
    this.stopAccepting();
    const deadline = Date.now() + drainMs;
    while (this.inflight.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    if (this.inflight.size > 0) {
      this.options.logger.warn({ inflight: this.inflight.size }, 'drain bound reached; closing remaining requests');
      for (const ex of [...this.inflight]) ex.cut('shutting_down');
    }
    // Idle keep-alive sockets would otherwise hold the event loop open; this build has the method
    // but its typings do not declare it.
    (this.app as TemplatedApp & { close(): void }).close();
    await this.pools.close();
    await this.engine.close();
    await this.active.decide?.close();
    await Promise.all(this.retiring);
    await this.wasmRules.close();
    await this.options.store.close();
    await this.options.sink.close();
  }

  /** Refuses new requests (503 while draining) and closes the listening socket. */
  stopAccepting(): void {
    this.draining = true;
    if (this.listenSocket !== null) {
      uWS.us_listen_socket_close(this.listenSocket);
      this.listenSocket = null;
    }
  }

  /** Inspection worker threads running now. */
  get inspectionWorkers(): number {
    return this.engine.state().running;
  }

  /** What this thread adds to `/health`. */
  threadState(): ThreadState {
    return { inflight: this.inflight.size, requests: this.requests, workers: this.engine.state(), wasm: this.wasmRules.health() };
  }

  /** This thread's metrics, for the thread that renders every thread's. */
  metricsSnapshot(): Promise<MetricsSnapshot> {
    return this.metrics.snapshot();
  }

  /** The `/health` body of one server, or of several threads' states summed (the first is this one's). */
  healthBody(threads: readonly ThreadState[] = [this.threadState()]): Record<string, unknown> {
    const [own, ...others] = threads as [ThreadState, ...ThreadState[]];
    const sum = (pick: (t: ThreadState) => number) => threads.reduce((n, t) => n + pick(t), 0);
    return {
      status: this.draining ? 'draining' : 'ok',
      version: VERSION,
      configVersion: this.active.config.version,
      uptimeSeconds: Math.round((Date.now() - this.startedAt) / 1000),
      // The health request itself is not counted.
      inflight: sum((t) => t.inflight) - 1,
      ioThreads: threads.map((t) => ({ inflight: t.inflight, requests: t.requests })),
      workers: {
        threads: sum((t) => t.workers.threads),
        running: sum((t) => t.workers.running),
        completed: sum((t) => t.workers.completed),
        workerFailures: sum((t) => t.workers.workerFailures),
      },
      // The embedded memory store is "no key-value store configured".
      store: storeHealth(this.options.store),
      wasm:
        others.length === 0 || threads.every((t) => t.wasm.runner === null)
          ? own.wasm
          : {
              ...own.wasm,
              runner: {
                completed: sum((t) => t.wasm.runner?.completed ?? 0),
                fuelExhausted: sum((t) => t.wasm.runner?.fuelExhausted ?? 0),
                instances: Math.max(...threads.map((t) => t.wasm.runner?.instances ?? 0)),
                remembered: sum((t) => t.wasm.runner?.remembered ?? 0),
              },
            },
    };
  }

  settled(exchange: Exchange, trace: ReturnType<Exchange['toTrace']>): void {
    this.inflight.delete(exchange);
    this.anomalies.settle(exchange, trace);
    // Settling never rejects (a store fault queues it); the request path does not wait for it.
    if (exchange.metered) {
      void this.options.store.settle({ workspace: exchange.workspace, id: exchange.id, actualUsd: exchange.costUsd ?? 0, now: this.now() });
    }
    if (exchange.traced) {
      this.options.sink.record(trace);
      this.metrics.observe(trace);
    }
  }

  recordKill(trace: ReturnType<Exchange['toTrace']>): Promise<KillIncident | null> | undefined {
    return this.options.holds?.recordKill(trace);
  }

  private open(res: HttpResponse, req: HttpRequest, route: string, wire: ProviderRoute['wire']): Exchange {
    const ex = new Exchange(res, route, req.getQuery() ?? '', wire, readHeaders(req), this.active.config.workspaceId, this);
    this.inflight.add(ex);
    this.requests++;
    return ex;
  }

  private handleProviderRoute(res: HttpResponse, req: HttpRequest, route: ProviderRoute): void {
    this.admit(res, req, route.path, route.wire, (ex, active, passthroughKey, body) => this.forward(ex, route, active, passthroughKey, body));
  }

  private handleDecisionRoute(res: HttpResponse, req: HttpRequest, name: DecisionRoute, path: string): void {
    this.admit(res, req, path, 'openai', async (ex, active, _passthroughKey, body) => {
      const context = { decide: active.decide, policy: active.policy, settings: active.config.decisionTraffic, inspect: this.inspect };
      await answerDecisionTraffic(ex, name, body, context).catch((err: unknown) => this.refuse(ex, err));
    });
  }

  /** Intake shared by every POST route: auth, content type, a bounded body; then `then` with the body. */
  private admit(
    res: HttpResponse,
    req: HttpRequest,
    path: string,
    wire: ProviderRoute['wire'],
    then: (ex: Exchange, active: ActiveConfig, passthroughKey: string | undefined, body: Buffer) => Promise<void>,
  ): void {
    const ex = this.open(res, req, path, wire);
    const active = this.active;
    const { config } = active;
    if (ex.headers.framingError !== null) {
      ex.fail(new InvalidRequestError(ex.headers.framingError), true);
      return;
    }
    try {
      if (this.draining) throw new ShuttingDownError();
      const caller = authenticate(config, ex.headers);
      ex.workspace = caller.workspaceId;
      ex.keySha256 = caller.keySha256;
      if (!isJsonContentType(ex.headers.contentType)) throw new UnsupportedMediaTypeError(ex.headers.contentType);
      const limit = config.limits.maxBodyBytes;
      if (ex.headers.contentLength !== undefined && ex.headers.contentLength > limit) throw new PayloadTooLargeError(limit);
      readBody(
        res,
        { max: limit, shareAbove: config.limits.inlineInspectMaxBytes, announced: ex.headers.contentLength },
        () => ex.gone,
        (body) => void then(ex, active, caller.passthroughKey, body),
        (err) => ex.fail(err),
      );
    } catch (err) {
      this.refuse(ex, err);
    }
  }

  private async forward(ex: Exchange, route: ProviderRoute, active: ActiveConfig, passthroughKey: string | undefined, raw: Buffer): Promise<void> {
    const { config, policy } = active;
    try {
      // The policy version, the WASM rules and the decide rules are part of the key: an answer judged under others is not reused.
      const cacheKeyPrefix =
        config.settings.featureFlags?.ff_response_cache_exact === true
          ? `${route.kind}@${policy.version}@${this.wasmRules.generation}@${active.decide?.fingerprint ?? '-'}`
          : null;
      const read = await readRequestBody(this.engine, raw, { policy, cacheKeyPrefix, wantsText: this.wasmRules.judgesRequests });
      if (ex.gone) return;
      const envelope = providerBodySchema.safeParse(read.head);
      if (!envelope.success) {
        const issue = envelope.error.issues[0]!;
        const field = issue.path.join('.') || null;
        throw new InvalidRequestError(field ? `Invalid '${field}': ${issue.message}` : 'The request body must be a JSON object.', field);
      }
      const { model, stream } = envelope.data;
      ex.model = model;
      ex.stream = stream === true && route.streams;
      const retry = effectiveRetry(config.upstreamRetry, config.settings.upstreamRetry);
      const targets = attemptTargets(model, retry);
      const first = this.prepare(ex, active, route, targets[0]!, passthroughKey);
      const outputLimit = maxOutputTokens(read.head);

      const reservation = this.options.store.reserve({
        workspace: ex.workspace,
        id: ex.id,
        amountUsd: reservationUsd(first.pricing, raw, outputLimit),
        dailyCapUsd: config.caps.dailyUsd,
        monthlyCapUsd: config.caps.monthlyUsd,
        enforce: hardCapEnforced(config.settings),
        now: this.now(),
      });
      ex.metered = true;
      const cacheKey = read.cacheKey;
      const inspection = read.inspection;
      const caller: ToolCallContext = { workspace: ex.workspace, model, harness: ex.headers.harness, session: ex.headers.session, traceId: ex.id };
      const [budget, cached, ruling] = await Promise.all([
        reservation,
        cacheKey === null ? undefined : this.options.store.cacheGet(ex.workspace, cacheKey),
        this.wasmRules.judgeRequestText(read.text, caller),
      ]);
      if (ex.gone) return;
      ex.extraHeaders = budgetHeaders(budget.budget, config.caps);
      if (budget.degraded) ex.warnings.push('store_degraded');
      ex.findings.push(...inspection.findings);
      ex.shadow = inspection.shadow;
      if (inspection.verdict === 'blocked') {
        ex.enforcement = 'KILL';
        throw policyRefusal(inspection.blockedBy!);
      }
      if (ruling !== null && ruling.action !== 'allow') {
        ex.requestRule = { rule: ruling.rule!, action: ruling.action, reason: ruling.reason };
        if (policy.shadow) ex.shadow = true;
        else {
          ex.enforcement = 'KILL';
          throw new RuleDeniedError(ruling.rule!, ruling.action, ruling.reason);
        }
      }
      const anomaly = await this.anomalies.plan(ex, route.kind, policy, inspection, read.redacted ?? raw);
      if (ex.gone) return;
      // A steered or reasked request is not the request the cached answer was given to.
      const hit = cached === undefined || anomaly.steered !== null || anomaly.reask !== null ? undefined : decodeCached(cached);
      if (hit !== undefined) {
        // A cached answer costs nothing: its reservation settles at zero, and a cap does not refuse it.
        this.replayCached(ex, hit);
        return;
      }
      if (!budget.allowed) {
        ex.enforcement = 'KILL';
        throw new HardCapExceededError(budget);
      }
      if (budget.overCap) ex.warnings.push(`over_${budget.cap ?? 'daily'}_cap`);
      // A steered request was modified too; HIJACK says more.
      if (inspection.verdict === 'modified' && ex.enforcement === 'BYPASS') ex.enforcement = 'ENHANCE';
      if (cacheKey !== null) {
        ex.cache = 'miss';
        ex.extraHeaders = [...ex.extraHeaders, ['x-svc-cache', 'miss']];
      }
      const cache =
        cacheKey === null
          ? null
          : (response: CachedResponse) => void this.options.store.cacheSet(ex.workspace, cacheKey, encodeCached(response), config.limits.cacheTtlMs);

      // The closure takes `whole`, not `read`: what a closure names stays alive with the request,
      // and `read` holds the inspection, whose anomaly report holds the body's first turns.
      const whole = read.whole;
      const outgoing = new OutgoingBody(anomaly.steered ?? read.redacted ?? raw, model, () =>
        anomaly.steered !== null ? (JSON.parse(anomaly.steered) as object) : whole(),
      );
      // What every attempt sends with; what differs by attempt is a separate argument of send, never
      // `{ ...request, reask }` (bench/README.md, "Garbage collection").
      const request: UpstreamRequest = {
        raw,
        maxOutputTokens: outputLimit,
        responsePolicy: route.inspectsResponse && Object.keys(policy.pii).length > 0 ? policy : null,
        notes: responseNotesFor(active.decide, ex, route, policy.shadow, this.options.logger),
        toolCalls: carriesToolCalls(route.kind)
          ? ToolCallReview.of(this.toolPolicy(ex, active), caller, {
              shadow: policy.shadow,
              report: this.options.holds?.report,
              record: (r) => ex.recordToolCall(r),
              unjudged: (call, reason) => {
                ex.warnings.push(`tool_call_unjudged:${call.name}`);
                this.options.logger.warn({ traceId: ex.id, tool: call.name, reason }, 'tool call passed unjudged (failure policy open)');
              },
            })
          : null,
        responseRules:
          route.inspectsResponse && this.wasmRules.judgesResponses
            ? { shadow: policy.shadow, judge: (parsed: unknown) => this.wasmRules.judgeResponse(parsed, caller) }
            : null,
      };
      const reasked = anomalyReaskBody(anomaly, model);
      new UpstreamCall(ex, targets, retry, (target, hook) => {
        const prepared = target === targets[0] ? first : this.prepare(ex, active, route, target, passthroughKey);
        const upstreamModel = prepared.resolved.upstreamModel;
        const reask =
          anomaly.reask === null
            ? null
            : (answer: Buffer) =>
                this.anomalies.reask(ex, route.kind, anomaly.reask!, answer, () =>
                  this.send(ex, config, route, prepared, reasked!.for(upstreamModel), request, { cache: null, reask: null }, hook),
                );
        this.send(ex, config, route, prepared, outgoing.for(upstreamModel), request, { cache: anomaly.steered === null ? cache : null, reask }, hook);
      }).start();
    } catch (err) {
      this.refuse(ex, err);
    }
  }

  /** The tool-call verdict's rules for one request: the active config's judges and MCP lists, and the hold ledger scoped to the caller. */
  private toolPolicy(ex: Exchange, active: ActiveConfig): ToolCallPolicy {
    const holds = this.options.holds?.ledger({ bypassEnabled: active.config.settings.reviewHoldBypassEnabled === true, requesterKeySha256: ex.keySha256 }) ?? null;
    return { judges: active.toolJudges, mcp: active.mcp, holds };
  }

  /** Answers from the exact cache: a stream is replayed as a stream. */
  private replayCached(ex: Exchange, hit: CachedResponse): void {
    ex.cache = 'hit';
    ex.extraHeaders = [...ex.extraHeaders, ['x-svc-cache', 'hit']];
    ex.usage = { inputTokens: hit.inputTokens ?? undefined, outputTokens: hit.outputTokens ?? undefined };
    ex.costUsd = 0;
    const headers: Array<[string, string]> = [['content-type', hit.contentType]];
    if (!hit.stream) {
      ex.reply(hit.status, headers, hit.body);
      return;
    }
    ex.begin(hit.status, [...headers, ['cache-control', 'no-cache']], null);
    ex.write(hit.body);
    ex.end();
  }

  /**
   * Resolves one attempt target and runs the cheap checks on it (allowed model, provider
   * supported, credential provisioned, egress). Throws the refusal.
   */
  private prepare(ex: Exchange, active: ActiveConfig, route: ProviderRoute, target: AttemptTarget, passthroughKey: string | undefined): PreparedTarget {
    const { config, admission } = active;
    const resolved = resolveAttemptTarget(target, this.options.catalog, routeProvider(route.wire, config.unknownModels.openaiRouteProvider));
    const pricing = pricingFor(resolved, config.settings, (provider) => conservativePrice(provider, this.options.catalog, config.unknownModels.prices));
    ex.model = resolved.requested;
    ex.provider = resolved.provider.id;
    ex.priceEstimated = pricing.estimated;
    admission.checkModel(resolved);
    assertSupported(resolved.provider);
    admission.checkCredential(resolved);
    const key = active.platformKeys.get(resolved.provider.id) ?? passthroughKey;
    const upstream = buildTarget(config, resolved, route.wire, route.suffix, key, ex.query);
    const egress = admission.checkEgress(upstream.host);
    if (!egress.allowed) {
      ex.warnings.push(`egress_unlisted:${egress.host}`);
      this.options.logger.warn({ host: egress.host, traceId: ex.id }, 'egress to a host off the allow list (monitor mode)');
    }
    return { resolved, upstream, pricing };
  }

  /** Dispatches one attempt; its relay reports back to `hook` when it fails before the client saw anything. */
  private send(
    ex: Exchange,
    config: RuntimeConfig,
    route: ProviderRoute,
    prepared: PreparedTarget,
    body: Buffer | string,
    request: UpstreamRequest,
    attempt: { cache: ((response: CachedResponse) => void) | null; reask: ((answer: Buffer) => boolean) | null },
    hook: RetryHook,
  ): void {
    ex.model = prepared.resolved.requested;
    ex.provider = prepared.resolved.provider.id;
    ex.priceEstimated = prepared.pricing.estimated;
    const headers = upstreamRequestHeaders(ex.headers.all, prepared.upstream.authHeaders, route.wire === 'anthropic' ? ANTHROPIC_DEFAULTS : OPENAI_DEFAULTS);
    const relay = new RelayHandler(ex, {
      path: prepared.upstream.path,
      headers,
      body,
      headersTimeoutMs: config.limits.upstreamHeadersTimeoutMs,
      bodyTimeoutMs: config.limits.upstreamBodyTimeoutMs,
      pricing: prepared.pricing,
      estimate: { inputBytes: request.raw.length, maxOutputTokens: request.maxOutputTokens },
      kind: route.kind,
      responsePolicy: request.responsePolicy,
      inspect: this.inspect,
      retry: hook,
      cache: attempt.cache,
      reask: attempt.reask,
      notes: request.notes,
      toolCalls: request.toolCalls,
      responseRules: request.responseRules,
    });
    ex.markUpstreamSent();
    this.pools.get(prepared.upstream.origin).dispatch(
      {
        path: prepared.upstream.path,
        method: 'POST',
        headers,
        body,
        headersTimeout: config.limits.upstreamHeadersTimeoutMs,
        bodyTimeout: config.limits.upstreamBodyTimeoutMs,
      },
      relay,
    );
  }

  private refuse(ex: Exchange, err: unknown): void {
    if (err instanceof SvcError) {
      // 402, 403 and 429 from the gateway itself are governance refusals: a policy said no.
      if (err.status === 402 || err.status === 403 || err.status === 429) ex.enforcement = 'KILL';
      ex.fail(err);
      return;
    }
    this.options.logger.error({ err, traceId: ex.id }, 'unexpected error on the request path');
    ex.fail(new SvcError('Internal gateway error.', { code: 'internal_error', status: 500, type: 'api_error' }));
  }

  private handleModels(res: HttpResponse, req: HttpRequest): void {
    const ex = this.open(res, req, '/v1/models', 'openai');
    try {
      authenticate(this.active.config, ex.headers);
      const data = [...this.options.catalog.entries()].map((m) => ({ id: m.id, object: 'model', created: 0, owned_by: m.provider }));
      ex.replyJson(200, { object: 'list', data });
    } catch (err) {
      this.refuse(ex, err);
    }
  }

  private handleHealth(res: HttpResponse, req: HttpRequest): void {
    const ex = this.open(res, req, '/health', 'openai');
    // Health checks arrive every few seconds from load balancers; they are not traffic.
    ex.traced = false;
    const cluster = this.options.cluster;
    if (cluster === undefined) {
      ex.replyJson(this.draining ? 503 : 200, this.healthBody());
      return;
    }
    cluster.health().then(
      (body) => ex.replyJson(body.status === 'ok' ? 200 : 503, body),
      (err: unknown) => this.refuse(ex, err),
    );
  }

  /** Prometheus exposition of the proxy's metrics (see metrics.ts); like /health, no key and no trace. */
  private handleMetrics(res: HttpResponse, req: HttpRequest): void {
    const ex = this.open(res, req, '/metrics', 'openai');
    ex.traced = false;
    (this.options.cluster?.metrics() ?? this.metrics.render()).then(
      ({ contentType, body }) => ex.reply(200, [['content-type', contentType]], body),
      (err: unknown) => this.refuse(ex, err),
    );
  }

  /** Any HEAD, and GET of the probe paths: 200 (503 while draining), no trace. */
  private handleProbe(res: HttpResponse, req: HttpRequest): void {
    const head = req.getMethod() === 'head';
    const ex = this.open(res, req, req.getUrl(), 'openai');
    ex.traced = false;
    const status = this.draining ? 503 : 200;
    ex.reply(status, [['content-type', 'application/json']], head ? '' : JSON.stringify({ status: this.draining ? 'draining' : 'ok' }));
  }

  private handleNotFound(res: HttpResponse, req: HttpRequest): void {
    const method = req.getMethod().toUpperCase();
    const ex = this.open(res, req, req.getUrl(), 'openai');
    ex.fail(new NotFoundError(method, req.getUrl()));
  }
}

/** A 403 naming the detector and where it fired; never the matched text. */
export function policyRefusal(finding: Finding): PolicyBlockedError {
  const code = finding.detector.startsWith('pii.') ? 'dlp_blocked' : 'prompt_injection';
  return new PolicyBlockedError(`Blocked by policy: ${finding.detector} found in ${finding.where}.`, code);
}

/** The card version of a reasked request's body, per attempt model. */
function anomalyReaskBody(plan: AnomalyPlan, model: string): OutgoingBody | null {
  const reask = plan.reask;
  return reask === null ? null : new OutgoingBody(reask.body, model, () => JSON.parse(reask.body) as object);
}

function storeHealth(store: Store): ReturnType<Store['health']> | null {
  const health = store.health();
  return health.kind === 'memory' ? null : health;
}
