// Attacks on the data plane (issue 15, items 1–7): a real `svc proxy` from the CLI under test in
// front of the mock provider (bench/mock/provider.js, in-process). Run them alone with
// `node bench/attack/dataplane.js [--cli …] [--only 4,7]`, or with every other section through run.js.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { request } from 'undici';
import { startMockProvider } from '../mock/provider.js';
import { api, parseArgs, runSections, signUp } from './lib/harness.js';

const CARD = '4539148803436467';
const redact = { settings: { piiDetectors: { 'pii.card': 'redact', 'pii.iban': 'redact', 'pii.email': 'redact', 'pii.phone': 'redact' } } };

/** A mock provider in its own process (its parsing of a large body must not stall this one's clock), stopped with the section. */
async function mockProcess(ctx) {
  const child = spawn(process.execPath, [new URL('../mock/provider.js', import.meta.url).pathname, '--port', '0'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const exited = once(child, 'exit');
  ctx.defer(async () => {
    child.kill('SIGKILL');
    await exited;
  });
  const [line] = await once(child.stdout, 'data');
  return { url: /listening on (\S+)/.exec(line.toString())[1] };
}

/** A mock provider, stopped with the section. */
async function mock(ctx) {
  const m = await startMockProvider();
  ctx.defer(() => m.close());
  return m;
}

/** `svc proxy` on a free port; `{ url, child, exited }`. Stopped (SIGKILL) with the section. */
async function proxy(ctx, { args = [], env = {}, config, nodeArgs = [] } = {}) {
  const home = env.SVC_HOME ?? (await ctx.tempDir('svc-attack-proxy-'));
  const extra = [];
  if (config !== undefined) {
    const file = join(home, 'attack-config.json');
    await writeFile(file, JSON.stringify(config));
    extra.push('--config', file);
  }
  const child = spawn(process.execPath, [...nodeArgs, ctx.options.cli, 'proxy', '--port', '0', '--threads', '1', ...extra, ...args], {
    env: { ...process.env, SVC_LOG_LEVEL: 'error', SVC_HOME: home, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c.toString()));
  const exited = once(child, 'exit');
  ctx.defer(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  const [line] = await Promise.race([once(child.stdout, 'data'), exited.then(() => Promise.reject(new Error(`the proxy exited before it was ready: ${stderr}`)))]);
  const port = Number(/:(\d+) /.exec(line.toString())[1]);
  return { url: `http://127.0.0.1:${port}`, port, home, child, exited };
}

async function post(url, path, body, headers = {}) {
  const res = await request(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers },
    body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, text, headers: res.headers };
}

/** Whether a value reached the provider in the last request it got. */
const leaked = (m, needle) => JSON.stringify(m.requests.at(-1)?.body ?? '').replace(/\s/g, '').includes(needle.replace(/\s/g, ''));

const dlpProbe = async (tally, p, m, name, path, body, needle) => {
  const r = await post(p.url, path, body);
  tally.check(name, r.status === 403 || !leaked(m, needle), `${needle} reached the provider (status ${r.status})`);
};

const item1 = {
  item: 1,
  title: 'DLP reads every value',
  async run(ctx, tally) {
    const m = await mock(ctx);
    const p = await proxy(ctx, { args: ['--upstream-url', m.url], config: redact });
    const turn = (input) => ({ model: 'claude-sonnet-4', max_tokens: 64, messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'fetch', input }] }, { role: 'user', content: 'go on' }] });
    await dlpProbe(tally, p, m, 'a card in tool_use.input.url', '/v1/messages', turn({ url: `https://x/?cc=${CARD}` }), CARD);
    await dlpProbe(tally, p, m, 'a card as a number in tool_use.input', '/v1/messages', turn({ cc: Number(CARD) }), CARD);
    await dlpProbe(tally, p, m, "a card in a document block's source.data", '/v1/messages', { model: 'claude-sonnet-4', max_tokens: 64, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: `card ${CARD}` } }] }] }, CARD);
    await dlpProbe(tally, p, m, 'a card under a key named name', '/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi', name: CARD }] }, CARD);
  },
};

const item2 = {
  item: 2,
  title: 'every streamed delta is inspected',
  async run(ctx, tally) {
    const m = await mock(ctx);
    const p = await proxy(ctx, { args: ['--upstream-url', m.url], config: redact });
    const r = await post(p.url, '/v1/chat/completions', { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }], mock: { content: `the card is ${CARD} ok` } });
    tally.check('a card in delta.content', !r.text.replace(/[\s"]/g, '').includes(CARD), 'the card reached the client');
    const a = await post(p.url, '/v1/messages', { model: 'claude-sonnet-4', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'hi' }], mock: { content: `the card is ${CARD} ok` } });
    tally.check('a card in an Anthropic text_delta', !a.text.replace(/[\s"]/g, '').includes(CARD), 'the card reached the client');
  },
};

const item3 = {
  item: 3,
  title: 'validators cover real writing',
  async run(ctx, tally) {
    const m = await mock(ctx);
    const p = await proxy(ctx, { args: ['--upstream-url', m.url], config: redact });
    const chat = (content) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });
    for (const [name, value] of [
      ['a lower-case spaced IBAN', 'de89 3704 0044 0532 0130 00'],
      ['an IDN email host', 'user@bücher.de'],
      ['a German mobile number', '0152 17096408'],
      ['a German area-code number', '(0221) 6709105'],
    ]) {
      await dlpProbe(tally, p, m, name, '/v1/chat/completions', chat(`reach me: ${value}`), value);
    }
  },
};

const item4 = {
  item: 4,
  title: 'large bodies never freeze the proxy',
  async run(ctx, tally) {
    const m = await mockProcess(ctx);
    // The proxy's own main thread is profiled: on a shared 2-core machine a /health round trip also
    // waits for the cores the worker, the mock and this process are using, which is not the proxy
    // blocking. The bound is on the longest stretch the main thread was busy without a break.
    const profiles = await ctx.tempDir('svc-attack-profile-');
    const p = await proxy(ctx, { args: ['--upstream-url', m.url], nodeArgs: ['--cpu-prof', '--cpu-prof-dir', profiles, '--cpu-prof-interval', '250'] });
    const keys = 2_000_000;
    const parts = ['{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"metadata":{'];
    for (let i = 0; i < keys; i++) parts.push(`${i ? ',' : ''}"k${i}":1`);
    parts.push('}}');
    const body = Buffer.from(parts.join(''));
    let done = false;
    let slowest = 0;
    const big = post(p.url, '/v1/chat/completions', body).finally(() => (done = true));
    while (!done) {
      const started = performance.now();
      const res = await request(`${p.url}/health`);
      await res.body.text();
      slowest = Math.max(slowest, performance.now() - started);
    }
    const answer = await big;
    tally.check(`a ${(body.length / 1e6).toFixed(0)} MB body of ${keys / 1e6} M keys is served`, answer.status === 200, `status ${answer.status}`);
    p.child.kill('SIGTERM');
    await p.exited;
    const blocked = await longestBusyStretch(profiles);
    tally.check(
      `the main thread is never busy for more than 50 ms meanwhile (longest ${blocked.toFixed(0)} ms; /health round trips up to ${Math.round(slowest)} ms on this machine)`,
      blocked <= 50,
      `the main thread was busy for ${blocked.toFixed(0)} ms without a break`,
    );
  },
};

/**
 * The longest run of non-idle samples in the main thread's CPU profile, in ms, after start-up:
 * everything before the first 100 ms idle gap (the proxy waiting for its first request) is
 * start-up and not counted.
 */
async function longestBusyStretch(dir) {
  // Worker threads write their own profiles; the main thread's is the one with thread id 0.
  const file = (await readdir(dir)).find((f) => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(f));
  if (file === undefined) return Infinity;
  const profile = JSON.parse(await readFile(join(dir, file), 'utf8'));
  const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
  let started = false;
  let busy = 0;
  let idleFor = 0;
  let longest = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] / 1000;
    if (idle.has(id)) {
      idleFor += dt;
      if (idleFor >= 100) started = true;
      busy = 0;
    } else {
      idleFor = 0;
      busy += dt;
      if (started) longest = Math.max(longest, busy);
    }
  });
  return longest;
}

/** A private redis-server on a free port; `stop()` kills it. */
async function redisServer(ctx) {
  const port = await new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port: p } = s.address();
      s.close(() => resolve(p));
    });
  });
  const dir = await ctx.tempDir('svc-attack-redis-');
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: ['ignore', 'pipe', 'ignore'] });
  const exited = once(child, 'exit');
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  ctx.defer(stop);
  await new Promise((resolve) => child.stdout.on('data', (c) => c.toString().includes('Ready to accept') && resolve()));
  return { url: `redis://127.0.0.1:${port}`, stop };
}

const item5 = {
  item: 5,
  title: 'a hard cap survives Redis down across a restart',
  async run(ctx, tally) {
    const m = await mock(ctx);
    const redis = await redisServer(ctx);
    const home = await ctx.tempDir('svc-attack-cap-');
    const config = { budget: { dailyUsd: 0.5 }, settings: { enforcement_mode: 'hard', workspace_hard_cap_enabled: true } };
    const args = ['--upstream-url', m.url, '--valkey-url', redis.url];
    const body = { model: 'gpt-4o', max_tokens: 4000, messages: [{ role: 'user', content: 'hi' }], mock: { content: 'x'.repeat(16_000) } };
    const first = await proxy(ctx, { args, config, env: { SVC_HOME: home } });
    let served = 0;
    while ((await post(first.url, '/v1/chat/completions', body)).status === 200 && served < 200) served++;
    await new Promise((r) => setTimeout(r, 1500)); // the ledger is saved within a second
    await redis.stop();
    first.child.kill('SIGKILL');
    await first.exited;
    const second = await proxy(ctx, { args, config, env: { SVC_HOME: home } });
    let allowed = 0;
    for (let i = 0; i < 20; i++) if ((await post(second.url, '/v1/chat/completions', body)).status === 200) allowed++;
    tally.check(`restarted without Redis after the cap was reached (${served} served before): 0 of 20 served`, allowed === 0, `${allowed} of 20 served`);
  },
};

const item6 = {
  item: 6,
  title: 'traces survive kill -9',
  async run(ctx, tally) {
    const m = await mock(ctx);
    const cp = await ctx.controlPlane();
    const owner = await signUp(cp.url);
    const home = await ctx.tempDir('svc-attack-traces-');
    const args = ['--upstream-url', m.url, '--control-plane-url', cp.url, '--api-key', owner.apiKey];
    const first = await proxy(ctx, { args, env: { SVC_HOME: home, SVC_TRACE_SHIP_MS: '1000' } });
    const n = 30;
    let ok = 0;
    for (let i = 0; i < n; i++) {
      const r = await post(first.url, '/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `hi ${i}` }] }, { authorization: `Bearer ${owner.apiKey}` });
      if (r.status === 200) ok++;
    }
    tally.check(`${n} requests served before the kill`, ok === n, `${ok} served`);
    first.child.kill('SIGKILL');
    await first.exited;
    await proxy(ctx, { args, env: { SVC_HOME: home, SVC_TRACE_SHIP_MS: '100' } });
    let total = 0;
    for (let i = 0; i < 100 && total < n; i++) {
      await new Promise((r) => setTimeout(r, 100));
      total = (await api(cp.url, 'GET', '/traces?limit=100', { token: owner.accessToken })).body?.total ?? 0;
    }
    tally.check(`${n} completed requests, SIGKILL, restart: ${total} of ${n} traces at the control plane`, total === n, `${n - total} lost`);
    const left = await readdir(join(home, 'traces-journal')).catch(() => []);
    tally.check('the journal is emptied once shipped', left.length === 0 || total < n, `${left.length} files left`);
  },
};

/** Raw bytes on a fresh connection: what came back within `waitMs`, and whether the server closed it. */
function raw(port, bytes, waitMs = 2000) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    const finish = (closed) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, closed });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.setEncoding('latin1');
    socket.on('data', (c) => (text += c));
    socket.on('end', () => finish(true));
    socket.on('error', () => finish(true));
    socket.write(bytes, 'latin1');
  });
}

const item7 = {
  item: 7,
  title: 'HTTP edge',
  async run(ctx, tally) {
    const m = await mock(ctx);
    const p = await proxy(ctx, { config: { providers: { azure_openai: { endpoint: m.url, apiKey: 'azure-key-1' } } } });
    const status = (text) => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
    const headers = (n) => Array.from({ length: n }, (_, i) => `x-h${i}: v\r\n`).join('');
    const answered = async (name, bytes, want) => {
      const r = await raw(p.port, bytes);
      tally.check(name, want(status(r.text)), r.text === '' ? (r.closed ? 'closed without an answer' : 'no answer within 2 s') : `answered ${status(r.text)}`);
    };
    await answered('an HTTP/1.0 request gets a response', 'GET /health HTTP/1.0\r\n\r\n', (s) => s > 0);
    await answered('45 request headers get 431 promptly', `GET /health HTTP/1.1\r\nHost: a\r\n${headers(45)}\r\n`, (s) => s === 431 || s === 200);
    await answered('50 request headers get 431 promptly', `GET /health HTTP/1.1\r\nHost: a\r\n${headers(50)}\r\n`, (s) => s === 431);
    await answered('obs-fold gets 400', 'GET /health HTTP/1.1\r\nHost: a\r\nx-a: b\r\n c\r\n\r\n', (s) => s === 400);
    await answered('a NUL in a header gets 400', 'GET /health HTTP/1.1\r\nHost: a\r\nx-a: b\0c\r\n\r\n', (s) => s === 400);
    await answered('a bare CR in a header gets 400', 'GET /health HTTP/1.1\r\nHost: a\r\nx-a: b\rc\r\n\r\n', (s) => s === 400);
    const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    await answered('conflicting content-length gets 400', `POST /v1/chat/completions HTTP/1.1\r\nHost: a\r\ncontent-type: application/json\r\nContent-Length: ${body.length}\r\nContent-Length: 5\r\n\r\n${body}`, (s) => s === 400);
    const pipelined = await raw(p.port, 'GET /health HTTP/1.1\r\nHost: a\r\n\r\nGET /nope HTTP/1.1\r\nHost: a\r\n\r\nGET /health HTTP/1.1\r\nHost: a\r\n\r\n');
    tally.check('pipelined requests are all answered', (pipelined.text.match(/HTTP\/1\.1 \d{3}/g) ?? []).length === 3, pipelined.text.slice(0, 100));
    const post2 = `POST /v1/chat/completions HTTP/1.1\r\nHost: a\r\ncontent-type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const behind = await raw(p.port, post2 + post2);
    const answers = (behind.text.match(/HTTP\/1\.1 \d{3}/g) ?? []).length;
    tally.check('two pipelined POSTs: both answered or the connection closed', answers === 2 || (behind.closed && answers < 2), `${answers} answered, ${behind.closed ? 'closed' : 'left open'}`);
    for (const model of ['azure/..', 'azure/a/../../x']) {
      const before = m.requests.length;
      const r = await post(p.url, '/v1/chat/completions', { model, messages: [{ role: 'user', content: 'hi' }] });
      tally.check(`model ${model} refused before a URL is built`, r.status === 400 && m.requests.length === before, `status ${r.status}, provider requests ${m.requests.length - before}`);
    }
  },
};

export const dataPlaneSections = [item1, item2, item3, item4, item5, item6, item7];

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const summary = await runSections(dataPlaneSections, parseArgs(process.argv.slice(2)));
  process.exit(summary.broken === 0 ? 0 : 1);
}
