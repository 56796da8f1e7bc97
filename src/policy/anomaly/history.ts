import { hash } from 'node:crypto';
import { canonicalArguments } from './canonical.js';
import { outcomeOf, type Outcome } from './outcome.js';
import { maskVolatile } from './volatile.js';
import { isJsonObject } from '../../lib/json.js';
import { memoize } from '../../lib/memo.js';

/** One tool call the model made, with the result the agent sent back (null while none has). */
export interface ToolCallRecord {
  readonly tool: string;
  /** The arguments as JSON text, as the request carried them (not canonical). */
  readonly argsText: string;
  /** Canonical JSON of the arguments. */
  readonly args: string;
  /** `tool` and the canonical arguments with volatile details masked: two calls with the same key are the same call. */
  readonly key: string;
  /** What a loop compares across passes: for an edit, the tool and the file it edits (the change itself may differ); else the key. */
  readonly target: string;
  /** Whether the call changes a file (its arguments carry new content or a patch). */
  readonly isEdit: boolean;
  /** The result read for comparison, or null when there is none yet. */
  readonly outcome: Outcome | null;
  readonly isError: boolean;
  /** Waiting for something outside the agent (a health check, a job's status, a log): repetition is expected for longer. */
  readonly isWaiting: boolean;
  /** Index of the message (or Responses input item) that carries the call. */
  readonly message: number;
}

/** Text the model itself wrote (assistant prose), where code-as-action hides. */
export interface AssistantText {
  readonly text: string;
  readonly message: number;
}

export interface ToolHistory {
  readonly calls: readonly ToolCallRecord[];
  readonly assistantTexts: readonly AssistantText[];
  /** For each message index, how many assistant turns came before it: DLP findings are counted per turn. */
  readonly turnOfMessage: readonly number[];
  /** Index of the last message the user wrote (not one only carrying tool results); -1 when none. */
  readonly lastUserMessage: number;
}

type Json = Record<string, unknown>;
const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/**
 * Results without an explicit error flag are errors when they start like one, report a non-zero
 * exit code in any harness's wording (`exit code 1`, `Exit Code: 1`, `"exit_code":1`,
 * `Process exited with code 2`), or carry a runner's failure summary.
 */
const ERROR_TEXT =
  /^\s*(?:error\b(?!:\s*\(none\))|exception\b|traceback\b|fatal\b|failed\b|command failed|exit (?:code|status) [1-9])|\{\s*"error"\s*:\s*[{"]|\bexit(?:ed with)?[ _](?:code|status)"?:? ?[1-9]\d*\b|\bnpm (?:ERR!|error)|\b[1-9]\d* (?:failed|failing|errors?)\b|\bpanicked at\b|<tool_use_error>/im;
/** Runners' failure markers, in capitals at the start of a line (`FAIL src/a.test.ts`, `E   KeyError`). */
const ERROR_MARK = /^(?:FAIL|FAILED|ERROR)\b|^E {3}/m;
const ERROR_HEAD_CHARS = 2048;
const ERROR_TAIL_CHARS = 1024;
/** Argument fields that carry new file content: a call with one of them is an edit. */
const EDIT_FIELDS = ['old_string', 'new_string', 'old_str', 'new_str', 'content', 'file_text', 'patch', 'diff', 'edits', 'replace', 'replacement', 'insert_text', 'new_source'];
const PATH_FIELDS = ['file_path', 'path', 'absolute_path', 'filename', 'file', 'target_file', 'notebook_path'];
const PATCH_FILE = /\*\*\* (?:Update|Add|Delete) File: (\S+)/;
const WAITING_ARGS = /\b(?:sleep|wait|watch|until|poll|health|healthz|ready|status|tail|logs|gh run|gh pr checks|kubectl get|docker ps)\b/i;
const FAILED_STATE = /\b(?:crashloopbackoff|imagepullbackoff|errimagepull|oomkilled|evicted|unhealthy|failed|failure)\b/i;
const WAITING_RESULT = /\b(?:pending|queued|in[ _]progress|waiting|starting|not ready|connection refused|couldn't connect|failed to connect|econnrefused|timed out waiting|still running)\b/i;

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  let out = '';
  for (const part of asArray(content)) {
    if (typeof part === 'string') out += part;
    else if (isJsonObject(part) && typeof part.text === 'string') out += (out ? '\n' : '') + part.text;
  }
  return out;
}

/** The file an edit changes, when its arguments name one. */
function editedFile(args: unknown, argsText: string): string | null {
  if (isJsonObject(args)) {
    for (const field of PATH_FIELDS) if (typeof args[field] === 'string') return args[field];
  }
  return PATCH_FILE.exec(argsText)?.[1] ?? null;
}

/**
 * Masked arguments of the calls last read (those up to 1,024 characters, a command or a path;
 * longer ones, file contents mostly, are masked each time rather than kept): the history comes
 * again with every request. At most about 4 MB is kept.
 */
const maskedArguments = memoize(maskVolatile, 1024, 1024);

/**
 * A call read from the body. The loop detectors only look at the tail of a long history, so the
 * canonical arguments, the key and the outcome are worked out when first asked for.
 */
class CallRecord implements ToolCallRecord {
  private canonical: string | undefined;
  private keyed: string | undefined;
  private targeted: { target: string; isEdit: boolean } | undefined;
  private read: Outcome | null | undefined;
  private error: boolean | undefined;
  rawResult: string | null = null;
  flaggedError = false;

  constructor(
    readonly tool: string,
    readonly argsText: string,
    readonly message: number,
  ) {}

  get args(): string {
    return (this.canonical ??= canonicalArguments(this.argsText));
  }

  get key(): string {
    return (this.keyed ??= `${this.tool}\u0000${maskedArguments(this.args)}`);
  }

  private get shape(): { target: string; isEdit: boolean } {
    if (this.targeted !== undefined) return this.targeted;
    let parsed: unknown = null;
    try {
      parsed = JSON.parse(this.args);
    } catch {
      parsed = null;
    }
    const freeformPatch = typeof parsed === 'string' && PATCH_FILE.test(parsed);
    const isEdit = freeformPatch || (isJsonObject(parsed) && EDIT_FIELDS.some((f) => f in parsed));
    const file = isEdit ? editedFile(parsed, typeof parsed === 'string' ? parsed : this.argsText) : null;
    return (this.targeted = { isEdit, target: isEdit ? `${this.tool}\u0000edit\u0000${file ?? ''}` : this.key });
  }

  get target(): string {
    return this.shape.target;
  }

  get isEdit(): boolean {
    return this.shape.isEdit;
  }

  get outcome(): Outcome | null {
    if (this.read === undefined) this.read = this.rawResult === null ? null : outcomeOf(this.rawResult);
    return this.read;
  }

  get isError(): boolean {
    if (this.error !== undefined) return this.error;
    const raw = this.rawResult;
    const checked = raw === null ? '' : raw.length > ERROR_HEAD_CHARS + ERROR_TAIL_CHARS ? `${raw.slice(0, ERROR_HEAD_CHARS)}\n${raw.slice(-ERROR_TAIL_CHARS)}` : raw;
    return (this.error = this.flaggedError || ERROR_TEXT.test(checked) || ERROR_MARK.test(checked));
  }

  /**
   * A status query whose answer reports no failure (a job still running looks the same poll after
   * poll), or any result that reports something still pending. A query answering with a failed
   * state (`CrashLoopBackOff`, a failed run) is not waiting: it has its answer.
   */
  get isWaiting(): boolean {
    const head = this.rawResult?.slice(0, ERROR_HEAD_CHARS) ?? '';
    return (WAITING_ARGS.test(this.args) && !this.isError && !FAILED_STATE.test(head)) || WAITING_RESULT.test(head);
  }
}

class HistoryBuilder {
  readonly calls: CallRecord[] = [];
  private readonly byId = new Map<string, CallRecord>();
  readonly assistantTexts: AssistantText[] = [];
  readonly turnOfMessage: number[] = [];
  lastUserMessage = -1;
  private turn = 0;

  call(id: unknown, tool: unknown, args: unknown, message: number): void {
    if (typeof tool !== 'string' || tool === '') return;
    const call = new CallRecord(tool, typeof args === 'string' ? args : JSON.stringify(args ?? {}), message);
    this.calls.push(call);
    if (typeof id === 'string') this.byId.set(id, call);
  }

  result(id: unknown, content: unknown, flaggedError: boolean): void {
    const call = typeof id === 'string' ? this.byId.get(id) : undefined;
    if (call === undefined) return;
    call.rawResult = textOf(content);
    call.flaggedError = flaggedError;
  }

  assistantText(text: string, message: number): void {
    if (text.trim() !== '') this.assistantTexts.push({ text, message });
  }

  enter(message: number, isAssistant: boolean): void {
    if (isAssistant) this.turn++;
    this.turnOfMessage[message] = this.turn;
  }
}

function readChatMessages(messages: unknown[], h: HistoryBuilder): void {
  messages.forEach((m, i) => {
    if (!isJsonObject(m)) return;
    h.enter(i, m.role === 'assistant');
    if (m.role === 'assistant') {
      if (typeof m.content === 'string') h.assistantText(m.content, i);
      for (const block of asArray(m.content)) {
        if (!isJsonObject(block)) continue;
        if (block.type === 'tool_use') h.call(block.id, block.name, block.input, i);
        else if (block.type === 'text' && typeof block.text === 'string') h.assistantText(block.text, i);
      }
      for (const tc of asArray(m.tool_calls)) {
        if (isJsonObject(tc) && isJsonObject(tc.function)) h.call(tc.id, tc.function.name, tc.function.arguments, i);
      }
    } else if (m.role === 'tool') {
      h.result(m.tool_call_id, m.content, false);
    } else if (m.role === 'user') {
      if (typeof m.content === 'string' || asArray(m.content).some((b) => isJsonObject(b) && b.type === 'text')) h.lastUserMessage = i;
      for (const block of asArray(m.content)) {
        if (isJsonObject(block) && block.type === 'tool_result') h.result(block.tool_use_id, block.content, block.is_error === true);
      }
    }
  });
}

function readResponsesInput(items: unknown[], h: HistoryBuilder): void {
  items.forEach((item, i) => {
    if (!isJsonObject(item)) return;
    const isCall = item.type === 'function_call' || item.type === 'custom_tool_call';
    h.enter(i, isCall || item.role === 'assistant');
    if (item.type === 'function_call') h.call(item.call_id, item.name, item.arguments, i);
    else if (item.type === 'custom_tool_call') h.call(item.call_id, item.name, item.input, i);
    else if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') h.result(item.call_id, item.output, false);
    else if (item.role === 'assistant') h.assistantText(textOf(item.content), i);
    else if (item.role === 'user') h.lastUserMessage = i;
  });
}

/** A text longer than this is represented in a fingerprint by its length, head and tail. */
const FINGERPRINT_TEXT_CHARS = 4096;
const FINGERPRINT_EDGE_CHARS = FINGERPRINT_TEXT_CHARS / 2;

/**
 * A long text's stand-in in a fingerprint: its length, first and last 2,048 characters. A harness's
 * system prompt runs to tens of KB and is sent with every request; hashing all of it cost about
 * 100 µs a request, this at most a few. Two sessions whose first turns differ only inside the
 * middle of such a text share a fingerprint (their loop memory), as two with identical first turns
 * always did.
 */
function shortenForFingerprint(text: string): string {
  if (text.length <= FINGERPRINT_TEXT_CHARS) return text;
  return `${text.length}:${text.slice(0, FINGERPRINT_EDGE_CHARS)}${text.slice(-FINGERPRINT_EDGE_CHARS)}`;
}

/** What names a session: its system prompt, first system message and first user message. */
export type FingerprintParts = readonly [system: unknown, firstSystem: unknown, firstUser: unknown];

/** The parts of `body` its fingerprint is made of: found at once, kept without the rest of the body. */
export function fingerprintParts(body: Json): FingerprintParts {
  const turns = Array.isArray(body.messages) ? body.messages : Array.isArray(body.input) ? body.input : Array.isArray(body.contents) ? body.contents : [body.input];
  const firstUser = turns.find((m) => isJsonObject(m) && m.role === 'user') ?? null;
  const system = body.system ?? body.instructions ?? body.systemInstruction ?? null;
  return [system, turns.find((m) => isJsonObject(m) && m.role === 'system') ?? null, firstUser];
}

/** Names a session by its first turns (system prompt, first system and user messages). */
export function fingerprintOf(parts: FingerprintParts): string {
  return hash('sha256', fingerprintSeed(parts)).slice(0, 32);
}

/**
 * A value as text for a fingerprint: what canonical JSON keeps (keys sorted, undefined members
 * left out, long texts shortened), but a string is written as its length and itself rather than
 * escaped. That is as unambiguous and about three times cheaper: escaping a 1 KB prompt for JSON
 * costs 1.8 µs, more than hashing it.
 */
function fingerprintSeed(value: unknown): string {
  if (typeof value === 'string') {
    const text = shortenForFingerprint(value);
    return `s${text.length}:${text}`;
  }
  if (value === null || value === undefined) return 'z';
  if (typeof value !== 'object') return `${typeof value === 'number' ? 'n' : 'b'}${String(value)};`;
  if (Array.isArray(value)) {
    let out = '[';
    for (const item of value) out += fingerprintSeed(item);
    return `${out}]`;
  }
  const record = value as Json;
  let out = '{';
  for (const key of Object.keys(record).sort()) {
    if (record[key] !== undefined) out += `${key.length}:${key}${fingerprintSeed(record[key])}`;
  }
  return `${out}}`;
}

/**
 * The ordered tool calls of a request body with their results (OpenAI chat `tool_calls` and
 * `tool` messages, Responses API `function_call` / `function_call_output` items, Anthropic
 * `tool_use` / `tool_result` blocks).
 */
export function extractHistory(body: unknown): ToolHistory {
  const h = new HistoryBuilder();
  const json = isJsonObject(body) ? body : {};
  if (Array.isArray(json.messages)) readChatMessages(json.messages, h);
  else if (Array.isArray(json.input)) readResponsesInput(json.input, h);
  return {
    calls: h.calls,
    assistantTexts: h.assistantTexts,
    turnOfMessage: h.turnOfMessage,
    lastUserMessage: h.lastUserMessage,
  };
}
