import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { svcHome } from '../lib/paths.js';
import { captureFlaggedCall } from '../machine/rollback.js';
import { GateClient, type HookEventInput } from './client.js';
import { Gate } from './gate.js';
import { answer, type HookAnswer, type HookHarness } from './hook-answer.js';
import { GATE_DEADLINE_MS, SvcGateRefusal } from './refusals.js';

/**
 * Gates as a harness's hook (`svc gate hook <harness>`): the harness runs the command before each
 * tool call with the call on stdin; the answer is the harness's own hook protocol. The whole
 * decision has GATE_DEADLINE_MS (one second under the harnesses' 10-second hook timeout).
 */

/** The last gate event of a harness on this machine (read by the inventory): when, and when with guards disabled. */
export function gateEventFile(env: NodeJS.ProcessEnv, harness: string): string {
  return join(svcHome(env), 'events', `last-${harness}.json`);
}

async function recordGateEvent(env: NodeJS.ProcessEnv, harness: HookHarness): Promise<void> {
  const file = gateEventFile(env, harness);
  const at = new Date().toISOString();
  let previous: { guardsDisabledAt?: string } = {};
  try {
    previous = JSON.parse(await readFile(file, 'utf8')) as typeof previous;
  } catch {
    // The first event.
  }
  const guardsDisabledAt = env.SVC_GUARD_DISABLE === '1' ? at : previous.guardsDisabledAt;
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, JSON.stringify({ at, ...(guardsDisabledAt === undefined ? {} : { guardsDisabledAt }) }));
}

const claudeInput = z.looseObject({ session_id: z.string().max(256).optional(), cwd: z.string().max(4096).optional(), tool_name: z.string().min(1).max(256), tool_input: z.unknown().default({}) });
const cursorInput = z.looseObject({
  hook_event_name: z.string().max(64).optional(),
  conversation_id: z.string().max(256).optional(),
  command: z.string().optional(),
  cwd: z.string().max(4096).optional(),
  tool_name: z.string().max(256).optional(),
  tool_input: z.unknown().optional(),
  server: z.string().max(256).optional(),
});

interface Call {
  readonly toolName: string;
  readonly toolInput: unknown;
  readonly sessionId: string | undefined;
  readonly cwd: string | undefined;
}

/** The call a harness's hook input describes, or why it cannot be read. */
function readCall(harness: HookHarness, stdin: string): Call | string {
  let json: unknown;
  try {
    json = JSON.parse(stdin);
  } catch {
    return 'the hook input is not JSON';
  }
  if (harness === 'claude-code' || harness === 'gemini') {
    // Gemini CLI's BeforeTool input has Claude Code's shape.
    const parsed = claudeInput.safeParse(json);
    if (!parsed.success) return `the hook input does not read: ${parsed.error.issues[0]?.message ?? 'invalid'}`;
    return { toolName: parsed.data.tool_name, toolInput: parsed.data.tool_input, sessionId: parsed.data.session_id, cwd: parsed.data.cwd };
  }
  const parsed = cursorInput.safeParse(json);
  if (!parsed.success) return `the hook input does not read: ${parsed.error.issues[0]?.message ?? 'invalid'}`;
  const d = parsed.data;
  if (d.command !== undefined) return { toolName: 'Shell', toolInput: { command: d.command }, sessionId: d.conversation_id, cwd: d.cwd };
  // beforeMCPExecution: the tool of an MCP server, named as the other harnesses name it.
  if (d.tool_name !== undefined) {
    const input = typeof d.tool_input === 'string' ? safeJson(d.tool_input) : (d.tool_input ?? {});
    return { toolName: d.server ? `mcp__${d.server}__${d.tool_name}` : d.tool_name, toolInput: input, sessionId: d.conversation_id, cwd: d.cwd };
  }
  return 'the hook input names neither a command nor a tool';
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { input: text };
  }
}

/**
 * Runs the gate for one hook invocation. The client comes from the environment or `svc login`'s
 * stored credentials when there is a key; without one, only the tiers that need no client run.
 */
export async function runHook(harness: HookHarness, stdin: string, env: NodeJS.ProcessEnv, deadlineMs = GATE_DEADLINE_MS): Promise<HookAnswer> {
  const call = readCall(harness, stdin);
  if (typeof call === 'string') return answer(harness, new SvcGateRefusal('HOOK_GATE', `${call} (INVALID_REQUEST).`, 'hook_input'));
  let client: GateClient | null = null;
  try {
    const candidate = GateClient.fromEnv(env, { harness, sessionId: env.SVC_SESSION_ID || call.sessionId || 'unknown-session' });
    client = candidate.apiKey === '' ? null : candidate;
  } catch {
    client = null;
  }
  const events: HookEventInput[] = [];
  const gate = new Gate({ repoRoot: call.cwd ?? process.cwd(), env, onEvents: (e) => events.push(...e), ...(env.SVC_WORKSPACE_ID ? { workspaceId: env.SVC_WORKSPACE_ID } : {}) }, client);
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<SvcGateRefusal>((resolve) => {
    timer = setTimeout(() => resolve(new SvcGateRefusal('GATE_DEADLINE', `the gate did not decide within ${deadlineMs} ms.`, 'gate_deadline')), deadlineMs);
  });
  const decided = gate.guard(call.toolName, call.toolInput).then(
    () => null,
    (err: unknown) => (err instanceof SvcGateRefusal ? err : new SvcGateRefusal('HOOK_GATE', `the gate failed: ${(err as Error).message}.`, 'gate_error')),
  );
  const refusal = await Promise.race([decided, deadline]);
  clearTimeout(timer);
  // A call let run with warnings (the warn tier): pre-images of the files it changes, for `svc rollback`, before it runs.
  const flagged = { harness, toolName: call.toolName, toolInput: call.toolInput, cwd: call.cwd ?? process.cwd(), sessionId: call.sessionId ?? null };
  const note = refusal === null ? await Promise.race([captureFlaggedCall(flagged, events, env), new Promise<null>((r) => setTimeout(r, Math.max(0, deadlineMs - (Date.now() - started)), null).unref())]) : null;
  // Reports go out before the hook exits, within what is left of the deadline.
  await recordGateEvent(env, harness).catch(() => undefined);
  const left = Math.max(0, Math.min(1000, deadlineMs - (Date.now() - started)));
  if (client !== null) await Promise.race([client.flush(), new Promise((r) => setTimeout(r, left).unref())]);
  const out = answer(harness, refusal);
  return note === null ? out : { ...out, stderr: out.stderr === '' ? note : `${out.stderr}\n${note}` };
}
