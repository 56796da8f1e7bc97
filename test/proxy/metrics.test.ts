import t from 'tap';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { startMockProvider } from '../../bench/mock/provider.js';
import { spawnProxy, startProxy } from '../helpers/proxy.js';

const chat = (extra: Record<string, unknown> = {}) => JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], ...extra });

async function send(url: string, path: string, body: string | undefined, headers: Record<string, string> = {}) {
  const res = await request(`${url}${path}`, { method: body === undefined ? 'GET' : 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

/** The value of one sample line, e.g. `svc_requests_total{route="/v1/chat/completions",enforcement="BYPASS",status="2xx"}`. */
function sample(exposition: string, series: string): number | undefined {
  const line = exposition.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

t.test('GET /metrics: requests by route, enforcement and status; overhead and upstream histograms; tokens and cost; health gauges', async (t) => {
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  const proxy = await startProxy(t, { upstreamUrl: mock.url, file: { settings: { piiDetectors: { 'pii.card': 'redact' } } } });
  t.equal((await send(proxy.url, '/v1/chat/completions', chat())).status, 200);
  t.equal((await send(proxy.url, '/v1/chat/completions', chat({ stream: true }))).status, 200);
  t.equal((await send(proxy.url, '/v1/chat/completions', chat({ messages: [{ role: 'user', content: 'card 4539148803436467' }] }))).status, 200);
  t.equal((await send(proxy.url, '/v1/chat/completions', '{')).status, 400);
  t.equal((await send(proxy.url, '/no/such/path/made-up-by-a-client', undefined)).status, 404);
  await send(proxy.url, '/health', undefined);

  const res = await send(proxy.url, '/metrics', undefined);
  t.equal(res.status, 200);
  t.match(res.headers['content-type'], /^text\/plain; version=0\.0\.4/);
  const m = res.text;
  t.equal(sample(m, 'svc_requests_total{route="/v1/chat/completions",enforcement="BYPASS",status="2xx"}'), 2, 'the chat and the stream');
  t.equal(sample(m, 'svc_requests_total{route="/v1/chat/completions",enforcement="ENHANCE",status="2xx"}'), 1, 'the redacted one');
  t.equal(sample(m, 'svc_requests_total{route="/v1/chat/completions",enforcement="BYPASS",status="4xx"}'), 1, 'the malformed one');
  t.equal(sample(m, 'svc_requests_total{route="other",enforcement="BYPASS",status="4xx"}'), 1, "a client's own path is not a label");
  t.notMatch(m, /made-up-by-a-client/);
  t.notMatch(m, /route="\/health"|route="\/metrics"/, 'health checks and scrapes are not traffic');
  t.equal(sample(m, 'svc_overhead_seconds_count{route="/v1/chat/completions",stream="false"}'), 3);
  t.equal(sample(m, 'svc_overhead_seconds_count{route="/v1/chat/completions",stream="true"}'), 1);
  t.equal(sample(m, 'svc_upstream_seconds_count{provider="openai",stream="false"}'), 2);
  t.ok(sample(m, 'svc_tokens_total{provider="openai",direction="input"}')! > 0, 'input tokens');
  t.ok(sample(m, 'svc_tokens_total{provider="openai",direction="output"}')! > 0, 'output tokens');
  t.ok(sample(m, 'svc_cost_usd_total{provider="openai"}')! > 0, 'spend');
  t.equal(sample(m, 'svc_store_up'), 1);
  t.equal(sample(m, 'svc_traces_dropped'), 0);
  t.equal(sample(m, 'svc_wasm_rules_loaded'), 0);
  t.equal(sample(m, 'svc_wasm_verdicts_remembered'), 0);
  t.equal(sample(m, 'svc_wasm_rule_runs_out_of_fuel'), 0);
  t.ok(sample(m, 'svc_inspection_workers')! >= 0);
  t.ok(sample(m, 'svc_process_resident_memory_bytes')! > 0, 'process metrics');
});

/** How often a thread of a process has blocked waiting (Linux, as the proxy's platform): each is a wake-up of that thread. */
function waits(pid: number): number {
  const status = readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8');
  return Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)![1]);
}

t.test('an idle proxy wakes its thread a few times a second, not a hundred', async (t) => {
  // The event-loop lag metrics sample the loop every 100 ms; at prom-client's 10 ms an idle proxy
  // woke 208 times in two seconds, at 100 ms 33 (the trace file's timer and the rest included).
  const proxy = await spawnProxy(t, [], { SVC_HOME: t.testdir() });
  await sleep(1000);
  const before = waits(proxy.child.pid!);
  await sleep(2000);
  const woken = waits(proxy.child.pid!) - before;
  t.ok(woken < 100, `${woken} wake-ups in two seconds`);
  t.match(await (await request(`${proxy.url}/metrics`)).body.text(), /^svc_nodejs_eventloop_lag_p99_seconds \d/m, 'the lag is still measured');
});
