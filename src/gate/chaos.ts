import { appendFileSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import { argumentsSha256 } from '../lib/canonical-json.js';
import { SvcGateHold, SvcGateRefusal } from './refusals.js';

/**
 * Chaos runs (seed 002 rule 10): with `SVC_CHAOS_PLAN` (a JSON plan) and `SVC_CHAOS_EVENTS` (a JSON
 * lines file) set, the gate injects the plan's faults into calls every tier allowed and writes every
 * call and decision to the events file, so an agent's handling of tool errors, denials and delays can
 * be tested. A fault never applies to a call a tier refused or held.
 */

const faultSchema = z.strictObject({
  id: z.string().min(1).max(128),
  kind: z.enum(['tool.error', 'permission.deny_or_delay']),
  /** deny: the call is refused; delay: held until an identical retry comes `delay_s` later, which `then` decides. */
  mode: z.enum(['deny', 'delay']).default('deny'),
  /** The allowed call (1-based, counted by this gate) the fault hits; or every `every`-th one. */
  at_call: z.number().int().min(1).optional(),
  every: z.number().int().min(1).optional(),
  tools: z.array(z.string().min(1).max(256)).max(100).optional(),
  message: z.string().min(1).max(1000).default('injected failure'),
  delay_s: z.number().min(0).max(3600).default(5),
  then: z.enum(['allow', 'deny']).default('allow'),
});

export const chaosPlanSchema = z.strictObject({
  run_id: z.string().min(1).max(128),
  /** Carried by every fault message so a run's faults can be told from real failures. */
  canary: z.string().regex(/^E-SVC-[A-Za-z0-9-]{1,64}$/),
  /** false: the experiment and every tier are skipped. */
  enforce: z.boolean().default(true),
  faults: z.array(faultSchema).max(100).default([]),
});
export type ChaosPlan = z.infer<typeof chaosPlanSchema>;
type Fault = z.infer<typeof faultSchema>;

/** The chaos run of this process, or why it cannot run (every call is then refused CHAOS_FAULT). */
export type ChaosRun = { readonly ok: true; readonly chaos: Chaos } | { readonly ok: false; readonly reason: string };

/** Reads the plan named by the environment; null when no chaos run is set. */
export function chaosFromEnv(env: NodeJS.ProcessEnv): ChaosRun | null {
  const planPath = env.SVC_CHAOS_PLAN;
  if (!planPath) return null;
  const events = env.SVC_CHAOS_EVENTS;
  if (!events) return { ok: false, reason: 'SVC_CHAOS_PLAN is set without SVC_CHAOS_EVENTS' };
  let plan: ChaosPlan;
  try {
    plan = chaosPlanSchema.parse(JSON.parse(readFileSync(planPath, 'utf8')));
  } catch (err) {
    return { ok: false, reason: `the chaos plan ${planPath} cannot be read: ${(err as Error).message.split('\n')[0]}` };
  }
  return { ok: true, chaos: new Chaos(plan, events) };
}

export interface GateDecision {
  readonly tool: string;
  readonly verdict: 'allow' | 'block' | 'hold';
  readonly tier: string | null;
  readonly rule: string | null;
  /** Whether a destructive-command rule fired. */
  readonly destructive: boolean;
  /** Whether any rule hit. */
  readonly ruleHit: boolean;
}

export class Chaos {
  private allowedCalls = 0;
  /** Delayed calls by tool and arguments hash: when they were first seen and the fault that delays them. */
  private readonly delayed = new Map<string, { since: number; fault: Fault }>();

  constructor(
    readonly plan: ChaosPlan,
    private readonly eventsFile: string,
    private readonly clock: () => number = Date.now,
  ) {
    this.write({ type: 'plan_loaded', faults: plan.faults.length, enforce: plan.enforce });
  }

  /** Every call, and what the tiers decided. */
  record(call: { tool: string; input: unknown }, decision: GateDecision): void {
    this.write({ type: 'tool_call', tool: call.tool, argumentsSha256: argumentsSha256(call.input ?? {}) });
    this.write({ type: 'gate_decision', ...decision });
  }

  /** A call every tier allowed: throws when a fault is due for it. */
  inject(tool: string, input: unknown): void {
    const key = `${tool}\u0000${argumentsSha256(input ?? {})}`;
    const waiting = this.delayed.get(key);
    if (waiting !== undefined) {
      if (this.clock() - waiting.since < waiting.fault.delay_s * 1000) throw this.held(waiting.fault);
      this.delayed.delete(key);
      this.write({ type: 'fault_resolved', fault: waiting.fault.id, tool, then: waiting.fault.then });
      if (waiting.fault.then === 'deny') throw this.fault(waiting.fault);
      return;
    }
    this.allowedCalls++;
    const due = this.plan.faults.find(
      (f) => (f.tools === undefined || f.tools.includes(tool)) && (f.at_call === this.allowedCalls || (f.every !== undefined && this.allowedCalls % f.every === 0)),
    );
    if (due === undefined) return;
    this.write({ type: 'fault_injected', fault: due.id, kind: due.kind, mode: due.mode, tool, call: this.allowedCalls });
    if (due.mode === 'delay') {
      this.delayed.set(key, { since: this.clock(), fault: due });
      throw this.held(due);
    }
    throw this.fault(due);
  }

  private fault(f: Fault): SvcGateRefusal {
    return new SvcGateRefusal('CHAOS_FAULT', `${f.message} [${this.plan.canary}] (chaos fault ${f.id}; not a governance decision).`, `chaos:${f.id}`);
  }

  private held(f: Fault): SvcGateHold {
    return new SvcGateHold(`the call is delayed by chaos fault ${f.id} [${this.plan.canary}]; retry it in ${f.delay_s} s.`, `chaos:${f.id}`, null);
  }

  private write(event: Record<string, unknown>): void {
    try {
      appendFileSync(this.eventsFile, `${JSON.stringify({ at: new Date(this.clock()).toISOString(), run_id: this.plan.run_id, ...event })}\n`);
    } catch {
      // The events file is the run's record, not the call's: a write that fails does not change the verdict.
    }
  }
}
