import t from 'tap';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signUp, startTestControlPlane } from '../helpers/controlplane.js';
import { freePort } from '../helpers/ports.js';
import { startProxy } from '../helpers/proxy.js';
import { svc } from '../helpers/wasm.js';

t.setTimeout(300_000);

t.test('svc doctor: seven checks in order, failing when the proxy is down or a gate was removed', async (t) => {
  const cp = await startTestControlPlane(t);
  const owner = await signUp(cp);
  const proxy = await startProxy(t, {});
  const home = mkdtempSync(join(tmpdir(), 'svc-doctor-'));
  t.teardown(() => rmSync(home, { recursive: true, force: true }));
  mkdirSync(join(home, '.claude'));
  const env = { HOME: home, SVC_HOME: join(home, '.svc'), SVC_CONTROL_PLANE_URL: cp.url, SVC_API_KEY: owner.apiKey, SVC_VALKEY_URL: `redis://127.0.0.1:${await freePort()}` };
  t.equal((await svc(['gates', 'install'], env)).code, 0);
  t.equal((await svc(['gates', 'sync'], env)).code, 0);

  const healthy = await svc(['doctor', '--json', '--proxy-url', proxy.url], env);
  t.equal(healthy.code, 0, healthy.stdout);
  const checks = JSON.parse(healthy.stdout).checks;
  t.same(
    checks.map((c: { name: string }) => c.name),
    ['proxy health', 'control-plane auth', 'sync daemon', 'harness config drift', 'daemon log', 'key-value store', 'CA certificate trust'],
  );
  t.match(checks, [{ outcome: 'ok' }, { outcome: 'ok', detail: new RegExp(owner.email) }, { outcome: 'ok' }, { outcome: 'ok', detail: /claude-code/ }, { outcome: 'warn' }, { outcome: 'warn', detail: /nothing listens/ }, {}]);

  writeFileSync(join(home, '.claude', 'settings.json'), '{}');
  const drifted = await svc(['doctor', '--proxy-url', `http://127.0.0.1:${await freePort()}`], env);
  t.equal(drifted.code, 1);
  t.match(drifted.stdout, /^1\. FAIL proxy health: .* does not answer/m);
  t.match(drifted.stdout, /^4\. FAIL harness config drift: the gate is gone from claude-code/m);
});
