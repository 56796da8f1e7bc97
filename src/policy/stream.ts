import { redact, type DlpMatch, type DlpScanner } from './dlp/index.js';
import { enginesFor } from './engines.js';
import { inspectBody, type Finding } from './inspect.js';
import type { PolicyConfig } from './policy-config.js';
import { setText, walkTexts } from './walk.js';
import { isJsonObject } from '../lib/json.js';
import { isWhitespace, trailingRunStart } from '../lib/trailing-run.js';
import { EventShape, literalAt, type ShapedDelta } from './event-shape.js';

type Json = Record<string, unknown>;

const DIGIT_OR_AT = /[0-9@]/;
const EMAIL_LOCAL_PART = /^[A-Za-z0-9._%+-]+$/;
/** An IBAN starts with two letters (its country), in either case. */
const IBAN_COUNTRY_START = /(^|[^A-Za-z])[A-Za-z]{1,2}$/;
/** A phone number may start with '+' or '('. */
const PHONE_START = /[+(]$/;
/** The SSN and phone keywords of rules/dlp.json, followed by no digit yet. */
const TRAILING_KEYWORD = /(?:^|[^A-Za-z])(?:ssn|ss#|social[ _-]?security|telephone|phone|tel|mobile|cell|fax|whatsapp|sms)[^0-9]{0,16}$/i;
/** The longest keyword plus the 16 characters a validator allows before the digits. */
const KEYWORD_WINDOW = 64;

/** One streamed text: a choice's content, a tool call's arguments, an Anthropic content block… */
interface Channel {
  held: string;
  /**
   * The last event that carried text for this channel, made to carry the held text at the end:
   * cloned when it was parsed, or as the raw text its run's shape read.
   */
  template: ParsedEvent | ShapedEvent;
  /** Where in an event of this shape the text lives. */
  access: TextAccess;
}

interface TextAccess {
  get(data: Json): string | undefined;
  set(data: Json, text: string): void;
}

interface ParsedEvent {
  /** The `event:` field, if any. */
  name: string | null;
  data: Json;
}

/** An event read as text by its run's shape. */
interface ShapedEvent {
  readonly raw: string;
  /** Where its delta's literal stands. */
  readonly delta: ShapedDelta;
  readonly run: ShapedRun;
}

/** A text delta inside one event, found by shape. */
interface Delta {
  channel: string;
  access: TextAccess;
  /**
   * For text carried by an event that opens its channel (`content_block_start`,
   * `response.output_item.added`): the delta event that carries the rest of the channel's text,
   * so held text never goes out as a second opening event.
   */
  continuation?: ParsedEvent;
}

/** Accessors by path, made once: every event of one shape shares its accessor. */
const ACCESSORS = new Map<string, TextAccess>();
/** Bounds the cache: paths hold array positions, and a provider may send many choices or parts. */
const MAX_ACCESSORS = 1024;

function path(...keys: Array<string | number>): TextAccess {
  const key = keys.join('.');
  let access = ACCESSORS.get(key);
  if (access === undefined) {
    access = accessorOf(keys);
    if (ACCESSORS.size < MAX_ACCESSORS) ACCESSORS.set(key, access);
  }
  return access;
}

function accessorOf(keys: ReadonlyArray<string | number>): TextAccess {
  const parents = keys.slice(0, -1);
  const last = keys.at(-1)!;
  return {
    get(data) {
      let node: unknown = data;
      for (const k of keys) node = isJsonObject(node) || Array.isArray(node) ? (node as Record<string | number, unknown>)[k] : undefined;
      return typeof node === 'string' ? node : undefined;
    },
    set(data, text) {
      let node = data as Record<string | number, unknown>;
      for (const k of parents) node = node[k] as Record<string | number, unknown>;
      node[last] = text;
    },
  };
}

/** The deltas of `candidates` whose text field holds a string in `data`. */
function present(data: Json, candidates: readonly Delta[]): Delta[] {
  return candidates.filter((d) => d.access.get(data) !== undefined);
}

/** Anthropic content block deltas by their type, with the field that carries the text. */
const ANTHROPIC_DELTA_FIELDS: Readonly<Record<string, string>> = { text_delta: 'text', thinking_delta: 'thinking', input_json_delta: 'partial_json' };

function anthropicDeltas(data: Json): Delta[] {
  const channel = `block.${String(data.index)}`;
  if (data.type === 'content_block_delta' && isJsonObject(data.delta)) {
    const field = ANTHROPIC_DELTA_FIELDS[String(data.delta.type)];
    return field === undefined ? [] : present(data, [{ channel, access: path('delta', field) }]);
  }
  if (data.type === 'content_block_start' && isJsonObject(data.content_block)) {
    const block = data.content_block;
    const [field, deltaType] = block.type === 'thinking' ? ['thinking', 'thinking_delta'] : ['text', 'text_delta'];
    const continuation = { name: 'content_block_delta', data: { type: 'content_block_delta', index: data.index, delta: { type: deltaType, [field]: '' } } };
    return present(data, [{ channel, access: path('content_block', field), continuation }]);
  }
  return [];
}

/** Responses API delta events, by type: the text field is always `delta`. */
const RESPONSES_DELTA_TYPES = new Set([
  'response.output_text.delta',
  'response.refusal.delta',
  'response.function_call_arguments.delta',
  'response.reasoning_summary_text.delta',
  'response.reasoning_text.delta',
]);

/** The channel of a Responses text: per output item, per content part, summary part or arguments. */
function responsesChannel(outputIndex: unknown, part: string): string {
  return `item.${String(outputIndex)}.${part}`;
}

function responsesDeltas(data: Json): Delta[] {
  const type = String(data.type);
  if (RESPONSES_DELTA_TYPES.has(type)) {
    const part =
      type === 'response.function_call_arguments.delta' ? 'args' : type === 'response.reasoning_summary_text.delta' ? `summary.${String(data.summary_index)}` : String(data.content_index ?? 0);
    return present(data, [{ channel: responsesChannel(data.output_index, part), access: path('delta') }]);
  }
  if (type !== 'response.output_item.added' || !isJsonObject(data.item)) return [];
  const item = data.item;
  const at = { output_index: data.output_index, item_id: item.id };
  const continuation = (deltaType: string, fields: Json = {}): ParsedEvent => ({ name: deltaType, data: { type: deltaType, ...at, ...fields, delta: '' } });
  const found: Delta[] = [{ channel: responsesChannel(data.output_index, 'args'), access: path('item', 'arguments'), continuation: continuation('response.function_call_arguments.delta') }];
  (Array.isArray(item.content) ? item.content : []).forEach((part: unknown, i: number) => {
    const refusal = isJsonObject(part) && part.type === 'refusal';
    const field = refusal ? 'refusal' : 'text';
    const deltaType = refusal ? 'response.refusal.delta' : 'response.output_text.delta';
    found.push({ channel: responsesChannel(data.output_index, String(i)), access: path('item', 'content', i, field), continuation: continuation(deltaType, { content_index: i }) });
  });
  (Array.isArray(item.summary) ? item.summary : []).forEach((_: unknown, i: number) => {
    const deltaType = 'response.reasoning_summary_text.delta';
    found.push({ channel: responsesChannel(data.output_index, `summary.${i}`), access: path('item', 'summary', i, 'text'), continuation: continuation(deltaType, { summary_index: i }) });
  });
  return present(data, found);
}

/** The text fields of an OpenAI chat delta, each streamed as a channel of its own. */
const CHAT_DELTA_FIELDS = [
  ['content', ''],
  ['refusal', '.refusal'],
  ['reasoning_content', '.reasoning'],
  ['reasoning', '.reasoning'],
] as const;

function chatDeltas(choices: unknown[]): Delta[] {
  const out: Delta[] = [];
  for (let i = 0; i < choices.length; i++) {
    const choice = choices[i];
    if (!isJsonObject(choice)) continue;
    const n = typeof choice.index === 'number' ? choice.index : i;
    if (typeof choice.text === 'string') out.push({ channel: `choice.${n}`, access: path('choices', i, 'text') });
    const delta = choice.delta;
    if (!isJsonObject(delta)) continue;
    for (const [field, suffix] of CHAT_DELTA_FIELDS) {
      if (typeof delta[field] === 'string') out.push({ channel: `choice.${n}${suffix}`, access: path('choices', i, 'delta', field) });
    }
    if (!Array.isArray(delta.tool_calls)) continue;
    delta.tool_calls.forEach((call: unknown, j: number) => {
      if (isJsonObject(call) && isJsonObject(call.function) && typeof call.function.arguments === 'string') {
        out.push({ channel: `choice.${n}.tool.${String(call.index ?? j)}`, access: path('choices', i, 'delta', 'tool_calls', j, 'function', 'arguments') });
      }
    });
  }
  return out;
}

/** The text deltas an event carries, per provider shape. */
function deltasOf(data: Json): Delta[] {
  if (typeof data.type === 'string' && data.type.startsWith('content_block_')) return anthropicDeltas(data);
  if (typeof data.type === 'string' && data.type.startsWith('response.')) return responsesDeltas(data);
  // OpenAI chat and legacy completions.
  if (Array.isArray(data.choices)) return chatDeltas(data.choices);
  return [];
}

const NO_CHANNELS: ReadonlySet<string> = new Set();

/** Whether an event may close a channel: most events do not, and `closedBy` is not asked about them. */
function mayClose(data: Json): boolean {
  const type = data.type;
  if (typeof type === 'string') {
    if (type === 'content_block_stop' || type === 'message_stop' || type === 'message_delta' || type === 'response.completed' || type.endsWith('.done')) return true;
  }
  return Array.isArray(data.choices) && data.choices.some((c) => isJsonObject(c) && c.finish_reason != null);
}

/** Channels an event closes: their held text must go out before it, or with it. */
function closedBy(data: Json, open: Iterable<string>): string[] {
  const all = [...open];
  if (data.type === 'content_block_stop') return all.filter((c) => c === `block.${String(data.index)}`);
  if (data.type === 'message_stop' || data.type === 'message_delta' || data.type === 'response.completed') return all;
  if (typeof data.type === 'string' && data.type.endsWith('.done') && typeof data.output_index === 'number') {
    return all.filter((c) => c.startsWith(`item.${data.output_index}.`));
  }
  if (Array.isArray(data.choices)) {
    const finished = data.choices.filter((c): c is Json => isJsonObject(c) && c.finish_reason != null).map((c) => `choice.${String(c.index ?? 0)}`);
    return all.filter((c) => finished.some((f) => c === f || c.startsWith(f + '.')));
  }
  return [];
}

/** Events that repeat whole texts already streamed as deltas (Responses API summaries). */
function carriesFullText(data: Json): boolean {
  return typeof data.type === 'string' && (data.type.endsWith('.done') || data.type === 'response.completed');
}

/**
 * Turns a cloned delta event into a bare continuation: no text of any channel, no usage, and in
 * OpenAI chunks none of the fields that start a message or a tool call, so a client that
 * accumulates deltas neither repeats a tool call's name nor counts usage twice. Returns whether
 * it took away more than the texts: a null usage (in every chunk of an OpenAI stream that asks
 * for usage) counts nothing, and may stay.
 */
function asContinuation(data: Json): boolean {
  for (const d of deltasOf(data)) d.access.set(data, '');
  let stripped = data.usage != null;
  drop(data, 'usage');
  if (!Array.isArray(data.choices)) return stripped;
  for (const choice of data.choices) {
    if (!isJsonObject(choice) || !isJsonObject(choice.delta)) continue;
    if (choice.finish_reason != null) stripped = true;
    choice.finish_reason = null;
    stripped = drop(choice.delta, 'role') || stripped;
    if (!Array.isArray(choice.delta.tool_calls)) continue;
    for (const call of choice.delta.tool_calls) {
      if (!isJsonObject(call)) continue;
      stripped = drop(call, 'id') || stripped;
      stripped = drop(call, 'type') || stripped;
      if (isJsonObject(call.function)) stripped = drop(call.function, 'name') || stripped;
    }
  }
  return stripped;
}

function drop(data: Json, key: string): boolean {
  if (!(key in data)) return false;
  delete data[key];
  return true;
}

/** `data: [DONE]`, OpenAI's end of stream: nothing may follow it. */
const DONE = /^data: ?\[DONE\]\s*$/m;

function parseEvent(raw: string): ParsedEvent | null {
  let name: string | null = null;
  let data = '';
  // Most events are one `data:` line; splitting is only paid for the others.
  const lines = raw.startsWith('data:') && !raw.includes('\n') ? [raw] : raw.split('\n');
  for (const line of lines) {
    if (line.startsWith('event:')) name = line.slice(6).trim();
    else if (line.startsWith('data:')) data += line.slice(5).trimStart();
  }
  if (data === '' || data === '[DONE]') return null;
  try {
    const parsed: unknown = JSON.parse(data);
    return isJsonObject(parsed) ? { name, data: parsed } : null;
  } catch {
    return null;
  }
}

/** The text an event shape is verified with: no provider sends it. */
const PROBE_TEXT = '\u0000svc-shape-probe\u0000';

const MAX_FRUITLESS_SHAPES = 4;

/** A run of events of one shape and the delta they carry. */
interface ShapedRun {
  readonly shape: EventShape;
  readonly delta: Delta;
  /** Whether an event of the shape was parsed and found to carry its one delta at the hole. */
  verified: boolean;
  /** Verified, and its events carry nothing but their text: held text goes out in one with only its text replaced. */
  bare: boolean;
}

/**
 * Runs verified in earlier streams, most recently used first. Shapes leave ids and times out, so
 * the streams of one provider's model share them: a new stream's deltas are read as text from its
 * first, with no event parsed and no probe.
 */
const knownRuns: ShapedRun[] = [];
const MAX_KNOWN_RUNS = 16;
/**
 * A stream whose events matched no known run this often is not asked again: its other events (a
 * role, a finish, usage, an Anthropic preamble) cost a failed match against each known run.
 */
const MAX_KNOWN_MISSES = 8;

function rememberRun(run: ShapedRun): void {
  const key = run.shape.key;
  if (knownRuns.some((known) => known.shape.key === key)) return;
  knownRuns.unshift(run);
  if (knownRuns.length > MAX_KNOWN_RUNS) knownRuns.pop();
}

/** A verified run as the stream of `raw`, an event of it, goes on: with that stream's ids. */
function ownRun(run: ShapedRun, raw: string): ShapedRun {
  return { shape: run.shape.specialised(raw), delta: run.delta, verified: true, bare: run.bare };
}

/** The known run `raw` is an event of, moved to the front, and its delta. */
function knownRunOf(raw: string): { run: ShapedRun; delta: ShapedDelta } | null {
  for (let i = 0; i < knownRuns.length; i++) {
    const run = knownRuns[i]!;
    const delta = run.shape.match(raw);
    if (delta === null) continue;
    if (i > 0) knownRuns.unshift(...knownRuns.splice(i, 1));
    return { run, delta };
  }
  return null;
}

/** `raw` with the literal from `start` to `end` replaced by the literal of `text`, as a whole event. */
function withLiteral(raw: string, start: number, end: number, text: string): string {
  return raw.slice(0, start) + JSON.stringify(text) + raw.slice(end) + '\n\n';
}

/** The event `text` holds when it is exactly one, framed by a blank line and no CR; else null. */
function singleEvent(text: string): string | null {
  const end = text.length - 2;
  if (end <= 0 || text.indexOf('\n\n') !== end || text.includes('\r')) return null;
  return text.slice(0, end);
}

/** Whether an event's text is only blank lines (as between events separated by more than one). */
function isBlank(raw: string): boolean {
  return raw.length === 0 || raw.trim() === '';
}

function serialise(event: ParsedEvent): string {
  return (event.name !== null ? `event: ${event.name}\n` : '') + `data: ${JSON.stringify(event.data)}\n\n`;
}

/**
 * Redacts a live SSE stream with a bounded hold-back: per channel, only the last
 * `maxMatchLength` characters (the longest text any enabled detector can match) are held, so a
 * value split across deltas and frames is still caught whole, and the response is never
 * buffered. Held text goes out, redacted, just before the event that closes its channel.
 * A blocking detector replaces the rest of the response with a notice the agent can read.
 */
export class StreamRedactor {
  readonly findings: Finding[] = [];
  blockedBy: Finding | null = null;
  private readonly channels = new Map<string, Channel>();
  private readonly dlp: DlpScanner;
  private readonly hold: number;
  /** SSN or phone detection is on: both accept bare digits right after a keyword. */
  private readonly keywordAnchored: boolean;
  /** The shape of the last event that carried one delta and closed nothing: the next are matched as text. */
  private run: ShapedRun | null = null;
  /**
   * Shapes made in a row that no event matched: past MAX_FRUITLESS_SHAPES the provider's events
   * differ in more than their text, and the rest of the stream is only parsed.
   */
  private fruitlessShapes = 0;
  private knownMisses = 0;

  constructor(private readonly policy: PolicyConfig) {
    const engines = enginesFor(policy);
    if (engines.dlp === null) throw new Error('StreamRedactor needs at least one PII detector on');
    this.dlp = engines.dlp;
    this.hold = engines.dlp.maxMatchLength;
    this.keywordAnchored = policy.pii['pii.ssn'] !== undefined || policy.pii['pii.phone'] !== undefined;
  }

  /** Whether the policy asks anything of a response stream. */
  static needed(policy: PolicyConfig): boolean {
    return Object.keys(policy.pii).length > 0;
  }

  /**
   * Rewrites a run of complete SSE events (`text` is `events` decoded, when the caller has it).
   * Consecutive events of one run are taken in together: they leave in this one write, so text
   * held between them would be held for nothing, and only the last carries what stays back.
   */
  push(events: Buffer, text = events.toString('utf8')): Buffer {
    const single = singleEvent(text);
    if (single !== null) return this.pushOne(events, single);
    let out = '';
    let changed = false;
    let batch: ShapedEvent[] = [];
    const crlf = text.includes('\r');
    const releaseBatch = (): void => {
      const rewritten = this.rewriteBatch(batch);
      if (rewritten === null) for (const event of batch) out += event.raw + '\n\n';
      else {
        out += rewritten;
        changed = true;
      }
      batch = [];
    };
    for (const raw of crlf ? text.split(/\n\n|\r\n\r\n/) : text.split('\n\n')) {
      if (isBlank(raw)) continue;
      const shaped = crlf ? null : this.shapedEvent(raw);
      if (batch.length > 0 && shaped?.run !== batch[0]!.run) releaseBatch();
      if (shaped !== null) {
        batch.push(shaped);
        continue;
      }
      const rewritten = this.rewriteParsed(raw, crlf);
      if (rewritten === null) out += raw + '\n\n';
      else {
        out += rewritten;
        changed = true;
      }
    }
    if (batch.length > 0) releaseBatch();
    return changed ? Buffer.from(out) : events;
  }

  /** `push` of a read that is one event, as a provider trickling tokens sends them: no splitting, no batch. */
  private pushOne(events: Buffer, raw: string): Buffer {
    if (isBlank(raw)) return events;
    const shaped = this.shapedEvent(raw);
    const rewritten = shaped !== null ? this.rewriteBatch([shaped]) : this.rewriteParsed(raw, false);
    return rewritten === null ? events : Buffer.from(rewritten);
  }

  /** `raw` as an event of the current run, or of a run known from earlier streams; null when it is of neither. */
  private shapedEvent(raw: string): ShapedEvent | null {
    const run = this.run;
    const shaped = run === null ? null : run.shape.match(raw);
    if (shaped !== null && this.verified(run!, raw)) return { raw, delta: shaped, run: this.run! };
    if (this.knownMisses >= MAX_KNOWN_MISSES) return null;
    const known = knownRunOf(raw);
    if (known === null) {
      this.knownMisses++;
      return null;
    }
    this.run = ownRun(known.run, raw);
    return { raw, delta: known.delta, run: this.run };
  }

  /** The new text of an event of no run (with any flushed channels before it), or null when it goes out unchanged. */
  private rewriteParsed(raw: string, crlf: boolean): string | null {
    const event = parseEvent(crlf ? raw.replace(/\r\n/g, '\n') : raw);
    if (event !== null) return this.rewrite(event, raw, !crlf && this.fruitlessShapes < MAX_FRUITLESS_SHAPES);
    // Whatever is still held belongs before the end of the stream, where a client still reads it.
    const held = DONE.test(raw) ? this.flushAll() : '';
    return held === '' ? null : held + raw + '\n\n';
  }

  /**
   * Events of one run, in a row: their deltas taken in as one, and each edited in place to carry
   * its part of what is released, by position (the last carries the rest), or null when none changed.
   */
  private rewriteBatch(batch: readonly ShapedEvent[]): string | null {
    const run = batch[0]!.run;
    const held = this.channels.get(run.delta.channel)?.held ?? '';
    let incoming = '';
    for (const event of batch) incoming += event.delta.text;
    const released = this.admit(run.delta, batch.at(-1)!, incoming, false);
    let out = '';
    let changed = false;
    let from = 0;
    let to = held.length;
    for (let i = 0; i < batch.length; i++) {
      const { raw, delta } = batch[i]!;
      to += delta.text.length;
      const text = i === batch.length - 1 ? released.slice(from) : released.slice(from, to);
      from = Math.min(to, released.length);
      if (text === delta.text) out += raw + '\n\n';
      else {
        out += withLiteral(raw, delta.start, delta.end, text);
        changed = true;
      }
    }
    return changed ? out : null;
  }

  /**
   * A shape is trusted once an event built from it parses to the one delta, at the hole, closing
   * nothing; it is then remembered for other streams, and this one goes on with `raw`'s ids.
   */
  private verified(run: ShapedRun, raw: string): boolean {
    if (run.verified) return true;
    const probe = parseEvent(run.shape.probe(PROBE_TEXT));
    const deltas = probe === null ? [] : deltasOf(probe.data);
    const only = deltas.length === 1 ? deltas[0]! : null;
    run.verified =
      only !== null &&
      only.channel === run.delta.channel &&
      only.continuation === undefined &&
      only.access.get(probe!.data) === PROBE_TEXT &&
      !mayClose(probe!.data) &&
      !carriesFullText(probe!.data);
    if (!run.verified) {
      this.run = null;
      return false;
    }
    run.bare = !asContinuation(probe!.data);
    rememberRun(run);
    this.run = ownRun(run, raw);
    return true;
  }

  /**
   * Returns the new text of a parsed event (with any flushed channels before it), or null when
   * unchanged. An event that carries one delta and closes nothing starts a run of its shape.
   */
  private rewrite(event: ParsedEvent, raw: string, shapeable: boolean): string | null {
    const deltas = deltasOf(event.data);
    const closing = mayClose(event.data) ? new Set(closedBy(event.data, new Set([...this.channels.keys(), ...deltas.map((d) => d.channel)]))) : NO_CHANNELS;
    let prefix = '';
    // A channel whose last delta rides in the closing event (a chat chunk with both content and
    // finish_reason) goes out in that event, whole: the held text and the delta are scanned together.
    for (const name of closing) if (!deltas.some((d) => d.channel === name)) prefix += this.flush(name);
    let changed = prefix !== '';
    /** The one text this event changed, while it is the only change: the raw event can be edited in place. */
    let edit: { from: string; to: string } | null = null;
    let edits = 0;
    let first: string | undefined;
    for (const d of deltas) {
      const incoming = d.access.get(event.data)!;
      first ??= incoming;
      const released = this.admit(d, event, incoming, closing.has(d.channel));
      if (released !== incoming) {
        d.access.set(event.data, released);
        changed = true;
        if (edits++ === 0) edit = { from: incoming, to: released };
      }
    }
    const fullText = carriesFullText(event.data);
    if (fullText && this.redactFullText(event.data)) {
      changed = true;
      edits = 2;
    }
    // An empty text (OpenAI's first chunk, with the role) is no sample of a run: the next delta is.
    const startsRun = shapeable && deltas.length === 1 && deltas[0]!.continuation === undefined && closing.size === 0 && !fullText && first !== '';
    // The literal of the one changed (or the one carried) text, found in the raw event once: to
    // edit the event in place, which keeps every other byte of the provider's event and costs a
    // fraction of serialising it again, and as the shape of the run the event starts.
    const literal = edits === 1 ? JSON.stringify(edit!.from) : startsRun ? JSON.stringify(first) : null;
    const at = literal === null ? -1 : literalAt(raw, literal);
    if (startsRun) {
      if (this.run !== null) this.fruitlessShapes = this.run.verified ? 0 : this.fruitlessShapes + 1;
      this.run = at < 0 ? null : { shape: EventShape.around(raw, at, at + literal!.length), delta: deltas[0]!, verified: false, bare: false };
    }
    if (!changed) return null;
    // Only held text goes before it: the event itself goes out as the provider sent it.
    if (edits === 0) return prefix + raw + '\n\n';
    const spliced = edits === 1 && at >= 0 ? withLiteral(raw, at, at + literal!.length, edit!.to) : null;
    return prefix + (spliced ?? serialise(event));
  }

  /** Takes a delta into its channel and returns what may be released now: all of it when the event closes the channel. */
  private admit(delta: Delta, event: ParsedEvent | ShapedEvent, incoming: string, closing: boolean): string {
    const name = delta.channel;
    // Only referenced: the event is cloned if and when a flush needs it as a template.
    const template = delta.continuation ?? event;
    const access = delta.continuation === undefined ? delta.access : deltasOf(delta.continuation.data)[0]!.access;
    let channel = this.channels.get(name);
    if (channel === undefined) {
      channel = { held: '', template, access };
      this.channels.set(name, channel);
    }
    channel.template = template;
    channel.access = access;
    if (this.blockedBy !== null) return '';
    const buffer = channel.held + incoming;
    if (closing) {
      this.channels.delete(name);
      return this.release(buffer, this.dlp.scan(buffer));
    }
    let cut = this.releasable(buffer);
    if (channel.held === '' && cut === buffer.length && !DIGIT_OR_AT.test(buffer)) return incoming;
    const matches = cut === 0 ? [] : this.dlp.scan(buffer);
    // A match crossing the cut is held whole, with the context its validator reads before it
    // (an 'SSN:' or 'phone' keyword before bare digits), so it is found again on the next pass.
    for (const m of matches) if (m.start < cut && m.end > cut) cut = Math.max(0, Math.min(m.start, m.end - this.hold));
    channel.held = buffer.slice(cut);
    return this.release(buffer.slice(0, cut), matches.filter((m) => m.end <= cut));
  }

  /**
   * How much of `buffer` can go out now. Every detector's match holds a digit, save an email,
   * which holds an '@': when the last `hold` characters have neither, no match can be in
   * progress there except one just beginning, so only a trailing token that could begin one
   * is kept back, and ordinary prose streams through untouched.
   */
  private releasable(buffer: string): number {
    const windowStart = Math.max(0, buffer.length - this.hold);
    if (DIGIT_OR_AT.test(windowStart === 0 ? buffer : buffer.slice(windowStart))) return windowStart;
    if (this.keywordAnchored) {
      // Bare digits count as an SSN or phone only right after a keyword: hold a trailing keyword
      // whose digits have not arrived yet.
      const keyword = TRAILING_KEYWORD.exec(buffer.slice(-KEYWORD_WINDOW));
      if (keyword !== null) return buffer.length - (Math.min(buffer.length, KEYWORD_WINDOW) - keyword.index);
    }
    // What `\S*$` matches, read backwards: the expression tries every position of the buffer.
    const token = buffer.slice(trailingRunStart(buffer, (unit) => !isWhitespace(unit)));
    return token.length > 0 && this.mayBeginMatch(token) ? buffer.length - token.length : buffer.length;
  }

  private mayBeginMatch(token: string): boolean {
    const pii = this.policy.pii;
    return (
      (pii['pii.email'] !== undefined && EMAIL_LOCAL_PART.test(token)) ||
      (pii['pii.iban'] !== undefined && IBAN_COUNTRY_START.test(token)) ||
      (pii['pii.phone'] !== undefined && PHONE_START.test(token))
    );
  }

  /** Applies the policy to text leaving the proxy. */
  private release(text: string, matches: readonly DlpMatch[]): string {
    const toRedact: DlpMatch[] = [];
    for (const m of matches) {
      const action = this.policy.pii[m.detector]!;
      const finding: Finding = { detector: m.detector, where: 'stream', message: null, kind: 'message', action, confidence: m.confidence };
      this.findings.push(finding);
      if (action === 'block' && this.blockedBy === null) this.blockedBy = finding;
      else if (action === 'redact') toRedact.push(m);
    }
    if (this.policy.shadow) return text;
    if (this.blockedBy !== null) return `[svc: the rest of this response was withheld: it contained ${this.blockedBy.detector}]`;
    return toRedact.length > 0 ? redact(text, toRedact) : text;
  }

  /**
   * A summary event repeating whole texts: redacted like a complete body, or emptied once the
   * response was blocked. Its findings were already counted on the deltas.
   */
  private redactFullText(data: Json): boolean {
    if (this.policy.shadow) return false;
    const verdict = inspectBody(this.policy, data).verdict;
    if (this.blockedBy === null && verdict !== 'blocked') return verdict === 'modified';
    walkTexts(data, (leaf) => setText(data, leaf.path, ''));
    return true;
  }

  /** The held text of a channel as one more delta event, or '' when nothing is held. */
  private flush(name: string): string {
    const channel = this.channels.get(name);
    this.channels.delete(name);
    if (channel === undefined || channel.held === '' || this.blockedBy !== null) return '';
    const text = this.release(channel.held, this.dlp.scan(channel.held));
    const template = channel.template;
    if ('raw' in template && template.run.bare) return withLiteral(template.raw, template.delta.start, template.delta.end, text);
    const event = 'raw' in template ? parseEvent(template.raw)! : { name: template.name, data: structuredClone(template.data) };
    asContinuation(event.data);
    channel.access.set(event.data, text);
    return serialise(event);
  }

  private flushAll(): string {
    let out = '';
    for (const name of [...this.channels.keys()]) out += this.flush(name);
    return out;
  }

  /** Whatever is still held when the upstream ends without closing its channels. */
  finish(): Buffer | null {
    const out = this.flushAll();
    return out === '' ? null : Buffer.from(out);
  }
}
