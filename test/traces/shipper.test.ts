import t from 'tap';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { traceId } from '../../src/lib/ids.js';
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
  const shipper = new TraceShipper({ controlPlaneUrl: cp.url, apiKey: 'vk_test', gatewayId: 'gw', spill, logger, intervalMs: 60_000, batchSize: 3 });
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

t.test('a batch the control plane refuses as invalid is dropped and counted, not retried forever', async (t) => {
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
  t.ok(lines.some((l) => l.msg === 'control plane refused a trace batch; records dropped'));
});
