import t from 'tap';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Gate, SvcGateRefusal } from '../../src/gate/index.js';
import { compileSnapshot, readGateSnapshot } from '../../src/gate/snapshot.js';
import { rule } from '../helpers/decide.js';

const DROP = rule({ id: 'no-prod-drop', on: 'tool_call', tools: ['bash'], rollout: 'enforce', questions: { d: { type: 'yes_no', ask: 'Drops a table?' } }, when: 'd' });
const input = (decideStamp: 'enforce' | 'shadow') =>
  compileSnapshot({ workspaceId: 'ws_1', settings: {}, mcpServers: {}, rules: [], memberGroups: null, decide: { rules: [{ rule: DROP, stamp: decideStamp }], unreadable: [] } });

/** How a 2.x gate reads a snapshot: unknown @ lines skipped, every block line on its tools enforced. */
const legacyBlocks = (text: string, tool: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith('block '))
    .map((l) => JSON.parse(l.slice(6)) as { id: string; tools: string[]; phrases?: string[] })
    .filter((b) => b.tools.includes(tool) && b.phrases === undefined)
    .map((b) => b.id);

/** The snapshot with a changed body and its digest recomputed (a well-formed snapshot whose record is damaged). */
function redigest(text: string, change: (body: string) => string): string {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => l.startsWith('@digest '));
  const body = change(lines.slice(at + 1).join('\n').replace(/\n$/, ''));
  return [...lines.slice(0, at), `@digest ${createHash('sha256').update(body).digest('hex')}`, body, ''].join('\n');
}

async function codeFor(text: string): Promise<string | null> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-snap-'));
  try {
    writeFileSync(join(dir, 's.rules'), text);
    await new Gate({ repoRoot: dir, snapshotPath: join(dir, 's.rules'), workspaceId: 'ws_1', env: {} }).guard('bash', { command: 'psql -c "select 1"' });
    return null;
  } catch (err) {
    if (err instanceof SvcGateRefusal) return `${err.code} ${err.rule}`;
    throw err;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

t.test('a 3.0 decide rule stamped enforce: a 2.x reader enforces its fallback; this gate skips it only while the record is intact', async (t) => {
  const text = input('enforce');
  t.match(text, /^@format 3$/m);
  t.same(legacyBlocks(text, 'bash'), ['decide-fallback:no-prod-drop'], 'a 2.x gate refuses the rule’s tools');
  t.equal(await codeFor(text), null, 'the record is intact: the fallback is skipped');
  const damaged = redigest(text, (body) => body.replace('Drops a table?', 'Drops a chair?'));
  t.equal(readGateSnapshot(damaged, 'ws_1').trusted, true, 'the snapshot itself still checks out');
  t.equal(await codeFor(damaged), 'SNAPSHOT decide-fallback:no-prod-drop', 'a damaged record leaves the fallback in force');
  t.notMatch(input('shadow'), /decide-fallback/, 'a shadow rule has no fallback');
});

t.test('a workspace with no decide rule has no @format line; trust needs the digest and the workspace', async (t) => {
  const text = compileSnapshot({ workspaceId: 'ws_1', settings: {}, mcpServers: {}, rules: [], memberGroups: null });
  t.notMatch(text, /@format/);
  t.match(readGateSnapshot(text, 'ws_1'), { trusted: true, workspaceId: 'ws_1' });
  t.match(readGateSnapshot(text, ''), { trusted: true }, 'a gate that names no workspace does not compare it');
  t.match(readGateSnapshot(text, 'ws_2'), { trusted: false, problem: /compiled for workspace ws_1, not ws_2/ });
  t.match(readGateSnapshot(text.replace('force-push', 'force-pull'), 'ws_1'), { trusted: false, problem: /digest does not match/ });
  t.match(readGateSnapshot('block {"id":"x","tools":["*"],"reason":"r"}', 'ws_1'), { trusted: false, problem: /no digest/ });
});
