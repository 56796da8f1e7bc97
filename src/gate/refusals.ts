/**
 * The gate's contract (seed 002 "Gate refusal codes", "Limits"): the codes a refusal carries, the
 * classes a guarded call throws, and the bounds every gate applies before any tier.
 */

export const GATE_REFUSAL_CODES = [
  'SSO_GROUP',
  'SNAPSHOT',
  'HELD',
  'SERVER_BLOCKED',
  'SERVER_HELD',
  'SERVER_NOT_APPROVED',
  'TOOL_DISABLED',
  'SERVER_NOT_ALLOWED',
  'POLICY_SNAPSHOT_UNVERIFIED',
  'SOP_RULE',
  'HOOK_GATE',
  'COMMAND_TOO_LARGE',
  'CHAOS_FAULT',
  'E_UNPINNED_LATEST',
  'E_UNPINNED_TAG',
  'E_UNKNOWN_REGISTRY',
  'E_UNKNOWN_IMAGE',
  'E_DIGEST_MISMATCH',
  'E_MANIFEST_UNPARSEABLE',
  'WORKFLOW_SANDBOX',
  'NO_GATE',
  'DECIDE_REFUSED',
  'DECIDE_ESCALATED',
  'GATE_DEADLINE',
] as const;
export type GateRefusalCode = (typeof GATE_REFUSAL_CODES)[number];

/** Tools that only read: they skip the SOP-rule and hook-gate tiers, and their allows are not reported. */
export const READ_ONLY_TOOLS: readonly string[] = ['read_file', 'list_files', 'read', 'cat', 'view'];

/** A command over 256 KiB, or arguments whose compact JSON is over 1 MiB (UTF-8), is refused before any tier. */
export const COMMAND_SIZE_LIMIT = 256 * 1024;
export const ARGUMENTS_SIZE_LIMIT = 1024 * 1024;

/** The hook script's deadline: one second under the harnesses' 10-second hook timeout. */
export const GATE_DEADLINE_MS = 9000;

export const BLOCKED_PREFIX = '[Svc Governance] BLOCKED:';
export const HELD_PREFIX = '[Svc Governance] HELD:';

/** What the gate throws instead of running a tool. The message is what the model reads. */
export class SvcGateRefusal extends Error {
  override readonly name: string = 'SvcGateRefusal';
  constructor(
    readonly code: GateRefusalCode,
    readonly reason: string,
    /** The rule (or tier) that refused. */
    readonly rule: string,
    readonly incidentId: string | null = null,
    message?: string,
  ) {
    super(message ?? `${BLOCKED_PREFIX} ${code}: ${reason}${incidentId === null ? '' : ` Incident ${incidentId}.`}`);
  }
}

/** A held call: it waits for a person's approval; `holdId` names the hold (null when none could be recorded). */
export class SvcGateHold extends SvcGateRefusal {
  override readonly name = 'SvcGateHold';
  constructor(
    reason: string,
    rule: string,
    readonly holdId: string | null,
    incidentId: string | null = null,
    message?: string,
  ) {
    super('HELD', reason, rule, incidentId, message ?? `${HELD_PREFIX} ${reason}${holdId === null ? '' : ` (hold ${holdId})`}`);
  }
}

/** A decide rule left the question open and no person can be asked (DECIDE_ESCALATED). */
export class SvcGateEscalation extends SvcGateRefusal {
  override readonly name = 'SvcGateEscalation';
  constructor(reason: string, rule: string, incidentId: string | null = null) {
    super('DECIDE_ESCALATED', reason, rule, incidentId);
  }
}
