// @ts-check
/**
 * What the trace journal costs per request: records appended as a loaded proxy completes them
 * (a batch per event-loop turn, one `write` per batch, `fdatasync` once a second), in CPU time of
 * this process per record (making the record's JSON line, as the trace sink does, included).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';

const RECORDS = 50_000;

/** @type {import('./index.js').MicroBenchmark} */
export const traceJournalBenchmark = {
  name: 'trace-journal',
  description: 'TraceJournal.append from dist/traces/journal.js: CPU µs per trace record, 1 and 50 records per event-loop turn',
  async run() {
    const { TraceJournal } = await import('../../dist/traces/journal.js');
    const { traceLine } = await import('../../dist/traces/trace-line.js');
    const { pino } = await import('pino');
    const dir = await mkdtemp(join(tmpdir(), 'svc-bench-journal-'));
    try {
      /** @type {Record<string, number>} */
      const figures = {};
      for (const perTurn of [1, 50]) {
        const { journal } = await TraceJournal.open(join(dir, String(perTurn)), pino({ level: 'silent' }));
        const record = sampleRecord();
        const start = process.cpuUsage();
        for (let done = 0; done < RECORDS; done += perTurn) {
          for (let i = 0; i < perTurn; i++) journal.append(traceLine({ ...record, id: `tr_${done + i}` }));
          await nextTurn();
        }
        const used = process.cpuUsage(start);
        journal.close();
        figures[`µs/record, ${perTurn}/turn`] = Math.round(((used.user + used.system) / RECORDS) * 100) / 100;
      }
      return figures;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
};

/** A trace record of an ordinary chat request, as the proxy writes it. */
function sampleRecord() {
  return {
    id: 'tr_0', time: new Date().toISOString(), workspace: 'ws_local', session: null, harness: 'claude-code', route: '/v1/chat/completions',
    model: 'gpt-4o-mini', provider: 'openai', stream: false, status: 200, latencyMs: 1.23, ttfbMs: 0.9, overheadMs: 0.12, inputTokens: 120, outputTokens: 40,
    costUsd: 0.00004, enforcement: 'BYPASS', error: null, incidentId: null, findings: [], shadow: false, usageEstimated: false, priceEstimated: false,
    warnings: [], attempts: [], cache: null, anomaly: null, toolCalls: [], requestRule: null, responseRule: null,
  };
}
