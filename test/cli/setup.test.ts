import t from 'tap';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMockProvider } from '../../bench/mock/provider.js';
import { api, signUp, startTestControlPlane } from '../helpers/controlplane.js';
import { freePort } from '../helpers/ports.js';
import { svcWithStdin } from '../helpers/wasm.js';

const setup = (args: string[], stdin: string, env: NodeJS.ProcessEnv, cwd: string) => svcWithStdin(['setup', ...args], stdin, env, cwd);

t.setTimeout(300_000);

const PROVIDER_KEY = 'sk-test-provider-key-0123456789';
const mock = await startMockProvider({ requireKey: PROVIDER_KEY });
t.teardown(() => mock.close());
/** A self-hosted model server that needs no key, standing in for the judge. */
const judge = await startMockProvider();
t.teardown(() => judge.close());


function machine(t: { teardown(fn: () => void): void }) {
  const root = mkdtempSync(join(tmpdir(), 'svc-setup-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const home = join(root, 'home');
  mkdirSync(join(home, '.claude'), { recursive: true });
  return { root, home, env: { HOME: home, SVC_HOME: join(home, '.svc'), SVC_CONTROL_PLANE_URL: '', SVC_API_KEY: '' } };
}

t.test('local mode: the key verified against the provider, .svc.env written 0600', async (t) => {
  const { root, env } = machine(t);
  const run = await setup(['--mode', 'local', '--provider', 'openai', '--provider-key-stdin', '--provider-base-url', `${mock.url}/v1`], `${PROVIDER_KEY}\n`, env, root);
  t.equal(run.code, 0, run.stderr);
  t.match(run.stdout, /harnesses found: claude-code/);
  t.match(run.stdout, /openai: verified/);
  const file = join(root, '.svc.env');
  t.equal(statSync(file).mode & 0o777, 0o600);
  t.match(readFileSync(file, 'utf8'), new RegExp(`^OPENAI_API_KEY=${PROVIDER_KEY}$[\\s\\S]*^ANTHROPIC_BASE_URL=http://127\\.0\\.0\\.1:4000$`, 'm'));
});

t.test('a rejected key needs confirmation (401/403): refused without --yes, saved with it; an unreachable provider does not block', async (t) => {
  const { root, env } = machine(t);
  const args = ['--mode', 'local', '--provider', 'anthropic', '--provider-key-stdin', '--provider-base-url', `${mock.url}/v1`];
  const refused = await setup(args, 'sk-wrong\n', env, root);
  t.equal(refused.code, 1);
  t.match(refused.stdout, /anthropic: the provider rejected the key \(401\)/);
  t.match(refused.stderr, /nothing was saved \(--yes saves it anyway\)/);
  t.equal((await setup([...args, '--yes'], 'sk-wrong\n', env, root)).code, 0);
  const down = await setup(['--mode', 'local', '--provider', 'openai', '--provider-key-stdin', '--provider-base-url', `http://127.0.0.1:${await freePort()}/v1`], 'sk-any\n', env, root);
  t.equal(down.code, 0, down.stderr);
  t.match(down.stdout, /openai: not verified \(the provider could not be reached.*\), saved anyway/);
  t.match((await setup(['--provider-key-stdin'], 'x\n', env, root)).stderr, /--mode is needed: give it as a flag/);
});

t.test('connected mode: svc init, and the provider key saved in the workspace; a judge model configured', async (t) => {
  const cp = await startTestControlPlane(t);
  const owner = await signUp(cp);
  const { root, home, env } = machine(t);
  const run = await setup(
    ['--mode', 'connected', '--api-key', owner.apiKey, '--control-plane-url', cp.url, '--provider', 'openai', '--provider-key-stdin', '--provider-base-url', `${mock.url}/v1`, '--judge-url', `${judge.url}/v1`, '--judge-model', 'judge-7b', '--project', root],
    `${PROVIDER_KEY}\n`,
    env,
    root,
  );
  t.equal(run.code, 0, run.stderr);
  t.match(run.stdout, /joined workspace/);
  t.match(run.stdout, /claude-code: gate installed/);
  t.match(run.stdout, /openai: the key is saved in the workspace/);
  t.match(run.stdout, /judge: .*engine\.json \(judge-7b\); the server answers/);
  const creds = (await api(cp, 'GET', '/workspace/provider-credentials', { token: owner.accessToken })).body.credentials;
  t.match(creds.find((c: { id: string }) => c.id === 'openai'), { provisioned: true, last_four: PROVIDER_KEY.slice(-4) });
  t.match(JSON.parse(readFileSync(join(home, '.svc', 'decide', 'engine.json'), 'utf8')), { url: `${judge.url}/v1`, model: 'judge-7b' });
});
