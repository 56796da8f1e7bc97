import t from 'tap';
import { readFile, readdir } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { TraceSink } from '../../src/traces/sink.js';
import type { TraceRecord } from '../../src/traces/trace.js';
import { traceRecord } from '../helpers/traces.js';

const record = (i: number): TraceRecord => traceRecord({ id: `tr_${i}` });

t.test('the ring keeps the newest records, oldest first', async (t) => {
  const sink = new TraceSink({ dir: undefined, ringSize: 3 });
  for (let i = 0; i < 5; i++) sink.record(record(i));
  t.same(sink.recent().map((r) => r.id), ['tr_2', 'tr_3', 'tr_4']);
});

t.test('unless asked, a sink keeps no record in memory, and still hands every one on', async (t) => {
  const forwarded: string[] = [];
  const sink = new TraceSink({ dir: undefined, forward: (trace) => forwarded.push(trace.id) });
  for (let i = 0; i < 5; i++) sink.record(record(i));
  t.same(sink.recent(), []);
  t.same(forwarded, ['tr_0', 'tr_1', 'tr_2', 'tr_3', 'tr_4']);
});

t.test('records are appended as JSON lines and rotated at the size bound', async (t) => {
  const dir = t.testdir();
  const sink = new TraceSink({ dir, maxFileBytes: 2000, maxFiles: 2, flushIntervalMs: 10_000 });
  for (let i = 0; i < 40; i++) {
    sink.record(record(i));
    if (i % 5 === 4) await sink.flush();
  }
  await sink.close();
  const files = (await readdir(dir)).sort();
  t.same(files, ['traces.jsonl', 'traces.jsonl.1', 'traces.jsonl.2'], 'current file plus two rotated');
  const lines = (await readFile(`${dir}/traces.jsonl`, 'utf8')).trim().split('\n');
  t.equal(JSON.parse(lines.at(-1)!).id, 'tr_39', 'the newest record is in the current file');
  t.equal(sink.droppedCount, 0);
});

t.test('the size bound counts bytes: a file of records in a three-byte script stays under it', async (t) => {
  const dir = t.testdir();
  const maxFileBytes = 4000;
  const sink = new TraceSink({ dir, maxFileBytes, maxFiles: 5, flushIntervalMs: 10_000 });
  // Each record is about 1,000 bytes and only about 500 characters.
  for (let i = 0; i < 12; i++) {
    sink.record(traceRecord({ id: `tr_${i}`, session: '漢'.repeat(200) }));
    await sink.flush();
  }
  await sink.close();
  const files = (await readdir(dir)).filter((f) => f.startsWith('traces.jsonl'));
  t.ok(files.length > 1, 'it rotated');
  for (const file of files) {
    const bytes = (await readFile(`${dir}/${file}`)).length;
    t.ok(bytes <= maxFileBytes, `${file}: ${bytes} bytes`);
  }
});

t.test('a queue past its bound drops the oldest and counts them', async (t) => {
  const sink = new TraceSink({ dir: t.testdir(), maxQueued: 2, flushIntervalMs: 10_000 });
  for (let i = 0; i < 5; i++) sink.record(record(i));
  t.equal(sink.droppedCount, 3);
  await sink.close();

  const dir = t.testdir();
  const large = new TraceSink({ dir, maxQueued: 100, flushIntervalMs: 10_000 });
  for (let i = 0; i < 101; i++) large.record(record(i));
  t.equal(large.droppedCount, 10, 'a tenth of the bound at a time');
  await large.close();
  const written = (await readFile(`${dir}/traces.jsonl`, 'utf8')).trim().split('\n').map((l) => JSON.parse(l).id);
  t.same([written.length, written[0], written.at(-1)], [91, 'tr_10', 'tr_100'], 'the newest are kept, in order');
});

t.test('a full batch of 128 records is written at once, not at the next tick of the timer', async (t) => {
  const dir = t.testdir();
  const sink = new TraceSink({ dir, flushIntervalMs: 3_600_000 });
  t.teardown(() => sink.close());
  for (let i = 0; i < 127; i++) sink.record(record(i));
  await sleep(50);
  t.equal(await readFile(`${dir}/traces.jsonl`, 'utf8').catch(() => null), null, 'fewer wait for the timer');
  sink.record(record(127));
  const lines = async (): Promise<string[]> => (await readFile(`${dir}/traces.jsonl`, 'utf8').catch(() => '')).split('\n').filter((l) => l !== '');
  // Waits for the write the 128th record started; the timer would not fire for an hour.
  for (let tries = 0; (await lines()).length === 0 && tries < 2_000; tries++) await sleep(5);
  const written = await lines();
  t.equal(written.length, 128);
  t.equal(JSON.parse(written.at(-1)!).id, 'tr_127');
});

t.test('a sink sets a timer only while records wait: one per batch, none while idle', async (t) => {
  const dir = t.testdir();
  const original = globalThis.setTimeout;
  let timers = 0;
  globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
    timers++;
    return original(...args);
  }) as typeof setTimeout;
  t.teardown(() => {
    globalThis.setTimeout = original;
  });
  const sink = new TraceSink({ dir, flushIntervalMs: 20 });
  t.teardown(() => sink.close());
  t.equal(timers, 0, 'nothing queued, no timer');
  for (let i = 0; i < 3; i++) sink.record(record(i));
  t.equal(timers, 1, 'one timer for the batch');
  const lines = async (): Promise<number> => (await readFile(`${dir}/traces.jsonl`, 'utf8').catch(() => '')).split('\n').filter((l) => l !== '').length;
  // Written by the timer alone: nothing here calls flush.
  for (let tries = 0; (await lines()) < 3 && tries < 2_000; tries++) await sleep(5);
  t.equal(await lines(), 3);
  await sleep(60);
  t.equal(timers, 1, 'no timer once the queue is written');
  sink.record(record(3));
  t.equal(timers, 2, 'the next record starts the next batch');
});
