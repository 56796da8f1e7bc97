import t from 'tap';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileSnapshot } from '../../src/gate/snapshot.js';
import { api, signUp, memberWithRole, startTestControlPlane } from '../helpers/controlplane.js';
import { svcWithStdin } from '../helpers/wasm.js';

t.setTimeout(600_000);

/** What Claude Code does before a tool call: `svc gate hook claude-code` with the PreToolUse input on stdin. */
const preToolUse = (project: string, tool: string, input: object, env: NodeJS.ProcessEnv) =>
  svcWithStdin(['gate', 'hook', 'claude-code'], JSON.stringify({ session_id: 'sess-rb', hook_event_name: 'PreToolUse', tool_name: tool, tool_input: input, cwd: project }), env, project);
const svcIn = (cwd: string, args: string[], env: NodeJS.ProcessEnv) => svcWithStdin(args, '', env, cwd);

function events(svcHome: string): Array<Record<string, unknown>> {
  const file = join(svcHome, 'events', 'hook-events.jsonl');
  return existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>) : [];
}

interface Entry {
  id: string;
  state: string;
  path: string;
  reason?: string;
  trigger: { kind: string; tool: string | null; reasons: string[] };
}
const list = async (project: string, env: NodeJS.ProcessEnv): Promise<Entry[]> => JSON.parse((await svcIn(project, ['rollback', '--json'], env)).stdout).entries;

t.test('rollback end to end: the hook captures a flagged Write, svc rollback lists it and restores it, tool_reverted is logged and reported', async (t) => {
  const cp = await startTestControlPlane(t);
  const owner = await signUp(cp);
  const dev = await memberWithRole(cp, owner, 'DEVELOPER');
  // The warn tier: email addresses in a tool call's arguments are flagged (redact), card numbers refused (block).
  t.equal((await api(cp, 'PUT', '/workspace/settings', { token: owner.accessToken, body: { piiDetectors: { 'pii.email': 'redact', 'pii.card': 'block' } } })).status, 200);
  const root = mkdtempSync(join(tmpdir(), 'svc-rollback-cli-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const project = join(root, 'project');
  mkdirSync(join(project, '.svc'), { recursive: true });
  const svcHome = join(root, 'svc');
  const env = { HOME: root, SVC_HOME: svcHome, SVC_CONTROL_PLANE_URL: cp.url, SVC_API_KEY: dev.apiKey };
  const notes = join(project, 'notes.md');
  writeFileSync(notes, '# Notes\noriginal\n');

  // Off by default: a flagged Write is let through and nothing is captured.
  const write = (content: string, file = 'notes.md') => preToolUse(project, 'Write', { file_path: file, content }, env);
  t.same(await write('ask alice@example.com'), { code: 0, stdout: '', stderr: '' });
  t.same(await list(project, env), []);

  writeFileSync(join(project, '.svc', 'config.json'), JSON.stringify({ captureRollbackPreImages: true }));
  t.same(await write('all clean'), { code: 0, stdout: '', stderr: '' }, 'a clean allow');
  const blocked = await write('card 4539 1488 0343 6467');
  t.equal(blocked.code, 2, 'a refused call');
  t.same(await list(project, env), [], 'neither a clean allow nor a refused call is captured');

  const flagged = await write('# Notes\nmail bob@example.com\n');
  t.same(flagged, { code: 0, stdout: '', stderr: '' }, 'the flagged Write is allowed');
  writeFileSync(notes, '# Notes\nmail bob@example.com\n'); // Claude Code runs the tool.
  const [entry] = await list(project, env);
  t.match(entry, { state: 'captured', path: notes, trigger: { kind: 'hook', tool: 'Write', reasons: [/^tool_flagged: pii\.email/] } });
  t.match((await svcIn(project, ['rollback'], env)).stdout, new RegExp(`^${entry!.id}  \\S+  ${notes}  17 bytes  Write \\(tool_flagged: pii\\.email`));

  const restored = await svcIn(project, ['rollback', '--id', entry!.id], env);
  t.equal(restored.code, 0, restored.stderr);
  t.match(restored.stdout, new RegExp(`${notes} restored from ${entry!.id}\\nundo with: svc rollback --id (rb_[0-9a-f]{16})\\ntool_reverted logged and reported`));
  t.equal(readFileSync(notes, 'utf8'), '# Notes\noriginal\n');
  const logged = events(svcHome).filter((e) => e.type === 'tool_reverted');
  t.match(logged, [{ type: 'tool_reverted', gateSource: 'cli', harness: 'claude-code', sessionId: 'sess-rb', toolName: 'Write', rollbackId: entry!.id, file: 'notes.md' }]);
  const reported = await cp.db.query<{ type: string; tool: string; event_id: string }>("SELECT type, tool, event_id FROM hook_events WHERE type IN ('tool_reverted', 'tool_flagged') ORDER BY received_at, id");
  t.match(reported, [{ type: 'tool_flagged', tool: 'Write' }, { type: 'tool_flagged', tool: 'Write' }, { type: 'tool_reverted', tool: 'Write', event_id: logged[0]!.eventId }]);

  // The restore is itself undone by restoring the capture it made first.
  const undoId = /undo with: svc rollback --id (rb_[0-9a-f]{16})/.exec(restored.stdout)![1]!;
  t.equal((await svcIn(project, ['rollback', '--id', undoId, '--json'], env)).code, 0);
  t.equal(readFileSync(notes, 'utf8'), '# Notes\nmail bob@example.com\n');

  // A file the flagged call creates: restoring deletes it.
  t.equal((await write('new: carol@example.com', 'drafts/new.md')).code, 0);
  mkdirSync(join(project, 'drafts'));
  writeFileSync(join(project, 'drafts', 'new.md'), 'new: carol@example.com');
  const [created] = await list(project, env);
  t.match(created, { state: 'absent', path: join(project, 'drafts', 'new.md') });
  t.match((await svcIn(project, ['rollback', '--id', created!.id], env)).stdout, /drafts\/new\.md deleted: it did not exist before the call/);
  t.notOk(existsSync(join(project, 'drafts', 'new.md')));

  // Errors: an unknown id, not an id, not logged in (logged, not reported).
  const unknown = await svcIn(project, ['rollback', '--id', 'rb_0123456789abcdef'], env);
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, /^svc rollback: no rollback entry rb_0123456789abcdef/);
  t.match((await svcIn(project, ['rollback', '--id', '../notes.md'], env)).stderr, /is not a rollback id/);
  const offline = await svcIn(project, ['rollback', '--id', entry!.id], { ...env, SVC_CONTROL_PLANE_URL: '', SVC_API_KEY: '' });
  t.equal(offline.code, 0, offline.stderr);
  t.match(offline.stdout, /tool_reverted logged \(not logged in: not reported\)/);
  t.equal(events(svcHome).filter((e) => e.type === 'tool_reverted').length, 4);

  // The 2 MiB bound: a larger file is recorded as skipped, and a restore of it refused.
  const big = join(project, 'big.txt');
  writeFileSync(big, Buffer.alloc(2 * 1024 * 1024 + 1, 0x61));
  t.equal((await write('dave@example.com', 'big.txt')).code, 0);
  const [skipped] = await list(project, env);
  t.match(skipped, { state: 'skipped', path: big, reason: 'over 2 MiB (2097153 bytes): not captured' });
  const refused = await svcIn(project, ['rollback', '--id', skipped!.id], env);
  t.equal(refused.code, 1);
  t.match(refused.stderr, /has no pre-image of .*big\.txt: over 2 MiB/);

  // 50 entries kept: a flagged shell command writing 20 files, three times; the oldest go, and say so.
  const oldest = (await list(project, env)).at(-1)!;
  for (let round = 0; round < 3; round++) {
    const files = Array.from({ length: 20 }, (_, i) => `out/r${round}-${i}.txt`);
    const bash = await preToolUse(project, 'Bash', { command: `echo eve@example.com | tee ${files.join(' ')}` }, env);
    t.equal(bash.code, 0, bash.stderr);
  }
  const kept = await list(project, env);
  t.equal(kept.length, 50);
  t.match(kept[0], { state: 'absent', path: join(project, 'out', 'r2-19.txt'), trigger: { tool: 'Bash' } });
  const evicted = await svcIn(project, ['rollback', '--id', oldest.id], env);
  t.equal(evicted.code, 1);
  t.match(evicted.stderr, new RegExp(`${oldest.id} was evicted: only the newest 50 pre-images are kept`));
});

t.test('offline warn tier: a log rule in the policy snapshot flags a Write, the hook captures it without a control plane', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'svc-rollback-offline-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const project = join(root, 'project');
  mkdirSync(join(project, '.svc'), { recursive: true });
  const svcHome = join(root, 'svc');
  mkdirSync(join(svcHome, 'hooks'), { recursive: true });
  writeFileSync(
    join(svcHome, 'hooks', 'policy-snapshot.rules'),
    compileSnapshot({ workspaceId: 'ws_offline', settings: {}, mcpServers: {}, memberGroups: null, rules: [{ verb: 'log', id: 'sop:config-writes', tools: ['Write'], reason: 'config files change only by review' }] }),
  );
  // Captured with the home's config.json: the project has none.
  writeFileSync(join(svcHome, 'config.json'), JSON.stringify({ captureRollbackPreImages: true }));
  const env = { HOME: root, SVC_HOME: svcHome, SVC_CONTROL_PLANE_URL: '', SVC_API_KEY: '' };
  const file = join(project, 'app.json');
  writeFileSync(file, '{"v":1}');
  t.same(await preToolUse(project, 'Write', { file_path: file, content: '{"v":2}' }, env), { code: 0, stdout: '', stderr: '' });
  writeFileSync(file, '{"v":2}');
  t.same(await preToolUse(project, 'Read', { file_path: file }, env), { code: 0, stdout: '', stderr: '' });
  const entries = await list(project, env);
  t.match(entries, [{ state: 'captured', path: file, trigger: { reasons: ['tool_would_block: sop:config-writes (config files change only by review)'] } }]);
  t.equal((await svcIn(project, ['rollback', '--id', entries[0]!.id], env)).code, 0);
  t.equal(readFileSync(file, 'utf8'), '{"v":1}');

  // A config that does not read: the call is still let through, with a note and no capture.
  writeFileSync(join(project, '.svc', 'config.json'), '{"captureRollbackPreImages": 1}');
  const noted = await preToolUse(project, 'Write', { file_path: file, content: '{"v":3}' }, env);
  t.equal(noted.code, 0);
  t.match(noted.stderr, /no rollback pre-image was captured: .*config\.json does not read/);
  t.equal((await list(project, env)).length, 2, 'only the capture made by the restore');
});
