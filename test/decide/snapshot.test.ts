import t from 'tap';
import { blockFor, decideSnapshotLines, readSnapshot } from '../../src/decide/snapshot.js';
import { parseSopText } from '../../src/decide/sop-loader.js';
import { rule } from '../helpers/decide.js';

const DROP = rule({ id: 'no-prod-drop', on: 'tool_call', tools: ['bash', 'psql'], rollout: 'enforce', questions: { d: { type: 'yes_no', ask: 'Drops a table?' } }, when: 'd' });
const SHADOW = rule({ id: 'quiet', on: 'tool_call', tools: ['deploy'], questions: { d: { type: 'yes_no', ask: 'Deploys?' } }, when: 'd' });
const BASE = ['block {"id":"sop-1","tools":["rm"],"reason":"no rm"}', 'hold action:deploy'].join('\n');

/** How a 2.x gate reads a snapshot: unknown @ lines skipped, every block line enforced. */
function legacyGateBlocks(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('block '))
    .map((l) => (JSON.parse(l.slice(6)) as { id: string }).id);
}

t.test('no decide line: the snapshot is unchanged', async (t) => {
  t.same(decideSnapshotLines([], [], { silentLogging: false }), []);
});

t.test('an enforcing rule gets @format, @decide and a fallback; a shadow rule no fallback', async (t) => {
  const lines = decideSnapshotLines(
    [
      { rule: DROP, stamp: 'enforce' },
      { rule: SHADOW, stamp: 'shadow' },
    ],
    [],
    { silentLogging: false },
  );
  t.equal(lines[0], '@format 3');
  t.equal(lines.filter((l) => l.startsWith('@decide ')).length, 2);
  const fallbacks = lines.filter((l) => l.startsWith('block '));
  t.equal(fallbacks.length, 1);
  t.match(JSON.parse(fallbacks[0]!.slice(6)), { id: 'decide-fallback:no-prod-drop', tools: ['bash', 'psql'], reason: /upgrade it to 3\.0/ });

  const text = `${BASE}\n${lines.join('\n')}\n`;
  t.same(legacyGateBlocks(text), ['sop-1', 'decide-fallback:no-prod-drop'], 'a 2.x gate refuses the rule’s tools');
  const read = readSnapshot(text);
  t.equal(read.format, 3);
  t.same(read.warnings, []);
  t.same(read.decide.map((d) => [d.rule.record.id, d.stamp, d.rule.hash === (d.rule.record.id === 'no-prod-drop' ? DROP.hash : SHADOW.hash)]), [
    ['no-prod-drop', 'enforce', true],
    ['quiet', 'shadow', true],
  ]);
  t.same(read.blocks.map((b) => b.id), ['sop-1'], 'a 3.0 gate skips the fallback of an intact record');
  t.same(read.other, ['hold action:deploy']);
  t.equal(blockFor(read, 'bash'), undefined);
});

t.test('a damaged record leaves its fallback in force', async (t) => {
  const lines = decideSnapshotLines([{ rule: DROP, stamp: 'enforce' }], [], { silentLogging: false });
  const tampered = lines.map((l) => (l.startsWith('@decide ') ? l.replace('Drops a table?', 'Drops a chair?') : l));
  const read = readSnapshot(tampered.join('\n'));
  t.same(read.decide, []);
  t.same(read.damaged, [2]);
  t.match(blockFor(read, 'psql'), { id: 'decide-fallback:no-prod-drop' });
  const truncated = readSnapshot(lines.map((l) => (l.startsWith('@decide ') ? l.slice(0, 80) : l)).join('\n'));
  t.ok(blockFor(truncated, 'bash'));
});

t.test('an unreadable decide line refuses its tools, or every tool, whatever its rollout; silent logging logs', async (t) => {
  const sop = parseSopText(
    [
      `decide: ${JSON.stringify({ id: 'a', on: 'tool_call', tools: ['git'], rollout: 'shadow', mode: 'enforce', questions: { q: { type: 'yes_no', ask: '?' } }, when: 'q' })}`,
      'decide: {"id": "b", "tools": ',
    ].join('\n'),
    'sops/x.md',
  );
  const lines = decideSnapshotLines([], sop.unreadable, { silentLogging: false });
  const read = readSnapshot(lines.join('\n'));
  t.match(blockFor(read, 'git'), { id: 'decide-fallback:unreadable:sops/x.md:1', reason: /does not read.*upgrade it to 3\.0/ });
  t.match(blockFor(read, 'anything'), { id: 'decide-fallback:unreadable:sops/x.md:2', tools: ['*'] });
  const silent = readSnapshot(decideSnapshotLines([], sop.unreadable, { silentLogging: true }).join('\n'));
  t.same(silent.blocks, []);
  t.equal(silent.logs.length, 2);
});

t.test('a newer format is reported and read as far as it goes', async (t) => {
  const lines = decideSnapshotLines([{ rule: DROP, stamp: 'enforce' }], [], { silentLogging: false }).map((l) => (l === '@format 3' ? '@format 4' : l));
  const read = readSnapshot([...lines, '@quorum {"future":true}', 'block {"id":"x","tools":["curl"],"reason":"r"}'].join('\n'));
  t.same(read.warnings, ['snapshot_format_newer']);
  t.equal(read.format, 4);
  t.equal(read.decide.length, 1);
  t.match(blockFor(read, 'curl'), { id: 'x' });
});

t.test('an enforcing on: response rule does not make 2.x gates refuse every tool', async (t) => {
  const resp = rule({ id: 'resp', on: 'response', rollout: 'enforce', questions: { q: { type: 'yes_no', ask: 'Leaks?' } }, when: 'q' });
  const lines = decideSnapshotLines([{ rule: resp, stamp: 'enforce' }], [], { silentLogging: false });
  t.match(JSON.parse(lines.find((l) => l.startsWith('block '))!.slice(6)), { id: 'decide-fallback:resp', tools: [] });
  const damaged = readSnapshot(lines.filter((l) => !l.startsWith('@decide')).join('\n'));
  t.equal(blockFor(damaged, 'bash'), undefined);
});
