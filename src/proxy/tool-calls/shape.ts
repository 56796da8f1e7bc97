import type { ToolCall, ToolVerdict } from '../../policy/tool-judge.js';
import { toolCallNotice, type RefusedVerdict } from '../tool-calls-review.js';
import type { MaybePromise } from '../../lib/maybe-promise.js';

/**
 * What each wire format (chat, messages, responses) implements to have its tool calls judged:
 * how a complete body carries them, and how a stream does.
 */

export type Json = Record<string, unknown>;
export const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Tool-call arguments as text: Anthropic sends an object, OpenAI a string. */
export function argumentsText(value: unknown): string {
  if (typeof value === 'string') return value;
  return value === undefined ? '{}' : JSON.stringify(value);
}

/** The name a tool of an MCP server goes by, as the harnesses name them (`mcp__github__create_issue`). */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`;
}

/** A call the proxy does not know how to read: named by its type, carried as its JSON. */
export function unknownCall(id: string, item: Json): ToolCall {
  return { id, name: str(item.type) || 'unknown', arguments: JSON.stringify(item), input: 'unknown' };
}

/** A refused call and its verdict. */
export interface Refusal {
  readonly call: ToolCall;
  readonly verdict: RefusedVerdict;
}

export const noticeOf = (r: Refusal): string => toolCallNotice(r.call, r.verdict);

/** A call found in a complete body, with the wire object it came from. */
export interface FoundCall {
  readonly call: ToolCall;
  readonly item: Json;
}

/** How one response shape carries tool calls in a complete body. */
export interface BodyShape {
  calls(body: Json): FoundCall[];
  /** Takes every refused call (keyed by its wire object) out of `body` in favour of a notice the agent reads. */
  substitute(body: Json, refused: ReadonlyMap<Json, Refusal>): void;
}

/** One server-sent event: its raw text (without the blank line) and, when its data is a JSON object, that. */
export interface SseEvent {
  readonly raw: string;
  readonly name: string | null;
  readonly data: Json | null;
}

export function serialise(name: string | null, data: Json): string {
  return (name === null ? '' : `event: ${name}\n`) + `data: ${JSON.stringify(data)}`;
}

/** What a stream shape may do: write events out, ask the judges. */
export interface GateIO {
  out(eventText: string): void;
  verdicts(calls: readonly ToolCall[]): MaybePromise<ToolVerdict[]>;
}

/** How one streaming wire format carries tool calls. */
export abstract class StreamShape {
  constructor(protected readonly io: GateIO) {}
  /** Texts one of which every event that starts or concerns a tool call contains. */
  abstract readonly markers: readonly string[];
  /** Whether events without a marker may skip this shape entirely. */
  abstract readonly idle: boolean;
  /** Takes one event; returns a promise while a decision on held tool calls is being made. */
  abstract accept(ev: SseEvent): Promise<void> | undefined;
  /** The upstream ended: decide on whatever is still held. */
  abstract end(): Promise<void> | undefined;
}
