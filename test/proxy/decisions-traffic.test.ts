import t from 'tap';
import { buildEngineConfig } from '../../src/decide/engine-config.js';
import { DecideRuntime } from '../../src/decide/runtime.js';
import { createLogger } from '../../src/lib/logger.js';
import { startProxy } from '../helpers/proxy.js';
import { MODEL, pinFor, rule, startModel, type DecideModel } from '../helpers/decide.js';

const VK = 'vk_test_agent_000001';
const DROP = {
  id: 'no-prod-drop',
  on: 'tool_call',
  tools: ['bash'],
  rollout: 'enforce',
  questions: { drops: { type: 'yes_no', ask: 'Does the command drop a table?' }, prod: { type: 'yes_no', ask: 'Does it target production?' } },
  when: 'drops and prod',
};

async function setup(t: Tap.Test, opts: { engineModel?: string; file?: Record<string, unknown>; model?: DecideModel } = {}) {
  const model = opts.model ?? (await startModel(t));
  const engineModel = opts.engineModel ?? MODEL;
  const r = rule(DROP);
  const decide = new DecideRuntime({
    engine: buildEngineConfig({ url: model.url, model: engineModel }, {}),
    loaded: { rules: [r], unreadable: [], sopTexts: [] },
    pins: pinFor(r, engineModel),
    env: {},
    logger: createLogger('silent'),
  });
  const proxy = await startProxy(t, { file: { keys: [{ key: VK }], ...opts.file }, decide });
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${proxy.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${VK}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    return { status: res.status, headers: res.headers, json: (await res.json()) as Record<string, any> };
  };
  return { model, proxy, post };
}

t.test('POST /v1/decisions evaluates a rule: outcome, p(yes) per question, model, latency', async (t) => {
  const { model, post, proxy } = await setup(t);
  model.setAnswers([{ match: 'drop a table', pYes: 0.96 }, { match: 'target production', pYes: 0.91 }]);
  const res = await post('/v1/decisions', { rule: 'no-prod-drop', subject: { tool: 'bash', arguments: { command: 'psql prod -c "DROP TABLE users"' } } });
  t.equal(res.status, 200);
  t.match(res.json, { object: 'decision', rule: 'no-prod-drop', rollout: 'enforce', outcome: 'refuse', code: 'DECIDE_REFUSED', model: MODEL, cached: false, warnings: [] });
  t.equal(res.json.questions.drops.answer, 'yes');
  t.ok(Math.abs(res.json.questions.drops.p_yes - 0.96) < 1e-9);
  t.type(res.json.latency_ms, 'number');
  t.equal(res.json.id, res.headers.get('x-svc-trace-id'));
  t.equal(proxy.sink.recent().at(-1)!.route, '/v1/decisions');
  t.notOk(model.requests.some((r) => JSON.stringify(r.body).includes('vk_')), 'the virtual key never reaches the model');

  model.setAnswers([{ match: 'drop a table', pYes: 0.96 }, { match: 'target production', pYes: 0.5 }]);
  const escalate = await post('/v1/decisions', { rule: 'no-prod-drop', subject: 'DROP TABLE users on db-7' });
  t.match(escalate.json, { outcome: 'escalate', code: 'DECIDE_ESCALATED' }, 'no harness: nobody to ask');
  const held = await post('/v1/decisions', { rule: 'no-prod-drop', subject: 'DROP TABLE users on db-8' }, { 'x-svc-harness': 'claude-code' });
  t.match(held.json, { outcome: 'escalate', code: null });
});

t.test('an inline question set', async (t) => {
  const { model, post } = await setup(t);
  model.setAnswers([{ match: 'Is it rude?', pYes: 0.01 }]);
  const res = await post('/v1/decisions', { questions: { rude: { type: 'yes_no', ask: 'Is it rude?' } }, subject: 'Thanks for the review!' });
  t.match(res.json, { rule: 'inline', outcome: 'allow', code: null, questions: { rude: { answer: 'no' } } });
});

t.test('refusals: bad bodies, unknown rules, floating models, DLP block patterns, governance unavailable', async (t) => {
  const { post, model } = await setup(t, { engineModel: 'qwen2.5-7b-instruct:latest', file: { piiDetectors: { 'pii.card': 'block' } } });
  const floating = await post('/v1/decisions', { rule: 'no-prod-drop', subject: 'ls' });
  t.equal(floating.status, 403);
  t.match(floating.json.error, { code: 'policy_denied', type: 'permission_error', message: /no pinned version/ });
  t.equal(floating.headers.get('x-svc-enforcement'), 'KILL');
  t.equal(floating.json.error.trace_id, floating.headers.get('x-svc-trace-id'), 'the refusal carries the trace id');

  const pinned = await setup(t, { file: { piiDetectors: { 'pii.card': 'block' } }, model });
  const dlp = await pinned.post('/v1/decisions', { rule: 'no-prod-drop', subject: 'charge 4111 1111 1111 1111 now' });
  t.equal(dlp.status, 403);
  t.match(dlp.json.error, { code: 'dlp_blocked' });
  t.equal((await pinned.post('/v1/decisions', { subject: 'x' })).status, 400);
  t.match((await pinned.post('/v1/decisions', { rule: 'nope', subject: 'x' })).json.error, { code: 'rule_not_found' });
  t.match((await pinned.post('/v1/decisions', { rule: 'no-prod-drop', subject: 'x', extra: 1 })).json.error, { code: 'invalid_request', param: null });
  t.match((await pinned.post('/v1/decisions', { rule: 'no-prod-drop', subject: 'x', model: 'other@v1' })).json.error, { code: 'model_not_served' });
  model.setCanary('wrong');
  const unavailable = await setup(t, { model });
  const res = await unavailable.post('/v1/decisions', { rule: 'no-prod-drop', subject: 'ls' });
  t.equal(res.status, 503);
  t.match(res.json.error, { code: 'governance_unavailable', message: /canary_failed/ });
});

t.test('decision_traffic.mode shadow and allow_unpinned relax the refusals', async (t) => {
  const model = await startModel(t);
  const shadow = await setup(t, { model, engineModel: 'judge:latest', file: { decision_traffic: { mode: 'shadow' }, piiDetectors: { 'pii.card': 'block' } } });
  const res = await shadow.post('/v1/decisions', { rule: 'no-prod-drop', subject: 'card 4111 1111 1111 1111' });
  t.equal(res.status, 200);
  t.same(res.json.warnings, ['unpinned_model', 'would_block:pii.card']);
  const relaxed = await setup(t, { model, engineModel: 'judge', file: { decision_traffic: { allow_unpinned: true } } });
  const ok = await relaxed.post('/v1/decisions', { rule: 'no-prod-drop', subject: 'ls' });
  t.equal(ok.status, 200);
  t.same(ok.json.warnings, ['unpinned_model']);
});

t.test('POST /v1/decisions/eval runs a rule over labelled cases', async (t) => {
  const { model, post } = await setup(t);
  model.setAnswers([
    { match: 'DROP TABLE prod_users', pYes: 0.97 },
    { match: 'SELECT', pYes: 0.02 },
  ]);
  const res = await post('/v1/decisions/eval', {
    rule: 'no-prod-drop',
    cases: [
      { subject: 'DROP TABLE prod_users', expect: 'refuse' },
      { subject: 'SELECT 1', expect: 'allow' },
      { subject: 'SELECT 2', expect: 'refuse' },
    ],
    min_accuracy: 0.5,
  });
  t.equal(res.status, 200);
  t.match(res.json, { object: 'decision.eval', rule: 'no-prod-drop', model: MODEL, passed: true, failure: null });
  t.ok(Math.abs(res.json.accuracy - 2 / 3) < 1e-9);
  t.same(res.json.cases.map((c: { correct: boolean }) => c.correct), [true, true, false]);
});

t.test('the isPinnedModel rule', async (t) => {
  const { isPinnedModel } = await import('../../src/decide/traffic.js');
  for (const m of ['judge@sha256:abc', 'qwen2.5:7b-instruct-q4', 'gpt-4o-2024-08-06', 'claude-3-5-sonnet-20241022', 'judge@v3']) t.ok(isPinnedModel(m), m);
  for (const m of ['judge', 'qwen2.5:latest', 'llama3:stable', 'gpt-4o']) t.notOk(isPinnedModel(m), m);
});
