import t from 'tap';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, memberWithRole, signUp, startTestControlPlane } from '../helpers/controlplane.js';
import { SwitchableLink } from '../helpers/link.js';
import { svcWithStdin } from '../helpers/wasm.js';

t.setTimeout(600_000);

/** `svc` run in `cwd` (the project folder whose .svc/config.json counts). */
const svcIn = (cwd: string, args: string[], env: NodeJS.ProcessEnv) => svcWithStdin(args, '', env, cwd);

t.test('svc budget against a real control plane: spend and caps, the local cap, loops; offline, refused, malformed config', async (t) => {
  const cp = await startTestControlPlane(t);
  const owner = await signUp(cp);
  const viewer = await memberWithRole(cp, owner, 'VIEWER');
  const root = mkdtempSync(join(tmpdir(), 'svc-budget-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const project = join(root, 'project');
  mkdirSync(project);
  const svcHome = join(root, 'svc');
  const env = { HOME: root, SVC_HOME: svcHome, SVC_CONTROL_PLANE_URL: cp.url, SVC_API_KEY: owner.apiKey };

  t.equal((await api(cp, 'PUT', '/budget', { token: owner.accessToken, body: { monthlyUsd: 40 } })).status, 200);
  const trace = { id: 'tr_budget1', time: new Date().toISOString(), workspace: 'x', session: null, harness: null, route: 'openai:chat', model: 'gpt-4o-mini', provider: 'openai', stream: false, status: 200, latencyMs: 12, ttfbMs: null, overheadMs: null, inputTokens: 3, outputTokens: 4, costUsd: 1.25, enforcement: 'BYPASS', error: null, incidentId: null, findings: [], shadow: false, usageEstimated: false, priceEstimated: false, warnings: [], attempts: [], anomaly: null, cache: null, toolCalls: [], requestRule: null, responseRule: null };
  t.equal((await api(cp, 'POST', '/traces/sync-back', { token: owner.apiKey, body: { traces: [trace] } })).status, 200);

  const online = await svcIn(project, ['budget', '--json'], env);
  t.equal(online.code, 0, online.stderr);
  t.match(JSON.parse(online.stdout), {
    online: true,
    offlineReason: null,
    workspace: { dailyUsd: 100, dailyIsDefault: true, monthlyUsd: 40, spentTodayUsd: 1.25, spentThisMonthUsd: 1.25, cached: false },
    localCap: { usd: 10, source: null },
    loops: { available: false, active: [], note: /keeps no loop runs/ },
  });
  const text = await svcIn(project, ['budget', '--fresh'], env);
  t.match(text.stdout, /today +\$1\.25 of \$100\.00 daily cap \(the default: none saved\)/);
  t.match(text.stdout, /this month +\$1\.25 of \$40\.00 monthly cap/);
  t.match(text.stdout, /local cap +\$10\.00 \(the default: no \.svc\/config\.json\)/);
  t.match(text.stdout, /active loops +none: the control plane keeps no loop runs yet/);

  // Any member reads the budget (GET /budget is open to every role).
  const before = new Set(readdirSync(join(svcHome, 'cache')));
  t.match(JSON.parse((await svcIn(project, ['budget', '--json', '--fresh'], { ...env, SVC_API_KEY: viewer.apiKey })).stdout), { online: true, workspace: { monthlyUsd: 40 } });
  const viewerCache = readdirSync(join(svcHome, 'cache')).find((f) => !before.has(f));

  // The 30-second cache: an answer younger than that is used; an older one, or one from the future, is not.
  await api(cp, 'PUT', '/budget', { token: owner.accessToken, body: { dailyUsd: 7 } });
  // One cache per control plane and key: the owner's, the viewer's.
  const caches = readdirSync(join(svcHome, 'cache')).filter((f) => f.startsWith('budget-'));
  t.equal(caches.length, 2);
  const cacheFile = join(svcHome, 'cache', caches.find((f) => f !== viewerCache)!);
  const rewrite = (fetchedAt: number) => writeFileSync(cacheFile, JSON.stringify({ ...JSON.parse(readFileSync(cacheFile, 'utf8')), fetchedAt }));
  rewrite(Date.now());
  t.match(JSON.parse((await svcIn(project, ['budget', '--json'], env)).stdout), { workspace: { dailyUsd: 100, cached: true } }, 'a fresh cached answer is used');
  t.match(JSON.parse((await svcIn(project, ['budget', '--json', '--fresh'], env)).stdout), { workspace: { dailyUsd: 7, dailyIsDefault: false, cached: false } }, '--fresh asks again');
  await api(cp, 'PUT', '/budget', { token: owner.accessToken, body: { dailyUsd: 8 } });
  rewrite(Date.now() - 31_000);
  t.match(JSON.parse((await svcIn(project, ['budget', '--json'], env)).stdout), { workspace: { dailyUsd: 8, cached: false } }, 'an answer older than 30 s is not used');
  await api(cp, 'PUT', '/budget', { token: owner.accessToken, body: { dailyUsd: 9 } });
  rewrite(Date.now() + 3_600_000);
  t.match(JSON.parse((await svcIn(project, ['budget', '--json'], env)).stdout), { workspace: { dailyUsd: 9 } }, 'a cache from the future is not trusted');

  // The local cap: the project's .svc/config.json, else $SVC_HOME/config.json.
  mkdirSync(svcHome, { recursive: true });
  writeFileSync(join(svcHome, 'config.json'), JSON.stringify({ localCapUsd: 3.5 }));
  t.match(JSON.parse((await svcIn(project, ['budget', '--json'], env)).stdout), { localCap: { usd: 3.5, source: join(svcHome, 'config.json') } });
  mkdirSync(join(project, '.svc'));
  writeFileSync(join(project, '.svc', 'config.json'), JSON.stringify({ localCapUsd: 25, captureRollbackPreImages: true }));
  t.match(JSON.parse((await svcIn(project, ['budget', '--json'], env)).stdout), { localCap: { usd: 25, source: join(project, '.svc', 'config.json') } }, 'the project file wins');

  for (const [bad, why] of [
    ['{ "localCapUsd": 25, ', /is not valid JSON/],
    ['{ "localCapUsd": -1, "localCap": 5 }', /localCapUsd: Too small.*Unrecognized key: "localCap"/],
  ] as const) {
    writeFileSync(join(project, '.svc', 'config.json'), bad);
    const malformed = await svcIn(project, ['budget'], env);
    t.equal(malformed.code, 2, bad);
    t.match(malformed.stderr, new RegExp(`${join(project, '.svc', 'config.json').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.*`), 'the error names the file');
    t.match(malformed.stderr, why);
    t.equal(malformed.stdout, '');
  }
  rmSync(join(project, '.svc'), { recursive: true });

  // Offline: not logged in.
  const notLoggedIn = await svcIn(project, ['budget'], { HOME: root, SVC_HOME: join(root, 'nobody'), SVC_CONTROL_PLANE_URL: '', SVC_API_KEY: '' });
  t.equal(notLoggedIn.code, 0, notLoggedIn.stderr);
  t.match(notLoggedIn.stdout, /^offline: not logged in: run svc login .*; only the local cap is shown$/m);
  t.match(notLoggedIn.stdout, /local cap +\$10\.00/);
  t.notMatch(notLoggedIn.stdout, /today/);

  // Logged in with `svc login`'s stored credentials, then the control plane goes down.
  const port = Number(new URL(cp.url).port);
  const link = await SwitchableLink.open(t, { host: '127.0.0.1', port });
  const storedHome = join(root, 'stored');
  mkdirSync(storedHome);
  writeFileSync(join(storedHome, 'credentials.json'), JSON.stringify({ apiKey: owner.apiKey, workspaceId: owner.workspaceId, controlPlaneUrl: link.url }));
  const stored = { HOME: root, SVC_HOME: storedHome, SVC_CONTROL_PLANE_URL: '', SVC_API_KEY: '' };
  t.match(JSON.parse((await svcIn(project, ['budget', '--json'], stored)).stdout), { online: true, controlPlaneUrl: link.url, workspace: { dailyUsd: 9 } });
  await link.down();
  const down = await svcIn(project, ['budget', '--json', '--fresh'], stored);
  t.equal(down.code, 0, 'offline is not an error');
  t.match(JSON.parse(down.stdout), { online: false, workspace: null, offlineReason: /the control plane could not be reached/, localCap: { usd: 10 } });

  // A key the control plane refuses is not being offline: exit 1.
  const revoked = await svcIn(project, ['budget', '--fresh'], { ...env, SVC_API_KEY: 'vk_not_a_real_key_000000000000' });
  t.equal(revoked.code, 1);
  t.match(revoked.stderr, /svc budget: control plane answered 401/);
  t.match(revoked.stdout, /^refused: control plane answered 401 .*; only the local cap is shown$/m);
  t.match(revoked.stdout, /local cap +\$3\.50/, 'the local cap is still shown ($SVC_HOME/config.json)');
});
