import type { ToolCall, ToolVerdict } from '../policy/tool-judge.js';
import type { RouteKind } from './routes.js';
import { responsesMessageItem } from './tool-calls.js';
import { toolCallNotice, type RefusedVerdict, type ToolCallReview } from './tool-calls-review.js';
import { isJsonObject } from '../lib/json.js';

type Json = Record<string, unknown>;
const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** One server-sent event: its raw text (without the blank line) and, when its data is a JSON object, that. */
interface SseEvent {
  readonly raw: string;
  readonly name: string | null;
  readonly data: Json | null;
}

function parseEvents(buf: Buffer): SseEvent[] {
  const out: SseEvent[] = [];
  for (const raw of buf.toString('utf8').split(/\r?\n\r?\n/)) {
    if (raw.trim() === '') continue;
    let name: string | null = null;
    let data = '';
    for (const line of raw.split(/\r?\n/)) {
      if (line.startsWith('event:')) name = line.slice(6).trim();
      else if (line.startsWith('data:')) data += (data === '' ? '' : '\n') + line.slice(line.startsWith('data: ') ? 6 : 5);
    }
    let parsed: unknown = null;
    if (data.startsWith('{')) {
      try {
        parsed = JSON.parse(data);
      } catch {
        parsed = null;
      }
    }
    out.push({ raw, name, data: isJsonObject(parsed) ? parsed : null });
  }
  return out;
}

const DONE = /^data: ?\[DONE\]/m;

function serialise(name: string | null, data: Json): string {
  return (name === null ? '' : `event: ${name}\n`) + `data: ${JSON.stringify(data)}`;
}

/** What a stream shape may do: write events out, ask the judges. */
interface GateIO {
  out(eventText: string): void;
  verdicts(calls: readonly ToolCall[]): Promise<ToolVerdict[]>;
}

/** How one streaming wire format carries tool calls. */
abstract class StreamShape {
  constructor(protected readonly io: GateIO) {}
  /** Text every event that starts or concerns a tool call contains. */
  abstract readonly marker: string;
  /** Whether events without the marker may skip this shape entirely. */
  abstract readonly idle: boolean;
  /** Takes one event; returns a promise while a decision on held tool calls is being made. */
  abstract accept(ev: SseEvent): Promise<void> | undefined;
  /** The upstream ended: decide on whatever is still held. */
  abstract end(): Promise<void> | undefined;
}

interface PendingCall {
  id: string;
  name: string;
  args: string;
}

/**
 * OpenAI chat: from the first `delta.tool_calls` on, events are held until a choice finishes
 * (every call's arguments are then complete); refused calls' deltas are dropped and a content
 * delta carrying the notice goes out before the finishing event.
 */
class ChatShape extends StreamShape {
  readonly marker = '"tool_calls"';
  private held: SseEvent[] = [];
  /** Calls by `{choice}:{index}`. */
  private calls = new Map<string, PendingCall>();

  get idle(): boolean {
    return this.held.length === 0;
  }

  accept(ev: SseEvent): Promise<void> | undefined {
    const choices = asArray(ev.data?.choices).filter(isJsonObject);
    const deltas = choices.filter((c) => isJsonObject(c.delta) && Array.isArray(c.delta.tool_calls));
    if (this.held.length === 0 && deltas.length === 0) {
      this.io.out(ev.raw);
      return undefined;
    }
    this.held.push(ev);
    for (const choice of deltas) {
      for (const tc of asArray((choice.delta as Json).tool_calls).filter(isJsonObject)) {
        const key = `${String(choice.index ?? 0)}:${String(tc.index ?? 0)}`;
        let call = this.calls.get(key);
        if (call === undefined) this.calls.set(key, (call = { id: '', name: '', args: '' }));
        if (typeof tc.id === 'string') call.id = tc.id;
        if (isJsonObject(tc.function)) {
          call.name += str(tc.function.name);
          call.args += str(tc.function.arguments);
        }
      }
    }
    // `[DONE]` also ends it; other non-JSON events (SSE comments, keep-alives) are only held.
    const finished = DONE.test(ev.raw) || choices.some((c) => c.finish_reason !== null && c.finish_reason !== undefined);
    return finished ? this.decide() : undefined;
  }

  end(): Promise<void> | undefined {
    return this.held.length === 0 ? undefined : this.decide();
  }

  private async decide(): Promise<void> {
    const held = this.held;
    const entries = [...this.calls.entries()];
    this.held = [];
    this.calls = new Map();
    const verdicts = await this.io.verdicts(entries.map(([, c]) => ({ id: c.id, name: c.name, arguments: c.args })));
    const refused = new Map<string, { call: PendingCall; verdict: RefusedVerdict }>();
    entries.forEach(([key, call], i) => {
      const v = verdicts[i]!;
      if (v.action === 'allow') return;
      refused.set(key, { call, verdict: v });
    });
    if (refused.size === 0) {
      for (const ev of held) this.io.out(ev.raw);
      return;
    }
    for (const ev of held) this.rewrite(ev, refused, entries.map(([k]) => k));
  }

  private rewrite(ev: SseEvent, refused: ReadonlyMap<string, { call: PendingCall; verdict: RefusedVerdict }>, keys: readonly string[]): void {
    if (ev.data === null) {
      this.io.out(ev.raw);
      return;
    }
    let keep = ev.data.usage !== undefined && ev.data.usage !== null;
    for (const choice of asArray(ev.data.choices).filter(isJsonObject)) {
      const ci = String(choice.index ?? 0);
      const delta = isJsonObject(choice.delta) ? choice.delta : {};
      if (Array.isArray(delta.tool_calls)) {
        const kept = delta.tool_calls.filter((tc) => !refused.has(`${ci}:${String(isJsonObject(tc) ? (tc.index ?? 0) : 0)}`));
        if (kept.length > 0) delta.tool_calls = kept;
        else delete delta.tool_calls;
      }
      if (Object.keys(delta).length > 0) keep = true;
      if (choice.finish_reason === null || choice.finish_reason === undefined) continue;
      keep = true;
      const mine = [...refused.entries()].filter(([k]) => k.startsWith(`${ci}:`));
      if (mine.length === 0) continue;
      const notice = mine.map(([, r]) => toolCallNotice(r.call, r.verdict)).join('\n\n');
      const noticeEvent = { ...ev.data, choices: [{ index: choice.index ?? 0, delta: { content: notice }, logprobs: null, finish_reason: null }] };
      delete (noticeEvent as Json).usage;
      this.io.out(serialise(ev.name, noticeEvent));
      const remaining = keys.filter((k) => k.startsWith(`${ci}:`) && !refused.has(k));
      if (remaining.length === 0 && choice.finish_reason === 'tool_calls') choice.finish_reason = 'stop';
    }
    if (keep) this.io.out(serialise(ev.name, ev.data));
  }
}

/**
 * Anthropic messages: a `tool_use` content block is held from its start to its stop, then
 * released, or replaced by a text block (same index) carrying the notice. When no tool call is
 * left, `stop_reason: tool_use` becomes `end_turn`.
 */
class MessagesShape extends StreamShape {
  readonly marker = '"tool_use"';
  private current: (PendingCall & { index: unknown; held: SseEvent[] }) | null = null;
  private allowed = 0;
  private refusedCount = 0;

  get idle(): boolean {
    return this.current === null;
  }

  accept(ev: SseEvent): Promise<void> | undefined {
    const data = ev.data;
    const type = data?.type;
    if (this.current === null) {
      if (data !== null && type === 'content_block_start' && isJsonObject(data.content_block) && data.content_block.type === 'tool_use') {
        this.current = { index: data.index, id: str(data.content_block.id), name: str(data.content_block.name), args: '', held: [ev] };
        return undefined;
      }
      if (data !== null && type === 'message_delta' && isJsonObject(data.delta) && data.delta.stop_reason === 'tool_use' && this.refusedCount > 0 && this.allowed === 0) {
        data.delta.stop_reason = 'end_turn';
        this.io.out(serialise(ev.name, data));
        return undefined;
      }
      this.io.out(ev.raw);
      return undefined;
    }
    const call = this.current;
    call.held.push(ev);
    if (data === null || data.index !== call.index) return undefined;
    if (type === 'content_block_delta' && isJsonObject(data.delta) && data.delta.type === 'input_json_delta') call.args += str(data.delta.partial_json);
    return type === 'content_block_stop' ? this.decide() : undefined;
  }

  end(): Promise<void> | undefined {
    return this.current === null ? undefined : this.decide();
  }

  private async decide(): Promise<void> {
    const call = this.current!;
    this.current = null;
    const toolCall = { id: call.id, name: call.name, arguments: call.args === '' ? '{}' : call.args };
    const [verdict] = await this.io.verdicts([toolCall]);
    if (verdict === undefined || verdict.action === 'allow') {
      this.allowed++;
      for (const ev of call.held) this.io.out(ev.raw);
      return;
    }
    this.refusedCount++;
    const event = (type: string, fields: Json) => this.io.out(serialise(type, { type, ...fields }));
    event('content_block_start', { index: call.index, content_block: { type: 'text', text: '' } });
    event('content_block_delta', { index: call.index, delta: { type: 'text_delta', text: toolCallNotice(call, verdict) } });
    event('content_block_stop', { index: call.index });
    // Events of the stream itself (pings, comments) that arrived while the call was held still go out.
    for (const ev of call.held) if (ev.data === null || ev.data.index !== call.index) this.io.out(ev.raw);
  }
}

/**
 * OpenAI Responses: a `function_call` output item is held from `output_item.added` to
 * `output_item.done`, then released or replaced by a message item carrying the notice. After a
 * replacement, sequence numbers are rewritten to stay consecutive and the final response's output
 * lists the message in place of the call.
 */
class ResponsesShape extends StreamShape {
  readonly marker = '"function_call"';
  private current: (PendingCall & { outputIndex: unknown; held: SseEvent[] }) | null = null;
  /** Next sequence number, once a replacement changed the count of events. */
  private sequence: number | null = null;
  private readonly replaced = new Map<string, Json>();

  get idle(): boolean {
    return this.current === null && this.sequence === null;
  }

  accept(ev: SseEvent): Promise<void> | undefined {
    const data = ev.data;
    const type = data?.type;
    if (this.current === null) {
      if (data !== null && type === 'response.output_item.added' && isJsonObject(data.item) && data.item.type === 'function_call') {
        this.current = { outputIndex: data.output_index, id: str(data.item.call_id), name: str(data.item.name), args: '', held: [ev] };
        return undefined;
      }
      if (data !== null && isJsonObject(data.response) && this.replaced.size > 0) {
        data.response.output = asArray(data.response.output).map((item) => (isJsonObject(item) ? (this.replaced.get(str(item.call_id)) ?? item) : item));
      }
      this.release(ev);
      return undefined;
    }
    const call = this.current;
    call.held.push(ev);
    if (data === null || data.output_index !== call.outputIndex) return undefined;
    if (type === 'response.function_call_arguments.delta') call.args += str(data.delta);
    else if (type === 'response.function_call_arguments.done') call.args = str(data.arguments);
    return type === 'response.output_item.done' ? this.decide() : undefined;
  }

  end(): Promise<void> | undefined {
    return this.current === null ? undefined : this.decide();
  }

  /** Writes an event out, renumbered once numbering has shifted. */
  private release(ev: SseEvent): void {
    if (this.sequence === null || ev.data === null || typeof ev.data.sequence_number !== 'number') {
      this.io.out(ev.raw);
      return;
    }
    ev.data.sequence_number = this.sequence++;
    this.io.out(serialise(ev.name, ev.data));
  }

  private async decide(): Promise<void> {
    const call = this.current!;
    this.current = null;
    const toolCall = { id: call.id, name: call.name, arguments: call.args };
    const [verdict] = await this.io.verdicts([toolCall]);
    if (verdict === undefined || verdict.action === 'allow') {
      for (const ev of call.held) this.release(ev);
      return;
    }
    const first = call.held[0]!.data!;
    this.sequence ??= typeof first.sequence_number === 'number' ? first.sequence_number : 0;
    const text = toolCallNotice(call, verdict);
    const item = responsesMessageItem(`msg_svc_${call.id}`, text);
    this.replaced.set(call.id, item);
    const at = { item_id: item.id, output_index: call.outputIndex };
    const part = { type: 'output_text', text, annotations: [] };
    const event = (type: string, fields: Json) => this.io.out(serialise(type, { type, sequence_number: this.sequence!++, ...fields }));
    event('response.output_item.added', { output_index: call.outputIndex, item: { ...item, status: 'in_progress', content: [] } });
    event('response.content_part.added', { ...at, content_index: 0, part: { ...part, text: '' } });
    event('response.output_text.delta', { ...at, content_index: 0, delta: text, logprobs: [] });
    event('response.output_text.done', { ...at, content_index: 0, text, logprobs: [] });
    event('response.content_part.done', { ...at, content_index: 0, part });
    event('response.output_item.done', { output_index: call.outputIndex, item });
    for (const ev of call.held) if (ev.data === null || ev.data.output_index !== call.outputIndex) this.release(ev);
  }
}

const SHAPES: Partial<Record<RouteKind, new (io: GateIO) => StreamShape>> = { chat: ChatShape, messages: MessagesShape, responses: ResponsesShape };

/**
 * Sits in a streamed response between the upstream and the client: events pass straight through
 * until a tool call starts; its events are held until its arguments are complete, put to the
 * review, then released, or replaced by a notice the agent reads. Order is kept: events arriving
 * while a decision is pending wait behind it.
 */
export class ToolCallStreamGate {
  private readonly shape: StreamShape;
  private input: Buffer[] = [];
  private output: string[] = [];
  private draining: Promise<void> | null = null;

  private constructor(
    Shape: new (io: GateIO) => StreamShape,
    review: ToolCallReview,
    private readonly emit: (data: Buffer) => void,
  ) {
    this.shape = new Shape({ out: (text) => this.output.push(text), verdicts: (calls) => review.verdicts(calls) });
  }

  /** A gate for the route's stream format, or null when its streams carry no tool calls. */
  static for(kind: RouteKind, review: ToolCallReview, emit: (data: Buffer) => void): ToolCallStreamGate | null {
    const Shape = SHAPES[kind];
    return Shape === undefined ? null : new ToolCallStreamGate(Shape, review, emit);
  }

  /** Takes a run of complete events. */
  push(events: Buffer): void {
    if (this.draining === null && this.shape.idle && events.indexOf(this.shape.marker) < 0) {
      this.emit(events);
      return;
    }
    this.input.push(events);
    // Assigned before the drain starts, so the drain's own end can clear it.
    this.draining ??= Promise.resolve().then(() => this.drain());
  }

  /** Resolves once everything pushed has been written out, held calls decided. */
  async finish(): Promise<void> {
    while (this.draining !== null) await this.draining;
    const pending = this.shape.end();
    if (pending !== undefined) await pending;
    this.flush();
  }

  private async drain(): Promise<void> {
    try {
      while (this.input.length > 0) {
        for (const ev of parseEvents(this.input.shift()!)) {
          const pending = this.shape.accept(ev);
          if (pending === undefined) continue;
          this.flush();
          await pending;
        }
        this.flush();
      }
    } finally {
      this.draining = null;
    }
  }

  private flush(): void {
    if (this.output.length === 0) return;
    const text = this.output.join('\n\n') + '\n\n';
    this.output = [];
    this.emit(Buffer.from(text));
  }
}
