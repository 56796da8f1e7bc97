import { z } from 'zod';

/**
 * The rule ABI (docs/wasm-rules.md). A module exports `svc_abi_version(): i32` and
 * `svc_evaluate(): i32`, imports its accessors from the `svc` module, and may import its memory
 * as `env.memory` (the host then caps its growth).
 */
export const ABI_VERSION = 1;

/**
 * The optional export of a rule built on the stub runtime (`svc policy compile` builds every rule
 * so, see assembly/sdk/arena.ts): `svc_arena_top(): usize`, where its heap ends once started. The
 * host then rewinds its memory below that point and its globals after every call.
 */
export const ARENA_TOP_EXPORT = 'svc_arena_top';

export const RULE_KINDS = ['request', 'tool_call', 'response'] as const;
export type RuleKind = (typeof RULE_KINDS)[number];

/**
 * Bits of the optional `svc_kinds(): i32` export: the kinds of call a rule evaluates. A rule
 * without it evaluates every kind; the host never runs a rule on a kind it did not ask for.
 */
export const KIND_BITS: Readonly<Record<RuleKind, number>> = { request: 1, tool_call: 2, response: 4 };
export const ALL_KINDS = 7;

/**
 * The optional export `svc_programs(): usize`: the programs whose commands the rule judges, as the
 * address of a UTF-16LE string whose length in bytes is the u32 in the four bytes before it (an
 * AssemblyScript string), names apart by commas: `"rm"`, `"git,gh"`. The host then evaluates the
 * rule on a tool call only when one of the names occurs in the call's arguments (see
 * programs.ts): a call that cannot run one of them never pays for the rule.
 */
export const PROGRAMS_EXPORT = 'svc_programs';

/** Field ids of `field_length` / `field_read`. */
export const FIELDS = {
  toolName: 1,
  toolArguments: 2,
  model: 3,
  harness: 4,
  session: 5,
  workspace: 6,
  text: 7,
  toolInput: 8,
} as const;

/**
 * A tool call's input as the rule's accessors read it: `json`, a JSON object whose top-level
 * arguments `argument_length` / `argument_read` answer; `text`, raw text (a freeform tool's input,
 * code, or arguments that are not a JSON object), for which no argument is answered.
 */
export type ToolInputForm = 'json' | 'text';

/** What `svc_evaluate` returns. */
export const VERDICT_CODES = { allow: 0, block: 1, hold: 2 } as const;

/** Everything a rule can ask about the call it evaluates. */
export interface RuleContext {
  readonly kind: RuleKind;
  readonly toolName: string | null;
  readonly toolArguments: string | null;
  /** How a tool call's arguments are meant: `text` when they are raw text, never JSON; null for other kinds. */
  readonly toolInput: ToolInputForm | null;
  readonly model: string;
  readonly harness: string | null;
  readonly session: string | null;
  readonly workspace: string;
  readonly text: string | null;
}

export type RuleAction = 'allow' | 'block' | 'hold';

export interface RuleOutcome {
  readonly action: RuleAction;
  readonly reason: string;
}

/**
 * A call context as JSON (the `--mock` file of `svc policy test`). Tool arguments may be given as
 * an object; they reach the rule as JSON text. `toolInput: "text"` gives them as raw text, as a
 * freeform tool's input or code reaches the rule.
 */
export const ruleContextSchema = z
  .strictObject({
    kind: z.enum(RULE_KINDS),
    toolName: z.string().max(256).optional(),
    toolArguments: z.union([z.string(), z.record(z.string(), z.unknown())]).optional(),
    toolInput: z.enum(['json', 'text']).optional(),
    model: z.string().max(256).default('gpt-4o-mini'),
    harness: z.string().max(256).optional(),
    session: z.string().max(256).optional(),
    workspace: z.string().max(128).default('local'),
    text: z.string().optional(),
  })
  .refine((c) => c.kind !== 'tool_call' || c.toolName !== undefined, { message: 'a tool_call context needs toolName', path: ['toolName'] })
  .refine((c) => c.toolInput !== 'text' || typeof c.toolArguments === 'string', { message: 'text input is given as a string', path: ['toolArguments'] })
  .transform(
    (c): RuleContext => ({
      kind: c.kind,
      toolName: c.toolName ?? null,
      toolArguments: c.toolArguments === undefined ? null : typeof c.toolArguments === 'string' ? c.toolArguments : JSON.stringify(c.toolArguments),
      toolInput: c.kind === 'tool_call' ? (c.toolInput ?? 'json') : null,
      model: c.model,
      harness: c.harness ?? null,
      session: c.session ?? null,
      workspace: c.workspace,
      text: c.text ?? null,
    }),
  );

/** The context every rule must allow to be installed: an agent reading a file. */
export const ALLOW_CONTEXT: RuleContext = Object.freeze({
  kind: 'tool_call',
  toolName: 'read_file',
  toolArguments: '{"path":"README.md"}',
  toolInput: 'json',
  model: 'gpt-4o-mini',
  harness: 'svc-install-check',
  session: null,
  workspace: 'local',
  text: null,
});
