import t from 'tap';
import { buildEngineConfig } from '../../src/decide/engine-config.js';
import { DecideEngine } from '../../src/decide/evaluate.js';
import { createLogger } from '../../src/lib/logger.js';
import { engineOn, MODEL, pinFor, rule, startModel } from '../helpers/decide.js';

const DROP = rule({
  id: 'no-prod-drop',
  on: 'tool_call',
  tools: ['bash'],
  rollout: 'enforce',
  questions: { drops: { type: 'yes_no', ask: 'Does the command drop a table?' }, prod: { type: 'yes_no', ask: 'Does it target production?' } },
  when: 'drops and prod',
});
const ask = { canAskPerson: true };

t.test('refuse, allow and escalate from the answers', async (t) => {
  const model = await startModel(t);
  const engine = engineOn(t, model, { rules: [DROP], pins: pinFor(DROP, MODEL) });
  const active = engine.find('no-prod-drop')!;
  t.equal(active.stamp, 'enforce');

  model.setAnswers([{ match: 'drop a table', pYes: 0.95 }, { match: 'target production', pYes: 0.9 }]);
  const refuse = await engine.evaluate(active, 'psql -c "DROP TABLE users" prod', ask);
  t.equal(refuse.outcome, 'refuse');
  t.equal(refuse.code, 'DECIDE_REFUSED');
  t.equal(refuse.answers.drops!.answer, 'yes');
  t.equal(refuse.model, MODEL);

  model.setAnswers([{ match: 'drop a table', pYes: 0.95 }, { match: 'target production', pYes: 0.02 }]);
  const allow = await engine.evaluate(active, 'psql -c "DROP TABLE users" staging', ask);
  t.equal(allow.outcome, 'allow');
  t.equal(allow.code, null);

  model.setAnswers([{ match: 'drop a table', pYes: 0.95 }, { match: 'target production', pYes: 0.5 }]);
  const hold = await engine.evaluate(active, 'psql -c "DROP TABLE users" somewhere', ask);
  t.equal(hold.outcome, 'escalate');
  t.equal(hold.code, null, 'a harness that can ask a person holds');
  const noPerson = await engine.evaluate(active, 'psql -c "DROP TABLE users" elsewhere', { canAskPerson: false });
  t.equal(noPerson.code, 'DECIDE_ESCALATED', 'a harness that cannot ask a person refuses the escalation');
});

t.test('escalate: refuse turns every escalation into DECIDE_ESCALATED', async (t) => {
  const model = await startModel(t);
  const strict = rule({ ...DROP.record, id: 'strict', escalate: 'refuse' });
  const engine = engineOn(t, model, { rules: [strict] });
  model.setAnswers([{ match: 'drop a table', pYes: 0.5 }, { match: 'target production', pYes: 0.5 }]);
  const d = await engine.evaluate(engine.find('strict')!, 'DROP TABLE x', ask);
  t.equal(d.outcome, 'escalate');
  t.equal(d.code, 'DECIDE_ESCALATED');
});

t.test('band edges: exactly yes_at is yes, just under no_below is no, exactly no_below is unknown', async (t) => {
  const model = await startModel(t);
  const one = rule({ id: 'one', on: 'response', questions: { q: { type: 'yes_no', ask: 'Is it bad?' } }, when: 'q' });
  const engine = engineOn(t, model, { rules: [one], file: { yes_at: 0.8, no_below: 0.2, cache_ttl_ms: 0 } });
  const a = engine.find('one')!;
  const at = async (p: number, variants = false) => {
    model.setAnswers([{ match: 'Is it bad?', pYes: p, variants }]);
    return (await engine.evaluate(a, 'subject', ask)).answers.q!.answer;
  };
  t.equal(await at(0.8), 'yes');
  t.equal(await at(0.8, true), 'yes', 'Yes/yes and No/no variants are summed and normalised');
  t.equal(await at(0.7999), 'unknown');
  t.equal(await at(0.2), 'unknown');
  t.equal(await at(0.1999), 'no');
});

t.test('a question set is asked concurrently', async (t) => {
  const model = await startModel(t);
  const engine = engineOn(t, model, { rules: [DROP] });
  await engine.checkCanary();
  model.setAnswers([{ match: 'drop a table', pYes: 0.95, delayMs: 400 }, { match: 'target production', pYes: 0.95, delayMs: 400 }]);
  const before = model.requests.length;
  let settled = false;
  const pending = engine.evaluate(engine.find('no-prod-drop')!, 'DROP TABLE x', ask).then((d) => ((settled = true), d));
  while (model.requests.length < before + 2) await new Promise((r) => setTimeout(r, 5));
  t.notOk(settled, 'both questions reached the model before either was answered');
  t.equal((await pending).outcome, 'refuse');
});

t.test('answers are cached per rule and subject; off with a TTL of 0', async (t) => {
  const model = await startModel(t);
  const on = engineOn(t, model, { rules: [DROP] });
  await on.checkCanary();
  const a = on.find('no-prod-drop')!;
  const first = model.questions;
  const one = await on.evaluate(a, 'DROP TABLE x', ask);
  const two = await on.evaluate(a, 'DROP TABLE x', ask);
  t.equal(model.questions - first, 2, 'two questions asked once');
  t.notOk(one.cached);
  t.ok(two.cached);
  await on.evaluate(a, 'DROP TABLE y', ask);
  t.equal(model.questions - first, 4, 'another subject is asked again');

  const off = engineOn(t, model, { rules: [DROP], file: { cache_ttl_ms: 0 } });
  await off.checkCanary();
  const base = model.questions;
  await off.evaluate(off.find('no-prod-drop')!, 'DROP TABLE x', ask);
  await off.evaluate(off.find('no-prod-drop')!, 'DROP TABLE x', ask);
  t.equal(model.questions - base, 4);
});

t.test('governance unavailable: not configured, hosted, error, timeout, no probabilities, canary, five enforcing rules', async (t) => {
  const model = await startModel(t);
  const logger = createLogger('silent');
  const notConfigured = new DecideEngine({ config: buildEngineConfig({}, {}), rules: [DROP], pins: {}, logger });
  t.teardown(() => notConfigured.close());
  t.match(await notConfigured.evaluate(notConfigured.find('no-prod-drop')!, 'x', ask), { outcome: 'unavailable', code: 'GOVERNANCE_UNAVAILABLE', unavailable: 'not_configured' });

  const hosted = new DecideEngine({ config: buildEngineConfig({ url: 'https://api.openai.com/v1', model: 'gpt-4o-mini' }, {}), rules: [DROP], pins: {}, logger });
  t.teardown(() => hosted.close());
  t.match(await hosted.evaluate(hosted.find('no-prod-drop')!, 'x', ask), { outcome: 'unavailable', unavailable: 'host_not_self_hosted' });

  const engine = engineOn(t, model, { rules: [DROP], file: { timeout_ms: 300, cache_ttl_ms: 0 } });
  const a = engine.find('no-prod-drop')!;
  t.match(await engine.evaluate(a, 'x [[status=500]]', ask), { outcome: 'unavailable', unavailable: 'error' });
  t.match(await engine.evaluate(a, 'x [[delay=2000]]', ask), { outcome: 'unavailable', unavailable: 'timeout' });
  t.match(await engine.evaluate(a, 'x [[nologprobs]]', ask), { outcome: 'unavailable', unavailable: 'no_probabilities' });
  model.setAnswers([{ match: 'drop a table', text: 'Certainly', pYes: 0.9, noLogprobs: true }]);
  t.match(await engine.evaluate(a, 'y', ask), { outcome: 'unavailable', unavailable: 'no_probabilities' });
  model.setAnswers([]);

  model.setCanary('wrong');
  await engine.checkCanary();
  t.match(await engine.evaluate(a, 'DROP TABLE x', ask), { outcome: 'unavailable', unavailable: 'canary_failed' });
  model.setCanary('right');
  await engine.checkCanary();
  t.match(await engine.evaluate(a, 'DROP TABLE x', ask), { outcome: 'allow' }, 'a passing canary restores the engine');

  const five = [1, 2, 3, 4, 5].map((n) => rule({ ...DROP.record, id: `r${n}` }));
  const pins = Object.assign({}, ...five.map((r) => pinFor(r, MODEL)));
  const crowded = engineOn(t, model, { rules: five, pins });
  t.match(await crowded.evaluate(crowded.find('r1')!, 'ls', ask), { outcome: 'unavailable', unavailable: 'too_many_enforcing_rules' });
  const four = engineOn(t, model, { rules: five.slice(0, 4), pins });
  t.match(await four.evaluate(four.find('r1')!, 'ls', ask), { outcome: 'allow' }, 'four enforcing rules on a tool are fine');
  const shadowFifth = engineOn(t, model, { rules: five, pins: Object.assign({}, ...five.slice(0, 4).map((r) => pinFor(r, MODEL))) });
  t.match(await shadowFifth.evaluate(shadowFifth.find('r1')!, 'ls', ask), { outcome: 'allow' }, 'a shadow fifth rule does not count');
});

t.test('a rule whose p95 cannot fit the time left is not asked and escalates', async (t) => {
  const model = await startModel(t);
  const engine = engineOn(t, model, { rules: [DROP], pins: pinFor(DROP, MODEL, 5000), file: { timeout_ms: 1000 } });
  await engine.checkCanary();
  const before = model.questions;
  const d = await engine.evaluate(engine.find('no-prod-drop')!, 'DROP TABLE x', { canAskPerson: false });
  t.equal(d.outcome, 'escalate');
  t.equal(d.code, 'DECIDE_ESCALATED');
  t.match(d.reason, /p95 of 5000 ms does not fit the 1000 ms left/);
  t.equal(model.questions, before, 'the model was not asked');
  const fits = engineOn(t, model, { rules: [DROP], pins: pinFor(DROP, MODEL, 50), file: { timeout_ms: 1000 } });
  t.equal((await fits.evaluate(fits.find('no-prod-drop')!, 'DROP TABLE z', { ...ask, timeLeftMs: 20 })).outcome, 'escalate', 'less time left than the pinned p95');
  t.equal((await fits.evaluate(fits.find('no-prod-drop')!, 'DROP TABLE x', ask)).outcome, 'allow');
});

t.test('shadow vs enforce: enforce is a ceiling that needs a pin on this model and this record', async (t) => {
  const model = await startModel(t);
  t.equal(engineOn(t, model, { rules: [DROP] }).find('no-prod-drop')!.stamp, 'shadow', 'no pin');
  t.equal(engineOn(t, model, { rules: [DROP], pins: pinFor(DROP, 'other-model@v1') }).find('no-prod-drop')!.stamp, 'shadow', 'pinned on another model');
  const edited = rule({ ...DROP.record, when: 'drops' });
  t.equal(engineOn(t, model, { rules: [edited], pins: { 'no-prod-drop': pinFor(DROP, MODEL)['no-prod-drop']! } }).find('no-prod-drop')!.stamp, 'shadow', 'the record changed since the eval');
  const shadowRollout = rule({ ...DROP.record, rollout: 'shadow' });
  t.equal(engineOn(t, model, { rules: [shadowRollout], pins: pinFor(shadowRollout, MODEL) }).find('no-prod-drop')!.stamp, 'shadow', 'rollout shadow stays shadow');
  t.equal(engineOn(t, model, { rules: [DROP], pins: pinFor(DROP, MODEL) }).find('no-prod-drop')!.stamp, 'enforce');
});

t.test('the canary runs again on its interval: a model that starts failing it becomes unavailable', async (t) => {
  const model = await startModel(t);
  const engine = engineOn(t, model, { rules: [DROP], file: { canary_interval_ms: 1000, cache_ttl_ms: 0 } });
  await engine.start();
  const a = engine.find('no-prod-drop')!;
  t.equal((await engine.evaluate(a, 'ls', ask)).outcome, 'allow');
  model.setCanary('wrong');
  let outcome = 'allow';
  for (let i = 0; i < 200 && outcome !== 'unavailable'; i++) {
    await new Promise((r) => setTimeout(r, 50));
    outcome = (await engine.evaluate(a, 'ls', ask)).outcome;
  }
  t.equal(outcome, 'unavailable', 'a periodic canary caught it');
});
