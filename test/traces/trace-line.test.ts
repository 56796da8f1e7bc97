import t from 'tap';
import { mcpCallTrace } from '../../src/mcp/call-trace.js';
import { isTraceLine, traceIdOf, traceLine } from '../../src/traces/trace-line.js';
import { traceRecord } from '../helpers/traces.js';

t.test('a record of a plain request is written as JSON.stringify writes it, byte for byte', async (t) => {
  const record = traceRecord({ id: 'tr_abc', latencyMs: 1.23, costUsd: 0.0000588, inputTokens: 312 });
  t.equal(traceLine(record), JSON.stringify(record));
});

t.test('every field, nested ones included, reads back as the record', async (t) => {
  const record = traceRecord({
    session: 's-1',
    harness: 'claude-code',
    error: 'policy_denied',
    incidentId: 'inc_1',
    findings: [{ detector: 'pii.email', where: 'messages[0].content', message: 0, kind: 'message', action: 'redact', confidence: 0.9 }],
    warnings: ['soft cap passed'],
    attempts: [{ model: 'gpt-4o', provider: 'openai', status: 500, error: 'upstream_error', ms: 3 }],
    anomaly: { mode: 'steer', findings: [], response: null, outcome: null, card: 'stop' } as never,
    cache: 'hit',
    toolCalls: [{ tool: 'bash' }] as never,
    requestRule: { rule: 'r.wasm', action: 'block', reason: 'no' },
    responseRule: { rule: 'r.wasm' } as never,
  });
  t.same(JSON.parse(traceLine(record)), JSON.parse(JSON.stringify(record)));
  t.equal(traceLine(record), JSON.stringify(record), 'and in the same order');
});

t.test('texts are escaped as JSON.stringify escapes them', async (t) => {
  const values = ['say "hi"', 'back\\slash', 'tab\tnew\nline\u0000nul', 'emoji 😀', 'lone \ud800 surrogate', 'trail \udfff', '\u2028\u2029', '<script>', ''];
  for (const [i, value] of values.entries()) {
    const record = traceRecord({ error: value, session: value });
    // Named by index: a line separator in a test's name would break the report.
    t.equal(traceLine(record), JSON.stringify(record), `text ${i}`);
    t.equal(JSON.parse(traceLine(record)).error, value);
  }
});

t.test('a number JSON cannot hold is written null, as JSON.stringify writes it', async (t) => {
  for (const value of [Number.NaN, Infinity, -Infinity, -0, 1e21, 5e-7]) {
    const record = traceRecord({ latencyMs: value, costUsd: value });
    t.equal(traceLine(record), JSON.stringify(record), String(value));
  }
});

t.test('an MCP call record keeps its mcp part', async (t) => {
  const record = mcpCallTrace({
    id: 'tr_mcp',
    startedAt: Date.UTC(2026, 10, 30),
    latencyMs: 4,
    workspace: 'w',
    session: null,
    harness: 'claude-code',
    mcp: { server: 'fs', tool: 'read_file', verdict: 'block', code: 'TOOL_DISABLED', rule: null },
    findings: [],
    warnings: [],
  });
  t.equal(traceLine(record), JSON.stringify(record));
});

t.test('a field a caller left out is written null: the line stays JSON', async (t) => {
  const record = traceRecord();
  delete (record as Partial<typeof record>).session;
  delete (record as Partial<typeof record>).shadow;
  const parsed = JSON.parse(traceLine(record));
  t.equal(parsed.session, null);
  t.equal(parsed.shadow, false);
});

t.test('lines read back: whole records pass, torn or damaged ones do not; the id is read for a log line', async (t) => {
  const line = traceLine(traceRecord({ id: 'tr_9' }));
  t.ok(isTraceLine(line));
  t.notOk(isTraceLine(line.slice(0, -5)), 'torn');
  t.notOk(isTraceLine('[1,2]'));
  t.notOk(isTraceLine('null'));
  t.equal(traceIdOf(line), 'tr_9');
  t.equal(traceIdOf('{"id":'), null);
});
