import { createHash } from 'node:crypto';
import type { Logger } from '../../lib/logger.js';
import { wasmRulesSchema } from '../../config/proxy-config.js';
import { readEngineConfig } from '../../decide/engine-config.js';
import { DecideEngine } from '../../decide/evaluate.js';
import { readPins } from '../../decide/pins.js';
import { compileRecords } from '../../decide/sop-loader.js';
import { DecideToolJudge } from '../../decide/tool-judge.js';
import type { ToolCallJudge } from '../../policy/tool-judge.js';
import { WasmRuleRunner } from '../../policy/wasm/runner.js';
import { WasmModuleJudge } from '../../policy/wasm/tool-calls.js';
import type { Queryable } from '../db/database.js';
import { livePolicies } from '../policies/store.js';
import { wasmRules } from '../wasm-rules/store.js';

const WASM = wasmRulesSchema.parse({});
const PAGE_BYTES = 65536;

interface Cached<T> {
  readonly fingerprint: string;
  readonly value: Promise<T>;
}

interface DecideJudge {
  readonly judge: DecideToolJudge;
  readonly engine: DecideEngine;
}

export interface HookGateRulesOptions {
  readonly logger: Logger;
  /** Where the decide engine and pins are read from (`~/.svc/decide/`, `SVC_DECIDE_*`). */
  readonly env: NodeJS.ProcessEnv;
  /** Workspaces whose compiled rules are kept (least recently used go first). */
  readonly maxWorkspaces?: number;
}

const fingerprintOf = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex');

/**
 * A workspace's stored WASM rules and the decide rules of its enabled policies, as the judges the
 * tool-call verdict asks: the same code a gateway runs. Each workspace's judges are built once per
 * set of rules (a rule write changes the set) and kept for the next call. WASM rules run metered
 * on the control plane's thread with the gateway's defaults (wasm.fuel per rule and call, 16 MiB,
 * fail closed). Decide rules use the control plane machine's own decide engine and pins; without
 * an engine, enforcing rules answer GOVERNANCE_UNAVAILABLE and shadow ones are only logged.
 */
export class HookGateRules {
  private runnerInstance: WasmRuleRunner | null = null;
  private readonly wasm = new Map<string, Cached<WasmModuleJudge>>();
  private readonly decide = new Map<string, Cached<DecideJudge>>();
  private closed = false;

  constructor(private readonly options: HookGateRulesOptions) {}

  /** The judges of the workspace's rules, in the gateway's order (WASM, then decide). */
  async judges(q: Queryable, workspaceId: string): Promise<ToolCallJudge[]> {
    const [rules, policies] = await Promise.all([wasmRules(q, workspaceId, false), livePolicies(q, workspaceId, true)]);
    const records = policies.flatMap((p) => p.decide_rules);
    const judges: ToolCallJudge[] = [];
    if (rules.length > 0) {
      // The modules themselves are read only when the set changed.
      const fingerprint = fingerprintOf(rules.map((r) => [r.name, r.priority, r.sha256]));
      const build = async () => {
        const full = await wasmRules(q, workspaceId, true);
        const modules = full.map((r) => ({ name: r.name, priority: r.priority, sha256: r.sha256, bytes: new Uint8Array(Buffer.from(r.wasm!, 'base64')) }));
        const judge = await WasmModuleJudge.build(modules, this.runner(), WASM.failurePolicy === 'closed');
        for (const u of judge.unloaded) this.options.logger.warn({ workspaceId, rule: u.name, error: u.error }, 'a stored WASM rule does not load; the hook gate skips it');
        return judge;
      };
      judges.push(await this.cached(this.wasm, workspaceId, fingerprint, build, () => undefined));
    }
    if (records.length > 0) {
      const fingerprint = fingerprintOf(records);
      const built = await this.cached(this.decide, workspaceId, fingerprint, () => this.buildDecide(records), (d) => d.engine.close());
      judges.push(built.judge);
    }
    return judges;
  }

  async close(): Promise<void> {
    this.closed = true;
    const engines = [...this.decide.values()].map((c) => c.value.then((d) => d.engine.close()).catch(() => undefined));
    this.decide.clear();
    this.wasm.clear();
    await Promise.all(engines);
    await this.runnerInstance?.close();
  }

  private async buildDecide(records: readonly unknown[]): Promise<DecideJudge> {
    const [config, pins] = await Promise.all([readEngineConfig(this.options.env), readPins(this.options.env)]);
    const { rules, unreadable } = compileRecords(records);
    const engine = new DecideEngine({ config, rules, pins, logger: this.options.logger });
    return { engine, judge: new DecideToolJudge(engine, { logger: this.options.logger, unreadable }) };
  }

  private async cached<T>(map: Map<string, Cached<T>>, workspaceId: string, fingerprint: string, build: () => Promise<T>, dispose: (value: T) => unknown): Promise<T> {
    const hit = map.get(workspaceId);
    if (hit !== undefined && hit.fingerprint === fingerprint) {
      // Most recently used last.
      map.delete(workspaceId);
      map.set(workspaceId, hit);
      return hit.value;
    }
    if (hit !== undefined) void hit.value.then(dispose, () => undefined);
    const value = build();
    map.set(workspaceId, { fingerprint, value });
    value.catch(() => map.get(workspaceId)?.value === value && map.delete(workspaceId));
    const max = this.options.maxWorkspaces ?? 200;
    while (map.size > max) {
      const [oldest, entry] = map.entries().next().value as [string, Cached<T>];
      map.delete(oldest);
      void entry.value.then(dispose, () => undefined);
    }
    return value;
  }

  private runner(): WasmRuleRunner {
    if (this.closed) throw new Error('the hook gate rules are closed');
    this.runnerInstance ??= new WasmRuleRunner({
      fuel: WASM.fuel,
      memoryCapPages: Math.floor((WASM.memoryMaxMb * 1024 * 1024) / PAGE_BYTES),
      failurePolicy: WASM.failurePolicy,
      logger: this.options.logger,
    });
    return this.runnerInstance;
  }
}
