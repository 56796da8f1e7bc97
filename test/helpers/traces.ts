import type { TraceRecord } from '../../src/traces/trace.js';

/** A complete trace record of a plain, successful chat completion; `over` sets what a test cares about. */
export function traceRecord(over: Partial<TraceRecord> = {}): TraceRecord {
  return {
    id: 'tr_0',
    time: new Date(0).toISOString(),
    workspace: 'w',
    session: null,
    harness: null,
    route: '/v1/chat/completions',
    model: 'gpt-4o',
    provider: 'openai',
    stream: false,
    status: 200,
    latencyMs: 1,
    ttfbMs: 1,
    overheadMs: 1,
    inputTokens: 1,
    outputTokens: 1,
    costUsd: 0,
    enforcement: 'BYPASS',
    error: null,
    incidentId: null,
    findings: [],
    shadow: false,
    usageEstimated: false,
    priceEstimated: false,
    warnings: [],
    attempts: [],
    cache: null,
    anomaly: null,
    toolCalls: [],
    requestRule: null,
    responseRule: null,
    ...over,
  };
}
