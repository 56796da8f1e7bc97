import t from 'tap';
import { pino } from 'pino';
import { sigmoid } from '../../src/decide/band.js';
import { buildEngineConfig } from '../../src/decide/engine-config.js';
import { legacyBand, legacyFromEnv } from '../../src/decide/legacy-judge.js';
import { DecideRuntime } from '../../src/decide/runtime.js';
import { startModel, type DecideModel } from '../helpers/decide.js';

const LO = -1;
const HI = 1.5;
const NONE = { rules: [], unreadable: [], sopTexts: [{ file: 'sops/secrets.md', text: 'Never print credentials.' }] };

function capture() {
  const lines: Array<{ level: number; msg: string }> = [];
  const logger = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  return { logger, lines, warnings: () => lines.filter((l) => l.level === 40).map((l) => l.msg), errors: () => lines.filter((l) => l.level === 50).map((l) => l.msg) };
}

function legacyEnv(model: DecideModel, extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  return {
    SVC_GATEWAY_LOCAL_JUDGE: '1',
    MSRV_LOCAL_URL: model.url,
    MSRV_LOCAL_API_KEY: 'sk-local-judge-key',
    MSRV_LOCAL_TYPED_JUDGE_MODEL: 'typed-judge@v2',
    MSRV_LOCAL_JUDGE_MODEL: 'free-judge@v2',
    SVC_GATEWAY_LOCAL_JUDGE_TYPED_LO: String(LO),
    SVC_GATEWAY_LOCAL_JUDGE_TYPED_HI: String(HI),
    ...extra,
  };
}

async function runtime(t: Tap.Test, env: NodeJS.ProcessEnv, logger = capture().logger) {
  const rt = new DecideRuntime({ engine: buildEngineConfig({}, {}), loaded: NONE, pins: {}, env, logger });
  t.teardown(() => rt.close());
  return rt;
}

/** Both questions answered with p; free-text answers `text`. */
function answer(model: DecideModel, pA: number, pR1: number, text = 'COMPLIANT: fine.') {
  model.setAnswers([
    { match: 'violate any active SOP constraint', pYes: pA },
    { match: 'breaks a constraint', pYes: pR1 },
    { match: 'Response:\n', text },
  ]);
}

t.test('the band: no_below σ(LO), yes_at σ(HI); HI must be above 0', async (t) => {
  t.match(legacyBand('-1', '1.5'), { band: { yesAt: sigmoid(1.5), noBelow: sigmoid(-1) } });
  t.match(legacyBand('-1', '0'), { problem: /HI must be above 0/ });
  t.match(legacyBand('-1', '-0.5'), { problem: /HI must be above 0/ });
  t.match(legacyBand('2', '1'), { problem: /LO must not exceed HI/ });
  t.match(legacyBand('x', '1'), { problem: /numbers/ });
});

t.test('with a band: score at HI is VIOLATION (free text writes the note), below LO compliant, between AMBIGUOUS', async (t) => {
  const model = await startModel(t);
  const log = capture();
  const rt = await runtime(t, legacyEnv(model), log.logger);
  t.same(log.warnings().filter((m) => /deprecated/.test(m)).length, 1, 'one deprecation warning');
  t.same(log.errors(), []);
  t.ok(rt.judgesResponses);

  answer(model, sigmoid(HI), sigmoid(HI), 'VIOLATION: it prints the deploy key.');
  const atHi = await rt.noteFor('the key is AKIA-1', { traceId: 'tr_1' });
  t.match(atHi, { verdict: 'VIOLATION', rule: 'local-judge', text: '[Svc Governance] VIOLATION (local-judge): it prints the deploy key.' });
  const typed = model.requests.filter((r) => r.body.logprobs === true && r.body.model === 'typed-judge@v2');
  t.ok(typed.length >= 2, 'the typed model answers the questions');
  t.equal(typed[0]!.headers.authorization, 'Bearer sk-local-judge-key');
  t.match(typed.map((r) => r.body.messages[1].content).join('\n'), /Never print credentials\./, 'the questions carry the active SOPs');

  answer(model, 0.9, sigmoid(2 * HI - 2.2), 'VIOLATION: should not decide.');
  t.match(await rt.noteFor('mixed 1', { traceId: 'tr_2' }), { verdict: 'AMBIGUOUS' }, 'inside the band the free-text verdict no longer decides');

  answer(model, sigmoid(LO) - 0.001, sigmoid(LO) - 0.001, 'VIOLATION: should not decide.');
  t.equal(await rt.noteFor('just under LO', { traceId: 'tr_3' }), null, 'below LO is COMPLIANT');

  answer(model, sigmoid(LO), sigmoid(LO));
  t.match(await rt.noteFor('exactly LO', { traceId: 'tr_4' }), { verdict: 'AMBIGUOUS' });
});

t.test('an unmappable band logs one error and the free-text judge decides', async (t) => {
  const model = await startModel(t);
  const log = capture();
  const rt = await runtime(t, legacyEnv(model, { SVC_GATEWAY_LOCAL_JUDGE_TYPED_HI: '0' }), log.logger);
  t.equal(log.errors().length, 1);
  t.match(log.errors()[0], /cannot be mapped/);
  answer(model, 0.01, 0.01, 'VIOLATION: it prints the deploy key.');
  t.match(await rt.noteFor('the key', { traceId: 'tr' }), { verdict: 'VIOLATION', text: /it prints the deploy key/ });
  t.notOk(model.requests.some((r) => r.body.logprobs === true), 'no typed question was asked');
});

t.test('without band variables the free-text verdict decides, with its own warning', async (t) => {
  const model = await startModel(t);
  const log = capture();
  const rt = await runtime(t, legacyEnv(model, { SVC_GATEWAY_LOCAL_JUDGE_TYPED_LO: undefined, SVC_GATEWAY_LOCAL_JUDGE_TYPED_HI: undefined }), log.logger);
  t.equal(log.warnings().length, 2);
  t.match(log.warnings()[1], /free-text verdict decides/);
  answer(model, 0.99, 0.99, 'AMBIGUOUS: cannot tell.');
  t.match(await rt.noteFor('x', { traceId: 'tr' }), { verdict: 'AMBIGUOUS', text: '[Svc Governance] AMBIGUOUS (local-judge): cannot tell.' });
  answer(model, 0.99, 0.99, 'COMPLIANT: fine.');
  t.equal(await rt.noteFor('x', { traceId: 'tr' }), null);
});

t.test('off unless SVC_GATEWAY_LOCAL_JUDGE; a hosted model server is refused', async (t) => {
  const log = capture();
  t.equal(legacyFromEnv({ MSRV_LOCAL_JUDGE_MODEL: 'x' }, [], log.logger), null);
  t.same(log.lines, []);
  const hosted = await runtime(t, { SVC_GATEWAY_LOCAL_JUDGE: 'true', MSRV_LOCAL_URL: 'https://api.openai.com/v1', MSRV_LOCAL_TYPED_JUDGE_MODEL: 'gpt-4o-mini', SVC_GATEWAY_LOCAL_JUDGE_TYPED_LO: '-1', SVC_GATEWAY_LOCAL_JUDGE_TYPED_HI: '1' });
  t.match(await hosted.noteFor('x', { traceId: 'tr' }), { verdict: 'AMBIGUOUS', text: /host_not_self_hosted/ });
});
