import { SvcGateHold, SvcGateRefusal } from './refusals.js';

/**
 * How the hook gate answers each harness (its hook protocol). Nothing here loads more than the
 * refusal classes: `svc gate hook` answers with it even when the rest of the gate cannot load.
 */
export const HOOK_HARNESSES = ['claude-code', 'cursor', 'gemini'] as const;
export type HookHarness = (typeof HOOK_HARNESSES)[number];

export interface HookAnswer {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** The harness's answer to a refusal (or hold) or an allow. */
export function answer(harness: HookHarness, refusal: SvcGateRefusal | null): HookAnswer {
  if (harness === 'cursor') {
    const body = refusal === null ? { permission: 'allow' } : { permission: 'deny', userMessage: refusal.message, agentMessage: refusal.message };
    return { exitCode: 0, stdout: JSON.stringify(body), stderr: '' };
  }
  if (harness === 'gemini') {
    // Gemini CLI: `decision: deny` sends the reason to the agent as the tool's error; the turn goes on.
    return refusal === null ? { exitCode: 0, stdout: '{}', stderr: '' } : { exitCode: 0, stdout: JSON.stringify({ decision: 'deny', reason: refusal.message }), stderr: '' };
  }
  if (refusal === null) return { exitCode: 0, stdout: '', stderr: '' };
  // A hold is denied, not asked: the person at the keyboard is the requester, who may not approve their own hold.
  if (refusal instanceof SvcGateHold) {
    const output = { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: refusal.message } };
    return { exitCode: 0, stdout: JSON.stringify(output), stderr: '' };
  }
  // Exit 2: Claude Code refuses the call and hands stderr to the model.
  return { exitCode: 2, stdout: '', stderr: refusal.message };
}

/**
 * The answer when the gate itself failed (it could not load, or broke): a refusal, as
 * `failClosed`'s default says; a gate that cannot run cannot read whether the workspace says otherwise.
 */
export function failedGateAnswer(harness: HookHarness, err: unknown): HookAnswer {
  return answer(harness, new SvcGateRefusal('HOOK_GATE', `GOVERNANCE_UNAVAILABLE: the hook gate failed: ${(err as Error).message}.`, 'hook_gate'));
}
