import t from 'tap';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, signUp, startTestControlPlane } from '../helpers/controlplane.js';
import { svc, svcWithStdin } from '../helpers/wasm.js';

t.setTimeout(300_000);

const cp = await startTestControlPlane(t);
const owner = await signUp(cp);

function machine(t: { teardown(fn: () => void): void }) {
  const root = mkdtempSync(join(tmpdir(), 'svc-login-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'home'));
  return { HOME: join(root, 'home'), SVC_HOME: join(root, 'svc'), SVC_CONTROL_PLANE_URL: '', SVC_API_KEY: '' };
}


t.test('login with a key: stored 0600, whoami and status read it, logout forgets it', async (t) => {
  const env = machine(t);
  t.match((await svc(['whoami'], env)).stderr, /not logged in: run svc login/);
  const refused = await svc(['login', '--api-key', 'vk_not_a_real_key_x', '--control-plane-url', cp.url], env);
  t.equal(refused.code, 1);
  t.match(refused.stderr, /refused the credentials \(401\)/);
  t.notOk(existsSync(join(env.SVC_HOME, 'credentials.json')), 'nothing stored on a refusal');

  const login = await svc(['login', '--api-key', owner.apiKey, '--control-plane-url', cp.url], env);
  t.equal(login.code, 0, login.stderr);
  t.match(login.stdout, new RegExp(`logged in as ${owner.email} \\(OWNER\\) to workspace .* \\(${owner.workspaceId}\\)`));
  const file = join(env.SVC_HOME, 'credentials.json');
  t.equal(statSync(file).mode & 0o777, 0o600);
  t.match(JSON.parse(readFileSync(file, 'utf8')), { apiKey: owner.apiKey, controlPlaneUrl: cp.url, workspaceId: owner.workspaceId, memberId: owner.memberId, role: 'OWNER' });

  t.match((await svc(['whoami'], env)).stdout, new RegExp(`^${owner.email} \\(OWNER\\) in workspace`));
  t.match(JSON.parse((await svc(['whoami', '--json'], env)).stdout), { role: 'OWNER', workspace: { id: owner.workspaceId }, controlPlaneUrl: cp.url });
  mkdirSync(join(env.HOME, '.claude'));
  const status = JSON.parse((await svc(['status', '--json'], env)).stdout);
  t.match(status, { auth: { state: 'ok' }, harnesses: [{ harness: 'claude-code', gateInstalled: false }], snapshot: { trusted: false, problem: /no snapshot/ } });
  t.equal((await svc(['gates', 'install'], env)).code, 0);
  t.equal((await svc(['gates', 'sync'], env)).code, 0, 'gates sync finds the control plane and key svc login stored');
  t.match(JSON.parse((await svc(['status', '--json'], env)).stdout), { harnesses: [{ harness: 'claude-code', gateInstalled: true }], snapshot: { trusted: true, workspaceId: owner.workspaceId } });

  t.match((await svc(['logout'], env)).stdout, /logged out/);
  t.notOk(existsSync(file));
  t.match((await svc(['logout'], env)).stdout, /not logged in/);
  t.match((await svc(['status'], env)).stdout, /auth: not logged in/);
});

t.test('login with an e-mail and password: a key is made for this machine, and logout revokes it', async (t) => {
  const env = machine(t);
  const wrong = await svcWithStdin(['login', '--email', owner.email, '--password-stdin', '--control-plane-url', cp.url], 'wrong password\n', env);
  t.equal(wrong.code, 1);
  t.match(wrong.stderr, /401/);
  const login = await svcWithStdin(['login', '--email', owner.email, '--password-stdin', '--dev', '--control-plane-url', cp.url], `${owner.password}\n`, { ...env, SVC_CONTROL_PLANE_URL: cp.url });
  t.equal(login.code, 1, '--dev means the local control plane on port 3001, where nothing answers here');
  const ok = await svcWithStdin(['login', '--email', owner.email, '--password-stdin', '--control-plane-url', cp.url], `${owner.password}\n`, env);
  t.equal(ok.code, 0, ok.stderr);
  const stored = JSON.parse(readFileSync(join(env.SVC_HOME, 'credentials.json'), 'utf8'));
  t.match(stored, { apiKey: /^vk_/, keyId: /./ });
  t.equal((await api(cp, 'GET', '/auth/me', { token: stored.apiKey })).status, 200, 'the machine key works');
  const out = await svc(['logout'], env);
  t.match(out.stdout, new RegExp(`revoked this machine's key ${stored.keyId}`));
  t.equal((await api(cp, 'GET', '/auth/me', { token: stored.apiKey })).status, 401, 'and no longer works');
});
