import t from 'tap';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { traceId } from '../../src/lib/ids.js';
import { TraceDeadLetter } from '../../src/traces/dead-letter.js';
import { TraceShipper } from '../../src/traces/shipper.js';
import { TraceSpill } from '../../src/traces/spill.js';
import type { TraceRecord } from '../../src/traces/trace.js';

/** A stand-in for POST /api/v1/traces/sync-back that records what arrives and can answer 503 or 400. */
async function receiver(t: Tap.Test) {
  const received: string[] = [];
  let answer = 200;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (answer === 200) received.push(...(JSON.parse(body) as { traces: TraceRecord[] }).traces.map((tr) => tr.id));
      res.writeHead(answer, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise((r) => server.close(r)));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, received, answer: (status: number) => (answer = status) };
}

function capturedLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

async function spillDir(t: Tap.Test) {
  const dir = await mkdtemp(join(tmpdir(), 'svc-spill-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

let clock = Date.now();
const record = () => ({ id: traceId(++clock), time: new Date(clock).toISOString() }) as TraceRecord;

t.test('undeliverable batches spill to disk and are replayed oldest first, before newer records', async (t) => {
  const cp = await receiver(t);
  const dir = await spillDir(t);
  const { logger } = capturedLogger();
  const spill = await TraceSpill.open(dir, 1000, logger);
  const shipper = new TraceShipper({ controlPlaneUrl: cp.url, apiKey: 'vk_test', gatewayId: 'gw', spill, logger, intervalMs: 60_000, batchSize: 3, retryBaseMs: 0 });
  t.teardown(() => shipper.close());
  const sent = Array.from({ length: 7 }, record);
  cp.answer(503);
  for (const r of sent.slice(0, 4)) shipper.enqueue(r);
  await shipper.flush();
  for (const r of sent.slice(4, 6)) shipper.enqueue(r);
  await shipper.flush();
  t.equal(spill.size, 6);
  t.equal((await readdir(dir)).length, 3, 'one segment per failed batch');
  t.equal(shipper.undelivered, 6);
  cp.answer(200);
  shipper.enqueue(sent[6]!);
  await shipper.flush();
  t.same(cp.received, sent.map((r) => r.id), 'every record, in the order it was made');
  t.equal(spill.size, 0);
  t.same(await readdir(dir), []);
  t.equal(shipper.droppedCount, 0);
});

t.test('the spill survives a restart', async (t) => {
  const cp = await receiver(t);
  const dir = await spillDir(t);
  const { logger } = capturedLogger();
  const first = new TraceShipper({ controlPlaneUrl: 'http://127.0.0.1:9', apiKey: 'vk_test', gatewayId: 'gw', spill: await TraceSpill.open(dir, 100, logger), logger, intervalMs: 60_000 });
  const sent = Array.from({ length: 5 }, record);
  for (const r of sent) first.enqueue(r);
  await first.close();
  const spill = await TraceSpill.open(dir, 100, logger);
  t.equal(spill.size, 5);
  const second = new TraceShipper({ controlPlaneUrl: cp.url, apiKey: 'vk_test', gatewayId: 'gw', spill, logger, intervalMs: 60_000 });
  await second.close();
  t.same(cp.received, sent.map((r) => r.id));
});

t.test('a damaged line in the spill is skipped, counted and logged; the rest of its segment is delivered', async (t) => {
  const cp = await receiver(t);
  const dir = await spillDir(t);
  const { logger, lines } = capturedLogger();
  const first = new TraceShipper({ controlPlaneUrl: 'http://127.0.0.1:9', apiKey: 'vk_test', gatewayId: 'gw', spill: await TraceSpill.open(dir, 100, logger), logger, intervalMs: 60_000 });
  const sent = Array.from({ length: 3 }, record);
  for (const r of sent) first.enqueue(r);
  await first.close();
  const [segment] = await readdir(dir);
  const text = await readFile(join(dir, segment!), 'utf8');
  const [a, b, c] = text.trim().split('\n');
  await writeFile(join(dir, segment!), `${a}\n${b!.slice(0, 20)}\n${c}\n`);
  const spill = await TraceSpill.open(dir, 100, logger);
  const second = new TraceShipper({ controlPlaneUrl: cp.url, apiKey: 'vk_test', gatewayId: 'gw', spill, logger, intervalMs: 60_000, retryBaseMs: 0 });
  cp.answer(503);
  await second.flush();
  await second.flush();
  t.equal(second.droppedCount, 1, 'counted once, however often the segment is read while the control plane is down');
  t.equal(spill.size, 2);
  cp.answer(200);
  await second.close();
  t.same(cp.received, [sent[0]!.id, sent[2]!.id]);
  t.equal(second.droppedCount, 1);
  t.equal(spill.size, 0);
  t.match(lines.filter((l) => l.msg === 'trace spill: damaged records skipped'), [{ dropped: 1 }]);
});

t.test('past the bound, records are dropped, counted and logged', async (t) => {
  const dir = await spillDir(t);
  const { logger, lines } = capturedLogger();
  const spill = await TraceSpill.open(dir, 5, logger);
  const shipper = new TraceShipper({ controlPlaneUrl: 'http://127.0.0.1:9', apiKey: 'vk_test', gatewayId: 'gw', spill, logger, intervalMs: 60_000, batchSize: 4 });
  t.teardown(() => shipper.close());
  for (let i = 0; i < 8; i++) shipper.enqueue(record());
  await shipper.flush();
  t.equal(spill.size, 5);
  t.equal(spill.droppedCount, 3);
  t.equal(shipper.droppedCount, 3);
  t.match(lines.filter((l) => l.msg === 'trace spill full: records dropped'), [{ dropped: 3, totalDropped: 3, bound: 5 }]);
});

t.test('without a dead-letter file, a record the control plane refuses is dropped and counted, not retried forever', async (t) => {
  const cp = await receiver(t);
  const dir = await spillDir(t);
  const { logger, lines } = capturedLogger();
  const spill = await TraceSpill.open(dir, 100, logger);
  const shipper = new TraceShipper({ controlPlaneUrl: cp.url, apiKey: 'vk_test', gatewayId: 'gw', spill, logger, intervalMs: 60_000 });
  t.teardown(() => shipper.close());
  cp.answer(400);
  shipper.enqueue(record());
  shipper.enqueue(record());
  await shipper.flush();
  t.equal(spill.size, 0);
  t.equal(shipper.droppedCount, 2);
  t.equal(lines.filter((l) => l.msg === 'control plane refused a trace record; record dropped').length, 2);
});

/**
 * A sync-back stand-in that refuses (400) any batch holding a record whose `session` is 'bad', and
 * answers other statuses on demand; it counts the requests.
 */
async function pickyReceiver(t: Tap.Test) {
  const received: string[] = [];
  const answers: Array<{ status: number; headers?: Record<string, string> }> = [];
  /** A batch holding one of these ids meets a 503 once (after the 400 check). */
  const outage = new Set<string>();
  let requests = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      requests++;
      const traces = (JSON.parse(body) as { traces: TraceRecord[] }).traces;
      const next = answers.shift();
      if (next !== undefined) return void res.writeHead(next.status, { 'content-type': 'application/json', ...next.headers }).end('{"error":{"code":"X","message":"later"}}');
      if (traces.some((tr) => tr.session === 'bad')) return void res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"code":"validation","message":"traces.0.session: bad"}}');
      const down = traces.find((tr) => outage.has(tr.id));
      if (down !== undefined) {
        outage.delete(down.id);
        return void res.writeHead(503).end();
      }
      received.push(...traces.map((tr) => tr.id));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise((r) => server.close(r)));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, received, answers, outage, requests: () => requests };
}

t.test('one refused record: the good ones of its batch land, in order, and it goes to the dead-letter file', async (t) => {
  const cp = await pickyReceiver(t);
  const dir = await spillDir(t);
  const { logger, lines } = capturedLogger();
  const spill = await TraceSpill.open(join(dir, 'spill'), 100, logger);
  const deadLetter = await TraceDeadLetter.open(join(dir, 'dead'), 100, logger);
  const shipper = new TraceShipper({ controlPlaneUrl: cp.url, apiKey: 'vk_test', gatewayId: 'gw', spill, deadLetter, logger, intervalMs: 60_000, batchSize: 8 });
  t.teardown(() => shipper.close());
  const sent = Array.from({ length: 8 }, record);
  sent[5] = { ...sent[5]!, session: 'bad' };
  for (const r of sent) shipper.enqueue(r);
  await shipper.flush();
  const good = sent.filter((_, i) => i !== 5).map((r) => r.id);
  t.same(cp.received, good, 'every good record, in order');
  t.ok(cp.requests() <= 1 + 2 * Math.ceil(Math.log2(8)), `found by halving (${cp.requests()} requests)`);
  t.equal(spill.size, 0, 'nothing left to retry');
  t.equal(deadLetter.size, 1);
  t.equal(shipper.deadLetteredCount, 1);
  t.equal(shipper.droppedCount, 0, 'kept, not lost');
  const [line] = (await readFile(deadLetter.file, 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l));
  t.match(line, { status: 400, reason: /session/, record: { id: sent[5]!.id } });
  t.equal((await stat(deadLetter.file)).mode & 0o777, 0o600);
  t.match(lines.filter((l) => l.msg === 'control plane refused a trace record; kept in the dead-letter file'), [{ traceId: sent[5]!.id, status: 400, deadLettered: 1 }]);

  const later = record();
  shipper.enqueue(later);
  await shipper.flush();
  t.equal(cp.received.at(-1), later.id, 'shipping goes on');
  const reopened = await TraceDeadLetter.open(join(dir, 'dead'), 100, logger);
  t.equal(reopened.size, 1, 'the count survives a restart');
});

t.test('a refused record in a spilled segment: the rest of the segment lands, the refused one is set aside once', async (t) => {
  const cp = await pickyReceiver(t);
  const dir = await spillDir(t);
  const { logger } = capturedLogger();
  const spill = await TraceSpill.open(join(dir, 'spill'), 100, logger);
  const deadLetter = await TraceDeadLetter.open(join(dir, 'dead'), 100, logger);
  const shipper = new TraceShipper({ controlPlaneUrl: cp.url, apiKey: 'vk_test', gatewayId: 'gw', spill, deadLetter, logger, intervalMs: 60_000, retryBaseMs: 0 });
  t.teardown(() => shipper.close());
  const sent = Array.from({ length: 4 }, record);
  sent[0] = { ...sent[0]!, session: 'bad' };
  cp.answers.push({ status: 503 });
  for (const r of sent) shipper.enqueue(r);
  await shipper.flush();
  t.equal(spill.size, 4, 'the control plane was down: the batch is on disk');
  // Up again, but the second half of the halving meets another outage: only what is left stays on disk.
  cp.outage.add(sent[2]!.id);
  await shipper.flush();
  t.equal(deadLetter.size, 1, 'the refused record was set aside');
  t.equal(spill.size, 2, 'what was not yet delivered stays on disk');
  await shipper.flush();
  t.same(cp.received, sent.slice(1).map((r) => r.id));
  t.equal(deadLetter.size, 1, 'set aside once');
  t.equal(spill.size, 0);
});

t.test('transient failures back off (retry-after honoured); a 401 keeps the records on disk', async (t) => {
  const cp = await pickyReceiver(t);
  const dir = await spillDir(t);
  const { logger, lines } = capturedLogger();
  const spill = await TraceSpill.open(join(dir, 'spill'), 100, logger);
  const deadLetter = await TraceDeadLetter.open(join(dir, 'dead'), 100, logger);
  const shipper = new TraceShipper({ controlPlaneUrl: cp.url, apiKey: 'vk_test', gatewayId: 'gw', spill, deadLetter, logger, intervalMs: 60_000, retryBaseMs: 50, retryMaxMs: 2000 });
  t.teardown(() => shipper.close());
  cp.answers.push({ status: 429, headers: { 'retry-after': '1' } });
  shipper.enqueue(record());
  await shipper.flush();
  t.equal(cp.requests(), 1);
  await shipper.flush();
  t.equal(cp.requests(), 1, 'no new attempt before retry-after');
  await new Promise((r) => setTimeout(r, 1050));
  await shipper.flush();
  t.equal(cp.received.length, 1, 'delivered after the wait');

  cp.answers.push({ status: 401 });
  const kept = record();
  shipper.enqueue(kept);
  await shipper.flush();
  t.equal(spill.size, 1, 'a revoked key refuses the key, not the records');
  t.equal(deadLetter.size, 0);
  t.ok(lines.some((l) => l.msg === 'control plane will not take traces with this key or gateway; keeping them on disk'));
  await new Promise((r) => setTimeout(r, 120));
  await shipper.flush();
  t.equal(cp.received.at(-1), kept.id, 'delivered once the control plane takes it');
});
