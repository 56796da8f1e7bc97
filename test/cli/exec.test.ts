import t from 'tap';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { execFile } from 'node:child_process';
import { api, signUp, startTestControlPlane } from '../helpers/controlplane.js';
import { CLI } from '../helpers/proxy.js';

t.setTimeout(300_000);

const cp = await startTestControlPlane(t);
const owner = await signUp(cp);

function machine(t: { teardown(fn: () => void): void }) {
  const root = mkdtempSync(join(tmpdir(), 'svc-exec-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const work = join(root, 'work');
  mkdirSync(work);
  return { root, work, env: { HOME: root, SVC_HOME: join(root, 'svc'), SVC_CONTROL_PLANE_URL: cp.url, SVC_API_KEY: owner.apiKey } };
}

/** `svc exec …` in `cwd`; its exit code and output. */
async function exec(args: string[], cwd: string, env: NodeJS.ProcessEnv) {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, 'exec', ...args], { cwd, env: { ...process.env, ...env } });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const PRINT_ENV = `for (const k of ['OPENAI_API_BASE','OPENAI_BASE_URL','OPENAI_API_BASE_URL','OPENAI_HOST','ANTHROPIC_BASE_URL','OPENAI_API_KEY','ANTHROPIC_API_KEY','SVC_API_KEY']) console.log(k + '=' + process.env[k]); process.exit(7)`;

t.test("the proxy's variables are injected and the child's exit code is svc's", async (t) => {
  const { work, env } = machine(t);
  const run = await exec(['--', process.execPath, '-e', PRINT_ENV], work, env);
  t.equal(run.code, 7);
  const v1 = 'http://127.0.0.1:4000/v1';
  t.same(run.stdout.trim().split('\n'), [
    `OPENAI_API_BASE=${v1}`,
    `OPENAI_BASE_URL=${v1}`,
    `OPENAI_API_BASE_URL=${v1}`,
    'OPENAI_HOST=http://127.0.0.1:4000',
    'ANTHROPIC_BASE_URL=http://127.0.0.1:4000',
    `OPENAI_API_KEY=${owner.apiKey}`,
    `ANTHROPIC_API_KEY=${owner.apiKey}`,
    `SVC_API_KEY=${owner.apiKey}`,
  ]);
  const loggedOut = await exec(['--', 'true'], work, { ...env, SVC_API_KEY: '' });
  t.equal(loggedOut.code, 1);
  t.match(loggedOut.stderr, /not logged in/);
  t.equal((await exec(['--', 'no-such-program-anywhere'], work, env)).code, 127);
  t.match((await exec(['--sandbox-allow', '10.0.0.0/8', '--', 'true'], work, env)).stderr, /not enforced/);
});

t.test('--sandbox (bubblewrap) confines writes to the work dir; sandboxRequirement require refuses without it, warn warns', async (t) => {
  const { root, work, env } = machine(t);
  const outside = join(root, 'outside.txt');
  const script = `touch inside.txt; touch ${outside}; echo done`;
  const confined = await exec(['--sandbox', 'bwrap', '--', 'sh', '-c', script], work, env);
  t.equal(confined.code, 0, confined.stderr);
  t.ok(existsSync(join(work, 'inside.txt')), 'a write in the work dir lands');
  t.notOk(existsSync(outside), 'a write outside it does not');

  await api(cp, 'PUT', '/workspace/settings', { token: owner.accessToken, body: { sandboxRequirement: 'require' } });
  const refused = await exec(['--', 'sh', '-c', `touch ${outside}`], work, env);
  t.equal(refused.code, 1);
  t.match(refused.stderr, /requires a sandbox \(sandboxRequirement: require\)/);
  t.notOk(existsSync(outside), 'never ran');
  t.equal((await exec(['--sandbox', '--', 'true'], work, env)).code, 0, 'with the sandbox it runs');

  await api(cp, 'PUT', '/workspace/settings', { token: owner.accessToken, body: { sandboxRequirement: 'warn' } });
  const warned = await exec(['--', 'true'], work, env);
  t.equal(warned.code, 0);
  t.match(warned.stderr, /sandboxRequirement: warn/);
  await api(cp, 'PUT', '/workspace/settings', { token: owner.accessToken, body: { sandboxRequirement: 'off' } });
});
