// @ts-check
/**
 * What the anomaly detectors cost on a long session: a 500-message OpenAI chat history (an
 * exploration, then a landmark loop), 16 tools offered. Reports µs for the detectors alone, and
 * for the whole request inspection (DLP, injection patterns and the detectors) for scale.
 */
import { seededRandom } from '../lib/random.js';
import { medianSeconds } from './timing.js';

const MESSAGES = 500;
const ROUNDS = 400;

function history() {
  const random = seededRandom(500);
  const pick = (/** @type {string[]} */ items) => items[Math.floor(random() * items.length)];
  const tools = Array.from({ length: 16 }, (_, i) => ({
    type: 'function',
    function: { name: `tool_${i}`, description: `Tool number ${i}: reads, edits or runs things in the workspace.`, parameters: { type: 'object', properties: { path: { type: 'string' }, command: { type: 'string' } } } },
  }));
  /** @type {object[]} */
  const messages = [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'Fix the failing billing tests and clean up the module.' },
  ];
  const loop = ['tool_1', 'tool_2', 'tool_3'];
  let n = 0;
  while (messages.length < MESSAGES) {
    const looping = messages.length > MESSAGES - 60;
    const name = looping ? loop[n % 3] : pick(tools.map((t) => t.function.name));
    const args = looping ? { path: 'src/billing.ts' } : { path: `src/${pick(['a', 'b', 'c', 'd'])}/${n}.ts`, command: `npm test -- ${n}` };
    const id = `call_${n++}`;
    messages.push({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }] });
    messages.push({ role: 'tool', tool_call_id: id, content: looping ? 'FAIL rounds totals\nexit code 1' : `${pick(['ok', 'Edited', '12 passed', 'FAIL 2 failed'])} (${(random() * 3).toFixed(2)}s)\n${'line of output '.repeat(20)}` });
  }
  return { model: 'gpt-4o', tools, messages };
}

/** @type {import('./index.js').MicroBenchmark} */
export const anomalyCostBenchmark = {
  name: 'anomaly-cost',
  description: 'detectAnomalies and inspectBody on a 500-message tool-call history: µs per request',
  async run() {
    const { detectAnomalies } = await import('../../dist/policy/anomaly/detect.js');
    const { inspectBody } = await import('../../dist/policy/inspect.js');
    const { buildPolicyConfig } = await import('../../dist/policy/policy-config.js');
    const body = history();
    const policy = buildPolicyConfig({ version: 'bench', settings: {}, localPii: undefined, env: {} });
    const findings = (detectAnomalies(body, [])?.findings ?? []).map((f) => f.detector).join(',');
    const bodies = Array.from({ length: ROUNDS }, () => structuredClone(body));
    const detectSeconds = medianSeconds(() => {
      for (const b of bodies) detectAnomalies(b, []);
    });
    const inspectSeconds = medianSeconds(() => {
      for (const b of bodies) inspectBody(policy, b);
    });
    const perRequest = (/** @type {number} */ s) => Math.round((s * 1e6) / ROUNDS);
    return {
      messages: body.messages.length,
      findings,
      'detectors µs': perRequest(detectSeconds),
      'whole inspection µs': perRequest(inspectSeconds),
    };
  },
};
