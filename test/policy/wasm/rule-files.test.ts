import t from 'tap';
import { mkdtemp, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readRuleFiles, sha256, type RuleFile } from '../../../src/policy/wasm/rule-files.js';

async function folder(t: Tap.Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-rule-files-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const FIRST = Buffer.from('\0asm-first-version');
const SECOND = Buffer.from('\0asm-other-version');

/** The last scan's files by path, each as if read long after it last changed. */
function settled(files: readonly RuleFile[]): Map<string, RuleFile> {
  return new Map(files.map((f) => [f.path, { ...f, readAtMs: f.readAtMs + 60_000 }]));
}

t.test('a file unchanged since it settled and was read is taken as it was', async (t) => {
  const dir = await folder(t);
  await writeFile(join(dir, '100_a.wasm'), FIRST);
  const previous = settled(await readRuleFiles(dir));
  const [again] = await readRuleFiles(dir, previous);
  t.equal(again, previous.get(join(dir, '100_a.wasm')), 'the same record, not read again');
});

t.test('a file replaced by another of the same size and times is read again', async (t) => {
  const dir = await folder(t);
  const path = join(dir, '100_a.wasm');
  await writeFile(path, FIRST);
  const previous = settled(await readRuleFiles(dir));
  const before = await stat(path);
  const staged = join(dir, 'staged');
  await writeFile(staged, SECOND);
  await utimes(staged, before.atime, before.mtime);
  await rename(staged, path);
  const [again] = await readRuleFiles(dir, previous);
  t.equal(again!.sha256, sha256(SECOND));
  t.same(Buffer.from(again!.bytes), SECOND);
});

t.test('a file read within a tick of the file clock of its change is read again, its stamp untrusted', async (t) => {
  const dir = await folder(t);
  const path = join(dir, '100_a.wasm');
  await writeFile(path, FIRST);
  const [first] = await readRuleFiles(dir);
  await writeFile(path, SECOND);
  const { ctimeMs } = await stat(path);
  const [now] = await readRuleFiles(dir);
  // The first version's record under the stamp the file has now, read 10 ms after that change:
  // what a rewrite at the same size within one tick of the file clock looks like.
  const racy = { ...first!, stamp: now!.stamp, readAtMs: ctimeMs + 10 };
  const [again] = await readRuleFiles(dir, new Map([[path, racy]]));
  t.equal(again!.sha256, sha256(SECOND));
  const trusted = { ...racy, readAtMs: ctimeMs + 5000 };
  const [kept] = await readRuleFiles(dir, new Map([[path, trusted]]));
  t.equal(kept, trusted, 'the same stamp read long after the change is trusted');
});

t.test('files are listed in priority order, and others are left out', async (t) => {
  const dir = await folder(t);
  await writeFile(join(dir, '200_b.wasm'), FIRST);
  await writeFile(join(dir, '100_a.wasm'), SECOND);
  await writeFile(join(dir, 'notes.txt'), 'x');
  const files = await readRuleFiles(dir);
  t.same(
    files.map((f) => [f.name, f.priority, f.size]),
    [
      ['a', 100, SECOND.length],
      ['b', 200, FIRST.length],
    ],
  );
  t.same(await readRuleFiles(join(dir, 'missing')), [], 'a folder that does not exist holds no rules');
});
