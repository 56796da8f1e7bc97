import { isJsonObject } from '../lib/json.js';
import type { TraceRecord } from './trace.js';

/**
 * What `JSON.stringify` writes between quotes unchanged: no quote, backslash, control character
 * or surrogate (a lone surrogate is escaped; a text holding one goes to it).
 */
const VERBATIM = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

// Each writer takes a missing value as null, so a line is JSON whatever a caller left out.
function text(value: string | null): string {
  return value == null ? 'null' : VERBATIM.test(value) ? `"${value}"` : JSON.stringify(value);
}

function number(value: number | null): string {
  return value == null || !Number.isFinite(value) ? 'null' : String(value);
}

function flag(value: boolean): string {
  return value === true ? 'true' : 'false';
}

/** An object or a list as `JSON.stringify` writes it; an empty list, as most are, without the call. */
function nested(value: object | null): string {
  return value == null ? 'null' : Array.isArray(value) && value.length === 0 ? '[]' : JSON.stringify(value);
}

/** The fields written below; the compiler refuses this module once TraceRecord has another. */
type Written =
  | 'id' | 'time' | 'workspace' | 'session' | 'harness' | 'route' | 'model' | 'provider' | 'stream' | 'status'
  | 'latencyMs' | 'ttfbMs' | 'overheadMs' | 'inputTokens' | 'outputTokens' | 'costUsd' | 'enforcement' | 'error'
  | 'incidentId' | 'findings' | 'shadow' | 'usageEstimated' | 'priceEstimated' | 'warnings' | 'attempts' | 'cache'
  | 'anomaly' | 'toolCalls' | 'requestRule' | 'responseRule' | 'mcp';
const everyFieldWritten: Exclude<keyof TraceRecord, Written> extends never ? true : never = true;
void everyFieldWritten;

/**
 * A trace record as one line of JSON, the same value `JSON.stringify` gives (and the same text
 * for a record built with its fields in this order), made once per record: the trace file, the
 * journal and the control plane take the same text. Written field by field, it is cheaper than
 * `JSON.stringify` (of this Node's V8, about 0.1 µs a field) on these records, most of whose fields
 * are null, empty or a plain word.
 */
export function traceLine(r: TraceRecord): string {
  return (
    `{"id":${text(r.id)},"time":${text(r.time)},"workspace":${text(r.workspace)},"session":${text(r.session)}` +
    `,"harness":${text(r.harness)},"route":${text(r.route)},"model":${text(r.model)},"provider":${text(r.provider)}` +
    `,"stream":${flag(r.stream)},"status":${number(r.status)},"latencyMs":${number(r.latencyMs)},"ttfbMs":${number(r.ttfbMs)}` +
    `,"overheadMs":${number(r.overheadMs)},"inputTokens":${number(r.inputTokens)},"outputTokens":${number(r.outputTokens)}` +
    `,"costUsd":${number(r.costUsd)},"enforcement":${text(r.enforcement)},"error":${text(r.error)},"incidentId":${text(r.incidentId)}` +
    `,"findings":${nested(r.findings)},"shadow":${flag(r.shadow)},"usageEstimated":${flag(r.usageEstimated)},"priceEstimated":${flag(r.priceEstimated)}` +
    `,"warnings":${nested(r.warnings)},"attempts":${nested(r.attempts)},"cache":${text(r.cache)},"anomaly":${nested(r.anomaly)}` +
    `,"toolCalls":${nested(r.toolCalls)},"requestRule":${nested(r.requestRule)},"responseRule":${nested(r.responseRule)}` +
    (r.mcp === undefined ? '}' : `,"mcp":${JSON.stringify(r.mcp)}}`)
  );
}

/** Whether a line read back from disk is a whole record: a torn or damaged one is not. */
export function isTraceLine(line: string): boolean {
  try {
    return isJsonObject(JSON.parse(line));
  } catch {
    return false;
  }
}

/** The id of the record a line holds, for a log line (read only when a record is refused). */
export function traceIdOf(line: string): string | null {
  try {
    const id: unknown = (JSON.parse(line) as { id?: unknown }).id;
    return typeof id === 'string' ? id : null;
  } catch {
    return null;
  }
}
