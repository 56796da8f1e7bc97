import t from 'tap';
import { copyFile, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { startMockProvider } from '../../../bench/mock/provider.js';
import { spawnProxy } from '../../helpers/proxy.js';
import { compileRules, svc } from '../../helpers/wasm.js';
import { until as waitFor } from '../../helpers/until.js';

// Every rule is metered when it loads (binaryen in a child process): slow on a loaded machine.
t.setTimeout(600_000);

const FUEL = 5_000_000;

const rules = await compileRules(t, ['destructive-shell', 'index', 'infinite-loop']);
const mock = await startMockProvider();
t.teardown(() => mock.close());

interface Health {
  wasm: { rules: Array<{ name: string; priority: number; sha256: string }>; failed: Array<{ file: string; error: string }>; fuel: number; runner: { fuelExhausted: number } | null };
}

async function setup(t: Tap.Test, file: Record<string, unknown> = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'svc-hot-reload-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const env = { SVC_WASM_DIR: join(dir, 'wasm'), SVC_HOME: join(dir, 'home') };
  const config = join(dir, 'config.json');
  // Fuel well above what the example rules spend, well below the default: the infinite loop stops sooner.
  await writeFile(config, JSON.stringify({ wasm: { fuel: FUEL }, ...file }));
  const proxy = await spawnProxy(t, ['--upstream-url', mock.url, '--config', config, '--threads', '1'], env);
  const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${proxy.url}/v1`, maxRetries: 0 });
  const health = async () => (await (await fetch(`${proxy.url}/health`)).json()) as Health;
  /** Waits for /health to satisfy `ready` (the watcher, or at worst the periodic rescan, gets there). */
  const until = async (ready: (h: Health) => boolean) => {
    for (let i = 0; i < 400; i++) {
      const h = await health();
      if (ready(h)) return h;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`never ready: ${JSON.stringify(await health())}`);
  };
  return { env, proxy, openai, health, until, dir: env.SVC_WASM_DIR };
}

const tool = (name: string) => [{ type: 'function' as const, function: { name, parameters: { type: 'object', properties: { command: { type: 'string' } } } } }];

/** Keeps `connections` requests in flight until stopped, each asking for a destructive command. */
function load(openai: OpenAI, connections: number, toolName = 'bash') {
  let running = true;
  const outcomes: Array<'blocked' | 'allowed'> = [];
  const failures: unknown[] = [];
  let sent = 0;
  const worker = async () => {
    while (running) {
      const body = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'clean' }], tools: tool(toolName) };
      const options = { headers: { 'x-mock-tool-args': JSON.stringify({ command: 'rm -rf /' }) } };
      try {
        // Every other request streams.
        const message =
          sent++ % 2 === 0
            ? (await openai.chat.completions.create(body, options)).choices[0]!.message
            : (await openai.chat.completions.stream({ ...body, stream: true }, options).finalChatCompletion()).choices[0]!.message;
        if (message.tool_calls?.length === 1) outcomes.push('allowed');
        else if (/BLOCKED/.test(message.content ?? '')) outcomes.push('blocked');
        else failures.push(new Error(`neither allowed nor blocked: ${JSON.stringify(message)}`));
      } catch (err) {
        failures.push(err);
      }
    }
  };
  const workers = Array.from({ length: connections }, worker);
  return {
    outcomes,
    failures,
    /** Resolves once `n` more requests have completed. */
    async next(n: number) {
      const target = outcomes.length + failures.length + n;
      while (outcomes.length + failures.length < target) await new Promise((r) => setTimeout(r, 10));
      return outcomes.slice(-n);
    },
    async stop() {
      running = false;
      await Promise.all(workers);
    },
  };
}

t.test('rules are added, replaced and removed under load without a restart or a failed request', async (t) => {
  const { env, openai, until, dir, proxy } = await setup(t);
  const traffic = load(openai, 8);
  t.same(new Set(await traffic.next(10)), new Set(['allowed']), 'no rule: the call goes through');

  t.equal((await svc(['policy', 'install', '--wasm', rules['destructive-shell'], '--name', 'guard'], env)).code, 0);
  const added = await until((h) => h.wasm.rules.length === 1);
  await traffic.next(8);
  t.same(new Set(await traffic.next(10)), new Set(['blocked']), 'added: the call is blocked');

  t.equal((await svc(['policy', 'install', '--wasm', rules.index, '--name', 'guard'], env)).code, 0);
  const replaced = await until((h) => h.wasm.rules.length === 1 && h.wasm.rules[0]!.sha256 !== added.wasm.rules[0]!.sha256);
  t.equal(replaced.wasm.rules[0]!.name, 'guard');
  await traffic.next(8);
  t.same(new Set(await traffic.next(10)), new Set(['blocked']), 'replaced: the new module blocks too');

  await unlink(join(dir, '100_guard.wasm'));
  await until((h) => h.wasm.rules.length === 0);
  await traffic.next(8);
  t.same(new Set(await traffic.next(10)), new Set(['allowed']), 'removed: the call goes through again');

  await traffic.stop();
  t.same(traffic.failures, [], 'no request failed');
  t.ok(traffic.outcomes.length >= 60);
  t.equal(proxy.child.exitCode, null, 'the same process throughout');
});

t.test('a corrupt module is skipped with a log line and shown in /health; the other rules keep running', async (t) => {
  const { env, openai, until, dir, proxy } = await setup(t);
  t.equal((await svc(['policy', 'install', '--wasm', rules['destructive-shell'], '--name', 'guard'], env)).code, 0);
  await writeFile(join(dir, '50_corrupt.wasm'), Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 0xff, 0xff]));
  const h = await until((h) => h.wasm.failed.length === 1 && h.wasm.rules.length === 1);
  t.same(h.wasm.failed, [{ file: '50_corrupt.wasm', error: 'not a valid WebAssembly module' }]);
  // The log line is written asynchronously and reaches this process through a pipe: wait for it.
  await waitFor('the log line', () => (/WASM rule 50_corrupt\.wasm skipped: not a valid WebAssembly module/.test(proxy.stderr()) ? true : undefined));
  t.pass('the skip is logged');
  const res = await openai.chat.completions.create(
    { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], tools: tool('bash') },
    { headers: { 'x-mock-tool-args': JSON.stringify({ command: 'rm -rf /' }) } },
  );
  t.match(res.choices[0]!.message.content, /BLOCKED: .*rule guard/, 'the good rule still runs');
  await copyFile(rules['destructive-shell'], join(dir, '50_corrupt.wasm'));
  const fixed = await until((h) => h.wasm.failed.length === 0);
  t.same(fixed.wasm.rules.map((r) => r.name), ['corrupt', 'guard'], 'fixed in place, it loads');
});

t.test('an infinite loop is stopped by its fuel while other requests keep succeeding', async (t) => {
  const { env, openai, until, health } = await setup(t);
  t.equal((await svc(['policy', 'install', '--wasm', rules['infinite-loop'], '--name', 'spinner', '--priority', '10'], env)).code, 0);
  t.equal((await svc(['policy', 'install', '--wasm', rules['destructive-shell'], '--name', 'guard', '--priority', '20'], env)).code, 0);
  await until((h) => h.wasm.rules.length === 2);
  const others = load(openai, 4);
  const spins = Array.from({ length: 3 }, () =>
    openai.chat.completions.create(
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x' }], tools: tool('spin') },
      { headers: { 'x-mock-tool-args': '{}' } },
    ),
  );
  for (const res of await Promise.all(spins)) {
    t.match(res.choices[0]!.message.content, `BLOCKED: the spin tool call was blocked by rule spinner: rule failed: it ran out of fuel (${FUEL} units) and was stopped`);
  }
  await others.next(12);
  await others.stop();
  t.same(others.failures, [], 'no other request failed');
  t.same(new Set(others.outcomes), new Set(['blocked']), 'and the rules after the loop still judged them');
  const h = await health();
  t.equal(h.wasm.fuel, FUEL);
  t.equal(h.wasm.runner!.fuelExhausted, 3, 'each loop was stopped by its fuel');
});

t.test('a cached answer is not replayed past a rule installed after it was stored', async (t) => {
  const { env, openai, until } = await setup(t, { settings: { featureFlags: { ff_response_cache_exact: true } } });
  const ask = () =>
    openai.chat.completions
      .create(
        { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'clean up' }], tools: tool('bash') },
        { headers: { 'x-mock-tool-args': JSON.stringify({ command: 'rm -rf /' }) } },
      )
      .withResponse();
  const first = await ask();
  t.equal(first.data.choices[0]!.message.tool_calls?.length, 1);
  const again = await ask();
  t.equal(again.response.headers.get('x-svc-cache'), 'hit', 'the answer is cached');
  t.equal((await svc(['policy', 'install', '--wasm', rules['destructive-shell'], '--name', 'guard'], env)).code, 0);
  await until((h) => h.wasm.rules.length === 1);
  const judged = await ask();
  t.equal(judged.response.headers.get('x-svc-cache'), 'miss');
  t.match(judged.data.choices[0]!.message.content, /BLOCKED: .*rule guard/);
});
