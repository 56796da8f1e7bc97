import t from 'tap';
import { join } from 'node:path';
import { compileRecord, hashRecord } from '../../src/decide/record.js';
import { loadRules, parseSopText } from '../../src/decide/sop-loader.js';
import { tempDir, writeSop } from '../helpers/decide.js';

const RECORD = {
  id: 'no-prod-drop',
  on: 'tool_call',
  tools: ['bash'],
  questions: { drops: { type: 'yes_no', ask: 'Does the command drop or truncate a table?' }, prod: { type: 'yes_no', ask: 'Does it target production?' } },
  when: 'drops and prod',
};

t.test('a record reads with its defaults: shadow rollout, escalate ask', async (t) => {
  const r = compileRecord(RECORD, 'x');
  t.ok(r.ok);
  if (!r.ok) return;
  t.equal(r.rule.record.rollout, 'shadow');
  t.equal(r.rule.record.escalate, 'ask');
  t.equal(r.rule.hash, hashRecord(r.rule.record));
  t.match(r.rule.hash, /^[0-9a-f]{64}$/);
});

t.test('the hash covers every field, the reserved context included', async (t) => {
  const a = compileRecord(RECORD, 'x');
  const b = compileRecord({ ...RECORD, context: ['last_user_turn'] }, 'x');
  const c = compileRecord({ ...RECORD, questions: { prod: RECORD.questions.prod, drops: RECORD.questions.drops } }, 'x');
  t.ok(a.ok && b.ok && c.ok);
  if (!a.ok || !b.ok || !c.ok) return;
  t.not(a.rule.hash, b.rule.hash);
  t.equal(a.rule.hash, c.rule.hash, 'key order does not change the hash');
});

t.test('unreadable records: mode, unknown fields, bad when, names outside the questions', async (t) => {
  const cases: Array<[object, RegExp]> = [
    [{ ...RECORD, mode: 'enforce' }, /mode/],
    [{ ...RECORD, severity: 'high' }, /severity/],
    [{ ...RECORD, rollout: 'on' }, /rollout/],
    [{ ...RECORD, when: 'drops and' }, /when: expression ends early/],
    [{ ...RECORD, when: 'drops and staging' }, /'staging' is not one of the rule's questions/],
    [{ ...RECORD, tools: [] }, /tools: a tool_call rule names at least one tool/],
    [{ ...RECORD, questions: {} }, /at least one question/],
    [{ ...RECORD, questions: { drops: { type: 'free_text', ask: 'x' } } }, /questions.drops.type/],
    [{ ...RECORD, context: ['whole_transcript'] }, /context/],
    [{ ...RECORD, escalate: 'page-oncall' }, /escalate/],
  ];
  for (const [value, problem] of cases) {
    const r = compileRecord(value, 'x');
    t.notOk(r.ok);
    if (!r.ok) t.match(r.problems.join('\n'), problem);
  }
});

t.test('SOP text: decide lines read, bad lines reported with their line and salvaged tools', async (t) => {
  const text = [
    '---',
    'title: Database changes',
    'mode: shadow',
    '---',
    'Never drop production tables.',
    `decide: ${JSON.stringify({ ...RECORD, rollout: 'enforce' })}`,
    `decide: ${JSON.stringify({ ...RECORD, id: 'two', mode: 'enforce', tools: ['psql', 'bash'] })}`,
    'decide: {not json',
    `decide: ${JSON.stringify(RECORD)}`,
  ].join('\n');
  const parsed = parseSopText(text, 'db.md');
  t.equal(parsed.rules.length, 1);
  t.equal(parsed.rules[0]!.record.rollout, 'enforce', "the SOP's own mode: shadow does not reach its decide rules");
  t.same(
    parsed.unreadable.map((u) => [u.line, u.tools]),
    [
      [7, ['psql', 'bash']],
      [8, null],
      [9, ['bash']],
    ],
  );
  t.match(parsed.unreadable[2]!.problems[0], /already used/);
  t.notMatch(parsed.prose, /decide:/);
  t.match(parsed.prose, /Never drop production tables/);
});

t.test('loadRules reads .svc/sops/<name>/*.md and config records', async (t) => {
  const root = await tempDir(t);
  await writeSop(root, 'db', 'rules.md', `# DB\ndecide: ${JSON.stringify(RECORD)}\n`);
  await writeSop(root, 'other', 'a.md', `decide: ${JSON.stringify({ ...RECORD, id: 'x', on: 'response', tools: [] })}\n`);
  const loaded = await loadRules(root, [{ ...RECORD, id: 'from-config' }, { id: 'broken' }]);
  t.same(loaded.rules.map((r) => r.record.id), ['no-prod-drop', 'x', 'from-config']);
  t.equal(loaded.rules[0]!.source, `${join('.svc', 'sops', 'db', 'rules.md')}:2`);
  t.equal(loaded.unreadable.length, 1);
  t.equal(loaded.unreadable[0]!.file, 'config decide_rules[1]');
  t.equal(loaded.sopTexts.length, 2);
  t.same((await loadRules(join(root, 'missing'))).rules, [], 'no SOP folder is no rules');
});
