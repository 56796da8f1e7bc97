import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startMockProvider } from '../../bench/mock/provider.js';
import { spawnProxy } from '../helpers/proxy.js';

/**
 * The request path makes no hidden class, and turns no object into a dictionary, per request.
 * V8 (Node 20) gives an object made by spread and then given another property (`{ ...x, key }`) a
 * new hidden class every time, and turns an object literal with a getter of its own into a
 * dictionary; both cost chat 10% or more of its CPU, the second by keeping the request's objects
 * alive into the old generation (bench/README.md, "Garbage collection"). Counted from V8's map log
 * between two marker requests, in the real `svc proxy` with every DLP detector redacting, over
 * plain and streamed chat completions.
 */

const PII = { 'pii.card': 'redact', 'pii.iban': 'redact', 'pii.ssn': 'redact', 'pii.email': 'redact', 'pii.phone': 'redact' };
const WARM_UP = 100;
const MEASURED = 200;

t.test('a request makes no hidden class and no dictionary of its own', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-maps-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  const config = join(dir, 'proxy.json');
  writeFileSync(config, JSON.stringify({ piiDetectors: PII }));
  const log = join(dir, 'v8.log');
  const proxy = await spawnProxy(t, ['--upstream-url', mock.url, '--config', config, '--io-threads', '1'], { SVC_HOME: dir }, [
    '--log-maps',
    '--no-log-maps-details',
    `--logfile=${log}`,
    '--no-logfile-per-isolate',
  ]);

  const send = async (i: number, marker?: string): Promise<void> => {
    const stream = i % 2 === 1;
    const body: Record<string, unknown> = {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: `Summarise change ${i} of the release notes for the team.` }],
      ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    };
    // A field name nobody else uses: parsing the body logs a transition that names it.
    if (marker !== undefined) body[marker] = 1;
    const res = await fetch(`${proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-mock-chunks': '20' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`request ${i}: ${res.status} ${text}`);
  };
  const run = async (from: number, count: number): Promise<void> => {
    // Four at a time, as agents overlap.
    for (let i = from; i < from + count; i += 4) await Promise.all([0, 1, 2, 3].map((k) => send(i + k)));
  };

  await run(0, WARM_UP);
  await send(WARM_UP, 'svcMapLogMarkStart');
  await run(WARM_UP + 1, MEASURED);
  await send(WARM_UP + MEASURED + 1, 'svcMapLogMarkEnd');
  proxy.child.kill('SIGTERM');
  t.equal(await proxy.exited, 0, 'the proxy exits cleanly, writing out its log');

  const lines = readFileSync(log, 'utf8').split('\n');
  const start = lines.findIndex((l) => l.startsWith('map,') && l.endsWith(',svcMapLogMarkStart'));
  const end = lines.findIndex((l) => l.startsWith('map,') && l.endsWith(',svcMapLogMarkEnd'));
  t.ok(start >= 0 && end > start, 'both markers are in the log');
  // Every map event is a hidden class made, or an object turned into a dictionary.
  const made = lines.slice(start + 1, end).filter((l) => l.startsWith('map,'));
  const sites = new Map<string, number>();
  for (const l of made) {
    const f = l.split(',');
    const site = `${f[1]} at ${f[6]}:${f[7]} ${f[8]} ${f[9]}`;
    sites.set(site, (sites.get(site) ?? 0) + 1);
  }
  const ranked = [...sites].sort((a, b) => b[1] - a[1]);
  const top = ranked.slice(0, 5).map(([site, n]) => `${n}× ${site}`);
  // What a request makes, it makes at the same place every time: a hundred or more at one place.
  // What happens once (a class set up the first time a GC is observed, a metric's first bucket)
  // makes a few at each place, and more of it falls inside the window on a slow or loaded machine.
  const [worstSite, worst] = ranked[0] ?? ['none', 0];
  t.ok(worst < MEASURED / 4, `at most ${worst} hidden classes or dictionaries made at one place over ${MEASURED} requests (${worstSite})`);
  t.ok(made.length < MEASURED, `${made.length} made in all over ${MEASURED} requests (most: ${top.join('; ') || 'none'})`);
});
