import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, memberWithRole, signUp, startTestControlPlane, type Teardown, type TestControlPlaneOptions } from './controlplane.js';
import { compileRules, svc } from './wasm.js';

/**
 * A workspace that holds tool calls: a control plane with the bypass on (10 minutes), an owner,
 * an EM who reviews and a developer who asks, a gateway, and the force-push (holds) and
 * destructive-shell (blocks) rules installed in a WASM folder of their own.
 */
export async function holdsWorkspace(t: Teardown, controlPlane: TestControlPlaneOptions = {}) {
  const cp = await startTestControlPlane(t, controlPlane);
  const owner = await signUp(cp);
  const em = await memberWithRole(cp, owner, 'EM');
  const dev = await memberWithRole(cp, owner, 'DEVELOPER');
  await api(cp, 'PUT', '/workspace/settings', { token: owner.accessToken, body: { reviewHoldBypassEnabled: true, reviewHoldBypassTtlMinutes: 10 } });
  const gateway = (await api(cp, 'POST', '/gateways', { token: owner.accessToken, body: { name: 'edge' } })).body.id as string;
  const rules = await compileRules(t, ['force-push', 'destructive-shell']);
  const wasmDir = await mkdtemp(join(tmpdir(), 'svc-holds-wasm-'));
  t.teardown(() => rm(wasmDir, { recursive: true, force: true }));
  for (const [name, priority] of [['destructive-shell', 10], ['force-push', 30]] as const) {
    const installed = await svc(['policy', 'install', '--wasm', rules[name], '--name', name, '--priority', String(priority)], { SVC_WASM_DIR: wasmDir });
    if (installed.code !== 0) throw new Error(installed.stderr);
  }
  return { cp, owner, em, dev, gateway, wasmDir };
}
