import type { RouteKind } from './routes.js';
import { isJsonObject, parseJsonObject } from '../lib/json.js';

/**
 * Writes a governance note (a decide VIOLATION / AMBIGUOUS) into a response, in the route's own
 * shape, so the agent reads it as part of the answer. Chat completions and Anthropic messages
 * carry notes; other routes pass untouched.
 */
export type JudgeText = (text: string) => Promise<string | null>;

export function carriesNotes(kind: RouteKind): boolean {
  return kind === 'chat' || kind === 'messages';
}

type Json = Record<string, unknown>;

/** The assistant text of a complete response. */
export function responseText(kind: RouteKind, body: Json): string {
  if (kind === 'chat') {
    const choices = Array.isArray(body.choices) ? body.choices : [];
    return choices.map((c) => (isJsonObject(c) && isJsonObject(c.message) && typeof c.message.content === 'string' ? c.message.content : '')).join('\n');
  }
  const content = Array.isArray(body.content) ? body.content : [];
  return content.map((b) => (isJsonObject(b) && b.type === 'text' && typeof b.text === 'string' ? b.text : '')).join('\n');
}

/** The response with `note` appended to its text (chat: the first choice's message; messages: a new text block). */
export function withNote(kind: RouteKind, body: Json, note: string): Json {
  if (kind === 'chat') {
    const choices = Array.isArray(body.choices) ? [...body.choices] : [];
    const first = choices[0];
    if (!isJsonObject(first) || !isJsonObject(first.message)) return body;
    const content = typeof first.message.content === 'string' && first.message.content.length > 0 ? `${first.message.content}\n\n${note}` : note;
    choices[0] = { ...first, message: { ...first.message, content } };
    return { ...body, choices };
  }
  const content = Array.isArray(body.content) ? body.content : [];
  return { ...body, content: [...content, { type: 'text', text: note }] };
}

/** Judges a complete non-streamed response and returns the bytes to relay. */
export async function annotateBody(kind: RouteKind, body: Buffer, judge: JudgeText): Promise<Buffer> {
  const parsed = parseJsonObject(body);
  if (parsed === null) return body;
  const note = await judge(responseText(kind, parsed));
  return note === null ? body : Buffer.from(JSON.stringify(withNote(kind, parsed, note)));
}

const OPENAI_DONE = /^data: ?\[DONE\]\s*$/;
const ANTHROPIC_STOP = /^event: ?message_stop\b/;

/**
 * Follows a streamed response: collects its text as events pass and holds back the terminal
 * event (`data: [DONE]`, Anthropic's `message_stop`), so the note can go out after the last
 * content event and before the stream closes.
 */
export class StreamNoteTap {
  private text = '';
  private held: string[] = [];
  private blocks = 0;
  private id: unknown = undefined;
  private model: unknown = undefined;
  private created: unknown = undefined;

  constructor(
    private readonly kind: RouteKind,
    private readonly judge: JudgeText,
  ) {}

  /** Complete events in; the same events out, minus the terminal one. */
  observe(events: Buffer): Buffer {
    const source = events.toString('utf8');
    const parts = source.split(/(?<=\n\n|\r\n\r\n)/);
    let kept = '';
    let removed = false;
    for (const event of parts) {
      if (event.length === 0) continue;
      if (this.isTerminal(event)) {
        this.held.push(event);
        removed = true;
        continue;
      }
      this.read(event);
      kept += event;
    }
    return removed ? Buffer.from(kept) : events;
  }

  /** Judges the collected text; the note event (if any) and the held terminal event, in order. */
  async finish(): Promise<Buffer> {
    const note = await this.judge(this.text);
    const tail = note === null ? '' : this.noteEvents(note);
    return Buffer.from(tail + this.held.join(''));
  }

  private isTerminal(event: string): boolean {
    const first = event.trimStart();
    return this.kind === 'chat' ? OPENAI_DONE.test(first.split('\n')[0] ?? '') : ANTHROPIC_STOP.test(first);
  }

  private read(event: string): void {
    for (const line of event.split('\n')) {
      if (!line.startsWith('data:')) continue;
      let data: unknown;
      try {
        data = JSON.parse(line.slice(5));
      } catch {
        continue;
      }
      if (!isJsonObject(data)) continue;
      if (this.kind === 'chat') {
        this.id ??= data.id;
        this.model ??= data.model;
        this.created ??= data.created;
        const choices = Array.isArray(data.choices) ? data.choices : [];
        for (const c of choices) {
          if (isJsonObject(c) && isJsonObject(c.delta) && typeof c.delta.content === 'string') this.text += c.delta.content;
        }
      } else if (data.type === 'content_block_start') {
        this.blocks = Math.max(this.blocks, (typeof data.index === 'number' ? data.index : 0) + 1);
      } else if (data.type === 'content_block_delta' && isJsonObject(data.delta) && typeof data.delta.text === 'string') {
        this.text += data.delta.text;
      }
    }
  }

  private noteEvents(note: string): string {
    if (this.kind === 'chat') {
      const chunk = { id: this.id ?? 'chatcmpl-svc-note', object: 'chat.completion.chunk', created: this.created ?? Math.floor(Date.now() / 1000), model: this.model ?? '', choices: [{ index: 0, delta: { content: `\n\n${note}` }, finish_reason: null }] };
      return `data: ${JSON.stringify(chunk)}\n\n`;
    }
    const index = this.blocks;
    return (
      `event: content_block_start\ndata: ${JSON.stringify({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } })}\n\n` +
      `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: note } })}\n\n` +
      `event: content_block_stop\ndata: ${JSON.stringify({ type: 'content_block_stop', index })}\n\n`
    );
  }
}
