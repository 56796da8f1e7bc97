import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Teardown } from './controlplane.js';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;

/** The ```js block under `<!-- runnable: name -->` in docs/<page>. */
export async function runnableBlock(page: string, name: string): Promise<string> {
  const text = await readFile(join(ROOT, 'docs', page), 'utf8');
  const match = new RegExp(`<!-- runnable: ${name} -->\\n\`\`\`js\\n([\\s\\S]*?)\\n\`\`\``).exec(text);
  if (match === null) throw new Error(`no runnable block '${name}' in docs/${page}`);
  return match[1]!;
}

/**
 * Runs an example as a user would: an .mjs file importing the package by its name, so `svc/...`
 * resolves to this package's own exports (from dist/). Its folder is inside the package for that.
 */
export async function runExample(t: Teardown, code: string, env: NodeJS.ProcessEnv): Promise<{ stdout: string; stderr: string }> {
  const dir = await mkdtemp(join(ROOT, 'test', 'docs', '.run-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'example.mjs');
  await writeFile(file, code);
  return run(process.execPath, [file], { env: { ...process.env, ...env }, timeout: 120_000 });
}
