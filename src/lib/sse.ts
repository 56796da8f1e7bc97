import { isJsonObject, type JsonObject } from './json.js';

/**
 * Server-sent events as they come off the wire: a byte stream cut at event boundaries
 * (SseFramer), and a run of complete events read into their name and JSON data (parseSseEvents,
 * dataLinesWithObject). The proxy's relay and the client SDK both read streams with these.
 */

const LF_LF = Buffer.from('\n\n');
const CRLF_CRLF = Buffer.from('\r\n\r\n');

const LF = 0x0a;
const CR = 0x0d;

/** Index just past the last complete event in `buf` (after its blank line), or 0. */
function lastEventEnd(buf: Buffer): number {
  // The usual chunk ends on a boundary: no search, which for the boundary a stream does not use
  // would read the whole chunk backwards.
  const n = buf.length;
  if (n >= 2 && buf[n - 1] === LF && (buf[n - 2] === LF || (n >= 4 && buf[n - 2] === CR && buf[n - 3] === LF && buf[n - 4] === CR))) return n;
  const lf = buf.lastIndexOf(LF_LF);
  const crlf = buf.lastIndexOf(CRLF_CRLF);
  return Math.max(lf < 0 ? 0 : lf + 2, crlf < 0 ? 0 : crlf + 4);
}

/**
 * Cuts a byte stream into runs of complete server-sent events. A chunk that ends on an event
 * boundary (the usual case) passes through without a copy; a partial event is held until its
 * end arrives, so whatever the client has received always ends on a boundary and an error event
 * can be appended without corrupting the stream.
 */
export class SseFramer {
  private carry: Buffer | null = null;

  constructor(private readonly maxCarryBytes = 4 * 1024 * 1024) {}

  /** Complete events available after `chunk`, or null when it only extended a partial event. */
  push(chunk: Buffer): Buffer | null {
    const buf = this.carry === null ? chunk : Buffer.concat([this.carry, chunk]);
    const end = lastEventEnd(buf);
    if (end === buf.length) {
      this.carry = null;
      return buf;
    }
    if (end === 0) {
      // An event larger than the bound is not SSE we can frame; release it rather than hold it.
      if (buf.length > this.maxCarryBytes) {
        this.carry = null;
        return buf;
      }
      this.carry = buf;
      return null;
    }
    this.carry = buf.subarray(end);
    return buf.subarray(0, end);
  }

  /** Whatever partial event is held when the upstream ends. */
  flush(): Buffer | null {
    const rest = this.carry;
    this.carry = null;
    return rest;
  }
}

/** One server-sent event: its raw text (without the blank line) and, when its data is a JSON object, that. */
export interface SseEvent {
  readonly raw: string;
  /** The `event:` field, if any. */
  readonly name: string | null;
  readonly data: JsonObject | null;
}

/**
 * The events of a run of complete events (as SseFramer returns them). Multi-line data is joined
 * with newlines; data that is not a JSON object (`[DONE]`, keep-alives) reads as null.
 */
export function parseSseEvents(events: Buffer): SseEvent[] {
  const out: SseEvent[] = [];
  for (const raw of events.toString('utf8').split(/\r?\n\r?\n/)) {
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

const DATA_PREFIX = 'data:';

const SPACE = 0x20;
const TAB = 0x09;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;

/** Whether the JSON after a key's closing quote at `at` - 1 is `: {`, blanks allowed: the key holds an object. */
function objectFollows(events: string, at: number): boolean {
  let i = at;
  while (events.charCodeAt(i) === SPACE || events.charCodeAt(i) === TAB) i++;
  if (events.charCodeAt(i++) !== COLON) return false;
  while (events.charCodeAt(i) === SPACE || events.charCodeAt(i) === TAB) i++;
  return events.charCodeAt(i) === OPEN_BRACE;
}

/**
 * The JSON payloads of the `data:` lines in a run of complete events (as text) where a key ending
 * with `keyEnd` (its name and closing quote, such as `usage"`) holds an object. Only those lines
 * are parsed: OpenAI gives every chunk of a stream `"usage":null` and one chunk the figures.
 */
export function dataLinesWithObject(events: string, keyEnd: string): unknown[] {
  const out: unknown[] = [];
  for (let at = events.indexOf(keyEnd); at >= 0; ) {
    if (!objectFollows(events, at + keyEnd.length)) {
      at = events.indexOf(keyEnd, at + keyEnd.length);
      continue;
    }
    const start = events.lastIndexOf('\n', at) + 1;
    const newline = events.indexOf('\n', at);
    const line = events.slice(start, newline < 0 ? events.length : newline);
    if (line.startsWith(DATA_PREFIX)) {
      try {
        out.push(JSON.parse(line.slice(DATA_PREFIX.length)));
      } catch {
        // Not JSON: nothing to read.
      }
    }
    at = newline < 0 ? -1 : events.indexOf(keyEnd, newline);
  }
  return out;
}
