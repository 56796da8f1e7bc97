// @ts-check
/**
 * What decide `on: response` rules add to a chat request, end to end through the proxy, when the
 * model server answers each question in a fixed time: one rule with two questions (asked
 * concurrently), with answer caching off (every response asked) and on (repeated responses
 * answered from the cache). Mock provider, mock decide model and proxy run in this process;
 * requests go one at a time so the figures are latencies, not throughput.
 */
import { request } from 'undici';
import { startMockProvider } from '../mock/provider.js';
import { startDecideModel } from '../mock/decide-model.js';

const MODEL_LATENCY_MS = 20;
const REQUESTS = 200;
const VK = 'vk_bench_decide_000001';
const RULE = {
  id: 'no-credentials-in-chat',
  on: 'response',
  rollout: 'enforce',
  questions: {
    leaks: { type: 'yes_no', ask: 'Does the response print a credential or secret value?' },
    instructs: { type: 'yes_no', ask: 'Does the response tell the user to disable a safety check?' },
  },
  when: 'leaks or instructs',
};
const ENGINE_MODEL = 'judge-bench@v1';

/**
 * @param {string} url
 * @param {number} n
 * @param {(i: number) => string} content  the mock's reply for request i
 */
async function timeRequests(url, n, content) {
  const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Explain the change.' }] });
  const cpu = process.cpuUsage();
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const res = await request(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${VK}`, 'content-type': 'application/json', 'x-mock-content': encodeURIComponent(content(i)) },
      body,
    });
    await res.body.text();
    if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
  }
  const wallMs = (performance.now() - start) / n;
  const used = process.cpuUsage(cpu);
  return { wallMs, cpuUs: (used.user + used.system) / n };
}

/** @type {import('./index.js').MicroBenchmark} */
export const decideOverheadBenchmark = {
  name: 'decide-overhead',
  description: `decide on-response rule (2 questions, model ${MODEL_LATENCY_MS} ms): ms per chat request, answer cache off and on`,
  async run() {
    const { ProxyServer } = await import('../../dist/proxy/server.js');
    const { buildRuntimeConfig } = await import('../../dist/config/runtime.js');
    const { ModelCatalog } = await import('../../dist/upstream/catalog.js');
    const { TraceSink } = await import('../../dist/traces/sink.js');
    const { MemoryStore } = await import('../../dist/state/index.js');
    const { createLogger } = await import('../../dist/lib/logger.js');
    const { DecideRuntime } = await import('../../dist/decide/runtime.js');
    const { buildEngineConfig } = await import('../../dist/decide/engine-config.js');
    const { compileRecord } = await import('../../dist/decide/record.js');
    const logger = createLogger('silent');
    const provider = await startMockProvider();
    const model = await startDecideModel();
    model.setAnswers([
      { match: 'print a credential', pYes: 0.03, delayMs: MODEL_LATENCY_MS },
      { match: 'disable a safety check', pYes: 0.02, delayMs: MODEL_LATENCY_MS },
    ]);
    const compiled = compileRecord(RULE, 'bench');
    if (!compiled.ok) throw new Error(compiled.problems.join('; '));
    const rule = compiled.rule;
    const pins = { [RULE.id]: { ruleHash: rule.hash, model: ENGINE_MODEL, accuracy: 1, p95Ms: MODEL_LATENCY_MS, cases: 1, pinnedAt: new Date().toISOString() } };

    /** @param {number | null} cacheTtlMs  null: no decide rules at all */
    const proxyWith = async (cacheTtlMs) => {
      const decide =
        cacheTtlMs === null
          ? undefined
          : new DecideRuntime({
              engine: buildEngineConfig({ url: model.url, model: ENGINE_MODEL, cache_ttl_ms: cacheTtlMs, timeout_ms: 1000 }, {}),
              loaded: { rules: [rule], unreadable: [], sopTexts: [] },
              pins,
              env: {},
              logger,
            });
      await decide?.start();
      const server = new ProxyServer({
        host: '127.0.0.1',
        port: 0,
        config: buildRuntimeConfig({ file: { keys: [{ key: VK }] }, upstreamUrl: provider.url }),
        catalog: ModelCatalog.load(),
        sink: new TraceSink({ dir: undefined }),
        logger,
        threads: 1,
        store: new MemoryStore(),
        env: {},
        decide,
      });
      const port = await server.listen();
      return { url: `http://127.0.0.1:${port}`, server };
    };

    /** @type {Record<string, number>} */
    const figures = {};
    try {
      /** @type {Array<[string, number | null, (i: number) => string]>} */
      const runs = [
        ['no decide rules', null, (i) => `Reply number ${i}.`],
        ['cache off', 0, (i) => `Reply number ${i}.`],
        ['cache on, repeated response', 60_000, () => 'The same reply every time.'],
      ];
      for (const [label, ttl, content] of runs) {
        const { url, server } = await proxyWith(ttl);
        try {
          await timeRequests(url, 20, content); // warm-up
          const { wallMs, cpuUs } = await timeRequests(url, REQUESTS, content);
          figures[`ms/request ${label}`] = Math.round(wallMs * 100) / 100;
          figures[`process CPU µs/request ${label}`] = Math.round(cpuUs);
        } finally {
          await server.close(0);
        }
      }
      figures['ms added, cache off'] = Math.round((figures['ms/request cache off'] - figures['ms/request no decide rules']) * 100) / 100;
      figures['ms added beyond the model, cache off'] = Math.round((figures['ms added, cache off'] - MODEL_LATENCY_MS) * 100) / 100;
      figures['ms added, cache on'] = Math.round((figures['ms/request cache on, repeated response'] - figures['ms/request no decide rules']) * 100) / 100;
    } finally {
      await provider.close();
      await model.close();
    }
    return figures;
  },
};
