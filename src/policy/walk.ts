import { isJsonObject } from '../lib/json.js';

/**
 * Every value a model will read or an agent will receive sits somewhere in a JSON body. The
 * walker visits string leaves (never keys) and numbers long enough to be a card or account
 * number, and says what kind of text each leaf is, so detectors can target tool results and tool
 * descriptions.
 *
 * Nothing is skipped by key name alone: a tool's input or a schema may use any key. Only the
 * wire format's own fields are left out, by position: in the envelope objects of a request or
 * response (the body, its messages, content blocks, tool calls and tool definitions, reached
 * through the keys in ENVELOPE_KEYS) the roles, types, provider-generated ids, tool names, the
 * model and base64 payloads. Rewriting those would break the exchange, and none carries text.
 */

export type PathSegment = string | number;

export type TextKind = 'message' | 'system' | 'tool_arguments' | 'tool_result' | 'tool_description' | 'other';

export interface TextLeaf {
  /** Where the leaf is: the walker's own path, as it stands during the visit (copy it to keep it). */
  readonly path: readonly PathSegment[];
  readonly text: string;
  readonly kind: TextKind;
  /** The leaf is a JSON number and `text` its digits. */
  readonly numeric: boolean;
}

/** Integers with fewer digits (counts, timestamps, token usage) cannot be a card or account number. */
const MIN_NUMBER_DIGITS = 12;
const MIN_SCANNED_NUMBER = 10 ** (MIN_NUMBER_DIGITS - 1);

/** Keys through which an envelope object holds more envelope objects (arrays are crossed transparently). */
const ENVELOPE_KEYS = new Set([
  'messages',
  'system',
  'tools',
  'functionDeclarations',
  'contents',
  'parts',
  'choices',
  'message',
  'delta',
  'content',
  'tool_calls',
  'function',
  'output',
  'source',
  'content_block',
  'item',
  'part',
  'response',
]);

/** Fields of an envelope object that name, type or identify it for the wire format. */
const STRUCTURAL_KEYS = new Set([
  'role',
  'type',
  'object',
  'id',
  'tool_call_id',
  'tool_use_id',
  'call_id',
  'item_id',
  'status',
  'finish_reason',
  'stop_reason',
  'signature',
  'encrypted_content',
]);

/** Block types whose `data` is an opaque payload: base64 sources, encrypted thinking. */
const OPAQUE_DATA_TYPES = new Set(['base64', 'redacted_thinking']);

/** A `data:` URL of base64 bytes (an inline image or file): binary, not text. */
const BASE64_DATA_URL = /^data:[^,]{0,100};base64,/;

/** Top-level keys under which a body's texts are its conversation. */
const MESSAGE_ROOTS = new Set<PathSegment>(['messages', 'input', 'prompt', 'choices', 'content', 'output']);

type Json = Record<string, unknown>;

/** Whether the string field `key` of the envelope object `node` (the body when `atRoot`) is part of the wire format rather than content. */
function isStructural(node: Json, key: string, atRoot: boolean): boolean {
  if (STRUCTURAL_KEYS.has(key)) return true;
  if (key === 'model') return atRoot;
  // A tool's or a call's name routes it; a message's `name` is a participant's, and is read.
  if (key === 'name') return node.role === undefined;
  if (key === 'data') return OPAQUE_DATA_TYPES.has(node.type as string);
  return false;
}

function isBinary(text: string): boolean {
  // 'd': most texts are told apart by their first character, without running the expression.
  return text.charCodeAt(0) === 0x64 && BASE64_DATA_URL.test(text);
}

/**
 * One walk of a body. What a leaf's kind depends on in the objects above it (a tool result, a
 * system message, a tool_use block, an additional_tools item) is counted as the walk enters and
 * leaves each object, so a leaf's kind costs the same at any depth.
 */
class Walk {
  private readonly path: PathSegment[] = [];
  private depth = 0;
  /** Objects above with role `tool` or type `tool_result` or `function_call_output`. */
  private toolResults = 0;
  /** Objects above with role `system` or `developer`. */
  private systemMessages = 0;
  private toolUses = 0;
  private additionalTools = 0;
  /** `input` keys on the path. */
  private inputKeys = 0;

  constructor(private readonly visit: (leaf: TextLeaf) => void) {}

  value(value: unknown, envelope: boolean): void {
    if (typeof value === 'string') {
      if (value.length > 0 && !isBinary(value)) this.visit({ path: this.path, text: value, kind: this.kind(), numeric: false });
    } else if (typeof value === 'number') {
      if (Number.isInteger(value) && Math.abs(value) >= MIN_SCANNED_NUMBER) this.visit({ path: this.path, text: String(value), kind: this.kind(), numeric: true });
    } else if (Array.isArray(value)) {
      const path = this.path;
      for (let i = 0; i < value.length; i++) {
        path.push(i);
        this.value(value[i], envelope);
        path.pop();
      }
    } else if (isJsonObject(value)) {
      this.object(value, envelope);
    }
  }

  private object(node: Json, envelope: boolean): void {
    const atRoot = this.depth === 0;
    const { role, type } = node;
    const toolResult = role === 'tool' || type === 'tool_result' || type === 'function_call_output' ? 1 : 0;
    const systemMessage = role === 'system' || role === 'developer' ? 1 : 0;
    const toolUse = type === 'tool_use' ? 1 : 0;
    const additionalTools = type === 'additional_tools' ? 1 : 0;
    this.depth++;
    this.toolResults += toolResult;
    this.systemMessages += systemMessage;
    this.toolUses += toolUse;
    this.additionalTools += additionalTools;
    const path = this.path;
    // Enumerated in place (listing the keys into an array cost a third of the walk); a key an
    // object only inherits is not its own text.
    for (const key in node) {
      if (!Object.hasOwn(node, key)) continue;
      const child = node[key];
      if (envelope && typeof child === 'string' && isStructural(node, key, atRoot)) continue;
      const input = key === 'input' ? 1 : 0;
      path.push(key);
      this.inputKeys += input;
      // The Responses `input` list is envelope; an Anthropic tool_use `input` is the tool's own data.
      this.value(child, envelope && (ENVELOPE_KEYS.has(key) || (atRoot && input === 1)));
      this.inputKeys -= input;
      path.pop();
    }
    this.depth--;
    this.toolResults -= toolResult;
    this.systemMessages -= systemMessage;
    this.toolUses -= toolUse;
    this.additionalTools -= additionalTools;
  }

  private kind(): TextKind {
    const path = this.path;
    const root = path[0];
    const last = path[path.length - 1];
    // Under `tools` (namespaces nest more), or in a Responses `additional_tools` input item.
    if (last === 'description' && (root === 'tools' || this.additionalTools > 0)) return 'tool_description';
    if (this.toolResults > 0) return 'tool_result';
    if (last === 'arguments' || (this.inputKeys > 0 && this.toolUses > 0)) return 'tool_arguments';
    if (root === 'system' || root === 'instructions' || this.systemMessages > 0) return 'system';
    if (root !== undefined && MESSAGE_ROOTS.has(root)) return 'message';
    return 'other';
  }
}

/**
 * Calls `visit` for every text leaf of `body`, depth first, in document order. A leaf's `path` is
 * the walk's own, valid during the visit only.
 */
export function walkTexts(body: unknown, visit: (leaf: TextLeaf) => void): void {
  new Walk(visit).value(body, true);
}

/** Replaces the value at `path` inside `body` (which the walker visited) with `text`. */
export function setText(body: unknown, path: readonly PathSegment[], text: string): void {
  let node = body as Record<PathSegment, unknown>;
  for (let i = 0; i < path.length - 1; i++) node = node[path[i]!] as Record<PathSegment, unknown>;
  node[path.at(-1)!] = text;
}

/** `messages[3].content[0].text`: a location for findings that never includes the text. */
export function describePath(path: readonly PathSegment[]): string {
  let out = '';
  for (const segment of path) out += typeof segment === 'number' ? `[${segment}]` : out.length === 0 ? segment : `.${segment}`;
  return out;
}

/** The index of the message (or input item) a path is in, when it is in one. */
export function messageIndexOf(path: readonly PathSegment[]): number | null {
  return (path[0] === 'messages' || path[0] === 'input') && typeof path[1] === 'number' ? path[1] : null;
}
