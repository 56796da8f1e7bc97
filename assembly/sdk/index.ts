// The svc rule SDK: what a rule sees and how it answers. See docs/wasm-rules.md.
import { hostArgumentLength, hostArgumentRead, hostFieldLength, hostFieldRead, hostKind, hostSetReason } from "./host";
import { stringLiterals } from "./literals";

export { words, commands, commandsInto, baseName, commandStart, shellScript } from "./shell";
export { jsonStrings, stringLiterals } from "./literals";

/** The ABI this SDK speaks; the host refuses a module whose `svc_abi_version` differs. */
export const ABI_VERSION: i32 = 1;

/** Every rule module exports this (re-export it: `export { svc_abi_version } from "../sdk"`). */
export function svc_abi_version(): i32 {
  return ABI_VERSION;
}

export enum Kind {
  Request = 0,
  ToolCall = 1,
  Response = 2,
}

/**
 * Bits for the optional `svc_kinds` export: a rule that evaluates only tool calls exports
 * `export function svc_kinds(): i32 { return Kinds.ToolCall; }` and the host never runs it on
 * requests or responses. Without it, a rule sees every kind.
 */
export namespace Kinds {
  export const Request: i32 = 1;
  export const ToolCall: i32 = 2;
  export const Response: i32 = 4;
  export const All: i32 = 7;
}

/** What `svc_evaluate` returns. */
export enum Verdict {
  Allow = 0,
  Block = 1,
  Hold = 2,
}

const FIELD_TOOL_NAME: i32 = 1;
const FIELD_TOOL_ARGUMENTS: i32 = 2;
const FIELD_MODEL: i32 = 3;
const FIELD_HARNESS: i32 = 4;
const FIELD_SESSION: i32 = 5;
const FIELD_WORKSPACE: i32 = 6;
const FIELD_TEXT: i32 = 7;
const FIELD_TOOL_INPUT: i32 = 8;

function stringOfLength(length: i32): string {
  return changetype<string>(__new(<usize>length << 1, idof<string>()));
}

function field(id: i32): string {
  const length = hostFieldLength(id);
  if (length <= 0) return "";
  const text = stringOfLength(length);
  hostFieldRead(id, changetype<usize>(text));
  return text;
}

/** What is being evaluated. */
export function kind(): Kind {
  return <Kind>hostKind();
}

/** The tool's name ("" unless `kind()` is ToolCall). */
export function toolName(): string {
  return field(FIELD_TOOL_NAME);
}

/**
 * The tool call's arguments as the model emitted them: JSON text, possibly malformed, or the raw
 * text of a freeform tool's input or of code (see `inputIsText`).
 */
export function toolArguments(): string {
  return field(FIELD_TOOL_ARGUMENTS);
}

/**
 * Whether the tool call's input is raw text rather than a JSON object: a freeform custom tool's
 * input, code (Codex code mode's JavaScript, a code interpreter's Python), or arguments that are
 * not a JSON object. `toolArguments()` then holds the text and `argument()` answers null.
 */
export function inputIsText(): bool {
  return field(FIELD_TOOL_INPUT) == "text";
}

/** Whether a literal could be a command: it has a letter. */
function looksLikeCommand(literal: string): bool {
  for (let i = 0; i < literal.length; i++) {
    const c = literal.charCodeAt(i) | 0x20;
    if (c >= 0x61 && c <= 0x7a) return true;
  }
  return false;
}

/**
 * The string literals of a raw-text input that look like commands, quotes removed and escapes
 * decoded: `tools.exec_command({cmd: "git push --force origin main"})` gives
 * ["git push --force origin main"]. Empty when the input is a JSON object.
 */
export function textCommands(): string[] {
  if (!inputIsText()) return new Array<string>();
  return stringLiterals(toolArguments()).filter((literal: string) => looksLikeCommand(literal));
}

/**
 * One top-level argument of the tool call, parsed by the host: a string argument as itself, any
 * other value as JSON text; null when there is no such argument (or the arguments are not a JSON object).
 */
export function argument(name: string): string | null {
  const namePtr = changetype<usize>(name);
  const length = hostArgumentLength(namePtr, name.length);
  if (length < 0) return null;
  const text = stringOfLength(length);
  if (length > 0) hostArgumentRead(namePtr, name.length, changetype<usize>(text));
  return text;
}

export function model(): string {
  return field(FIELD_MODEL);
}

/** The agent (`x-svc-harness`), or "". */
export function harness(): string {
  return field(FIELD_HARNESS);
}

/** The session (`x-session-id`), or "". */
export function session(): string {
  return field(FIELD_SESSION);
}

export function workspace(): string {
  return field(FIELD_WORKSPACE);
}

/** For a request, the text of its last message; for a response, the assistant's text. */
export function text(): string {
  return field(FIELD_TEXT);
}

export function allow(): i32 {
  return Verdict.Allow;
}

/** Refuses: the call is removed and the agent told `reason`. */
export function block(reason: string): i32 {
  hostSetReason(changetype<usize>(reason), reason.length);
  return Verdict.Block;
}

/** Holds: the agent is told the call awaits a person's approval, and why. */
export function hold(reason: string): i32 {
  hostSetReason(changetype<usize>(reason), reason.length);
  return Verdict.Hold;
}
