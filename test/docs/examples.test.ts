import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { signUp, startTestControlPlane } from '../helpers/controlplane.js';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;

/** The code block under `<!-- runnable: name -->` in a docs page. */
async function runnableBlock(page: string, name: string): Promise<string> {
  const text = await readFile(join(ROOT, 'docs', page), 'utf8');
  const match = new RegExp(`<!-- runnable: ${name} -->\\n\`\`\`js\\n([\\s\\S]*?)\\n\`\`\``).exec(text);
  if (match === null) throw new Error(`no runnable block '${name}' in docs/${page}`);
  return match[1]!;
}

/** Runs an example as a user would: an .mjs file importing the package by its name (from dist/). */
async function runExample(t: Tap.Test, code: string, env: NodeJS.ProcessEnv) {
  // Inside the package folder, so `svc/...` resolves to this package's own exports.
  const dir = await mkdtemp(join(ROOT, 'test', 'docs', '.run-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'example.mjs');
  await writeFile(file, code);
  return run(process.execPath, [file], { env: { ...process.env, ...env }, timeout: 120_000 });
}

t.test('docs/management.md: the example runs against a real control plane', async (t) => {
  const cp = await startTestControlPlane(t);
  const owner = await signUp(cp);
  const { stdout } = await runExample(t, await runnableBlock('management.md', 'management'), { SVC_CONTROL_PLANE_URL: cp.url, SVC_API_KEY: owner.apiKey });
  t.match(stdout, /acting as Owner \(OWNER\)/);
  t.match(stdout, /--api-key gwt_/);
  t.match(stdout, /resolved: workspace/);
  t.match(stdout, /the old one works until \d{4}-/);
  t.match(stdout, /revoked: NOT_FOUND/);
});
