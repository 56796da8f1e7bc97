import t from 'tap';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capturePreImages, captureFlaggedCall, changeTargets, listEntries, MAX_ENTRIES, MAX_PRE_IMAGE_BYTES, restoreEntry, warnReasons, type RollbackTrigger } from '../../src/machine/rollback.js';

const trigger: RollbackTrigger = { kind: 'hook', tool: 'Write', harness: 'claude-code', sessionId: 's1', reasons: ['tool_flagged: pii.email'] };

function sandbox(t: { teardown(fn: () => void): void }) {
  const root = mkdtempSync(join(tmpdir(), 'svc-rollback-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const work = join(root, 'work');
  mkdirSync(work);
  return { root, work, env: { SVC_HOME: join(root, 'svc') } as NodeJS.ProcessEnv };
}

t.test('the files a call changes: file tools, apply_patch, shell redirections and tee', async (t) => {
  const cwd = '/work/app';
  t.same(changeTargets('Write', { file_path: 'src/a.ts', content: 'x' }, cwd, '/home/u').paths, ['/work/app/src/a.ts']);
  t.same(changeTargets('MultiEdit', { file_path: '/abs/b.ts', edits: [] }, cwd, '/home/u').paths, ['/abs/b.ts']);
  t.same(changeTargets('NotebookEdit', { notebook_path: 'n.ipynb' }, cwd, '/home/u').paths, ['/work/app/n.ipynb']);
  t.same(changeTargets('Read', { file_path: 'a' }, cwd, '/home/u').paths, [], 'a read changes nothing');
  const patch = '*** Begin Patch\n*** Update File: src/x.ts\n@@\n-a\n+b\n*** Add File: new.txt\n+hi\n*** Delete File: old.txt\n*** End Patch';
  t.same(changeTargets('apply_patch', { input: patch }, cwd, '/home/u').paths, ['/work/app/src/x.ts', '/work/app/new.txt', '/work/app/old.txt']);
  const shell = changeTargets('Bash', { command: 'echo hi > out.txt 2>&1; cat a >> "log file.txt" && ls 2>/dev/null | tee -a t1.txt ~/t2.txt; echo x > $OUT' }, cwd, '/home/u');
  t.same(shell.paths, ['/work/app/out.txt', '/work/app/log file.txt', '/work/app/t1.txt', '/home/u/t2.txt']);
  t.match(shell.unresolved, [{ target: '$OUT', reason: /expands/ }]);
  t.match(changeTargets('Bash', { command: 'cd sub && echo x > f.txt' }, cwd, '/home/u'), { paths: [], unresolved: [{ target: 'f.txt', reason: /changes folder/ }] });
  t.same(changeTargets('Bash', { command: 'sort < in.txt' }, cwd, '/home/u').paths, []);
});

t.test('the warn tier is a flagged or would-block event; other events are not', async (t) => {
  t.same(warnReasons([{ type: 'tool_allowed' }, { type: 'snapshot_health' }]), []);
  t.same(warnReasons([{ type: 'tool_flagged', flagged: ['pii.email'], reason: 'pii.email in the arguments' }, { type: 'tool_would_block', rule: 'no-writes', reason: 'r' }]), [
    'tool_flagged: pii.email (pii.email in the arguments)',
    'tool_would_block: no-writes (r)',
  ]);
});

t.test('capture, restore, undo; a file that did not exist is deleted; the restore refuses unsafe paths', async (t) => {
  const { work, env, root } = sandbox(t);
  const file = join(work, 'notes.md');
  writeFileSync(file, 'before\n');
  const fresh = join(work, 'new.md');
  const [entry, absent] = await capturePreImages({ paths: [file, fresh], unresolved: [] }, trigger, env);
  t.match(entry, { state: 'captured', path: file, size: 7 });
  t.match(absent, { state: 'absent', path: fresh });
  writeFileSync(file, 'after\n');
  writeFileSync(fresh, 'created\n');

  const restored = await restoreEntry(entry!.id, env);
  t.equal(restored.action, 'written');
  t.equal(readFileSync(file, 'utf8'), 'before\n');
  t.match(restored.undo, { state: 'captured', trigger: { kind: 'restore', reasons: [`before restoring ${entry!.id}`] } });
  await restoreEntry(restored.undo.id, env);
  t.equal(readFileSync(file, 'utf8'), 'after\n', 'a restore is undone by restoring its capture');

  t.equal((await restoreEntry(absent!.id, env)).action, 'deleted');
  t.notOk(existsSync(fresh), 'a file the call created is deleted');
  t.equal((await restoreEntry(absent!.id, env)).action, 'already absent');

  await t.rejects(restoreEntry('rb_0000000000000000', env), /no rollback entry rb_0000000000000000/);
  await t.rejects(restoreEntry('../../etc/passwd', env), /not a rollback id/);

  // The folder swapped for a link to somewhere else: nothing is written there.
  const elsewhere = join(root, 'elsewhere');
  mkdirSync(elsewhere);
  const [inSub] = await capturePreImages({ paths: [join(work, 'sub', 'x.txt')], unresolved: [] }, trigger, env);
  symlinkSync(elsewhere, join(work, 'sub'));
  writeFileSync(join(elsewhere, 'x.txt'), 'keep');
  await t.rejects(restoreEntry(inSub!.id, env), /now resolves to .*nothing was written/);
  t.equal(readFileSync(join(elsewhere, 'x.txt'), 'utf8'), 'keep');

  // The path itself now a link: refused, the link's target untouched.
  const [linked] = await capturePreImages({ paths: [join(work, 'l.txt')], unresolved: [] }, trigger, env);
  symlinkSync(join(elsewhere, 'x.txt'), join(work, 'l.txt'));
  await t.rejects(restoreEntry(linked!.id, env), /now a symbolic link/);
  t.equal(readFileSync(join(elsewhere, 'x.txt'), 'utf8'), 'keep');

  // A path with a NUL is never captured; a name with bidi controls and a newline is restored exactly.
  const [nul] = await capturePreImages({ paths: [`${work}/a\u0000b`], unresolved: [] }, trigger, env);
  t.match(nul, { state: 'skipped', reason: /NUL/ });
  await t.rejects(restoreEntry(nul!.id, env), /no pre-image/);
  const tricky = join(work, 'r\u202egnp.sh\nx');
  writeFileSync(tricky, 'one');
  const [uni] = await capturePreImages({ paths: [tricky], unresolved: [] }, trigger, env);
  writeFileSync(tricky, 'two');
  await restoreEntry(uni!.id, env);
  t.equal(readFileSync(tricky, 'utf8'), 'one');
  t.same(readdirSync(work).sort(), ['l.txt', 'notes.md', 'r\u202egnp.sh\nx', 'sub'].sort(), 'no stray files are left beside it');
});

t.test('2 MiB per file; 50 entries kept, the oldest evicted with its blob unless another entry names it', async (t) => {
  const { work, env } = sandbox(t);
  const big = join(work, 'big.bin');
  writeFileSync(big, Buffer.alloc(MAX_PRE_IMAGE_BYTES + 1, 1));
  const edge = join(work, 'edge.bin');
  writeFileSync(edge, Buffer.alloc(MAX_PRE_IMAGE_BYTES, 2));
  const [tooBig, atLimit] = await capturePreImages({ paths: [big, edge], unresolved: [] }, trigger, env);
  t.match(tooBig, { state: 'skipped', reason: /over 2 MiB \(2097153 bytes\)/ });
  t.match(atLimit, { state: 'captured', size: MAX_PRE_IMAGE_BYTES });
  await t.rejects(restoreEntry(tooBig!.id, env), /has no pre-image .*over 2 MiB/);

  const shared = join(work, 'shared.txt');
  writeFileSync(shared, 'same content');
  const [first] = await capturePreImages({ paths: [shared], unresolved: [] }, trigger, env);
  const blobs = join(env.SVC_HOME!, 'rollback', 'blobs');
  const firstBlob = join(blobs, (first as { sha256: string }).sha256);
  // The same content again later: one blob for both entries.
  const ids = [first!.id];
  for (let i = 0; i < MAX_ENTRIES - 3; i++) {
    const f = join(work, `f${i}.txt`);
    writeFileSync(f, `content ${i}`);
    ids.push((await capturePreImages({ paths: [f], unresolved: [] }, trigger, env))[0]!.id);
  }
  const [again] = await capturePreImages({ paths: [shared], unresolved: [] }, trigger, env);
  t.equal((await listEntries(env)).length, MAX_ENTRIES);
  // Three more: the two first entries (big, edge) and `first` go.
  for (let i = 0; i < 3; i++) await capturePreImages({ paths: [join(work, `f${i}.txt`)], unresolved: [] }, trigger, env);
  const left = await listEntries(env);
  t.equal(left.length, MAX_ENTRIES);
  t.notOk(left.some((e) => e.id === first!.id), 'the oldest is evicted');
  t.ok(existsSync(firstBlob), 'its blob stays: a newer entry holds the same content');
  t.notOk(existsSync(join(blobs, (atLimit as { sha256: string }).sha256)), 'an evicted blob no entry names is removed');
  await t.rejects(restoreEntry(first!.id, env), new RegExp(`${first!.id} was evicted`));
  writeFileSync(shared, 'changed');
  await restoreEntry(again!.id, env);
  t.equal(readFileSync(shared, 'utf8'), 'same content');
  t.equal(readdirSync(blobs).length, new Set((await listEntries(env)).flatMap((e) => (e.state === 'captured' ? [e.sha256] : []))).size, 'exactly the named blobs are kept');
});

t.test('parallel captures lose no entry; a blob removed by hand is refused', async (t) => {
  const { work, env } = sandbox(t);
  const files = Array.from({ length: 12 }, (_, i) => join(work, `p${i}.txt`));
  files.forEach((f, i) => writeFileSync(f, `p${i}`));
  await Promise.all(files.map((f) => capturePreImages({ paths: [f], unresolved: [] }, trigger, env)));
  const entries = await listEntries(env);
  t.equal(entries.length, 12);
  const one = entries[0] as { id: string; sha256: string };
  rmSync(join(env.SVC_HOME!, 'rollback', 'blobs', one.sha256));
  await t.rejects(restoreEntry(one.id, env), /evicted or removed/);
});

t.test('captureFlaggedCall: only on the warn tier, only when .svc/config.json asks; a malformed config is a note', async (t) => {
  const { work, env } = sandbox(t);
  const file = join(work, 'a.txt');
  writeFileSync(file, 'x');
  const call = { harness: 'claude-code', toolName: 'Write', toolInput: { file_path: 'a.txt', content: 'y' }, cwd: work, sessionId: 's' };
  const flagged = [{ type: 'tool_flagged', flagged: ['pii.email'] }];
  t.equal(await captureFlaggedCall(call, flagged, env), null);
  t.same(await listEntries(env), [], 'off by default');
  mkdirSync(join(work, '.svc'));
  writeFileSync(join(work, '.svc', 'config.json'), JSON.stringify({ captureRollbackPreImages: true }));
  await captureFlaggedCall(call, [{ type: 'tool_allowed' }], env);
  t.same(await listEntries(env), [], 'a clean allow is not captured');
  await captureFlaggedCall(call, flagged, env);
  t.match(await listEntries(env), [{ state: 'captured', path: file, trigger: { tool: 'Write', reasons: ['tool_flagged: pii.email'] } }]);
  writeFileSync(join(work, '.svc', 'config.json'), '{"captureRollbackPreImages": "yes"}');
  t.match(await captureFlaggedCall(call, flagged, env), /config\.json does not read: captureRollbackPreImages/);
});
