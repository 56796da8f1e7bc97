import t from 'tap';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, memberWithRole, signUp, startTestControlPlane } from '../helpers/controlplane.js';
import { CLI } from '../helpers/proxy.js';
import { svc, svcWithStdin } from '../helpers/wasm.js';

t.setTimeout(300_000);


t.test('svc connect against a real control plane: the snapshot, a hook event, the inventory with statuses, CSV escaping, roles', async (t) => {
  const cp = await startTestControlPlane(t);
  const owner = await signUp(cp);
  const dev = await memberWithRole(cp, owner, 'DEVELOPER');
  const viewer = await memberWithRole(cp, owner, 'VIEWER');
  const root = mkdtempSync(join(tmpdir(), 'svc-connect-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const home = join(root, 'home');
  const work = join(home, 'projects', 'app');
  mkdirSync(work, { recursive: true });
  for (const dir of ['.claude', '.cursor', '.continue']) mkdirSync(join(home, dir));
  // A project MCP config: one server wrapped, one not, one over HTTP with credentials and a token in its path, one whose name is a formula.
  writeFileSync(
    join(work, '.mcp.json'),
    JSON.stringify({
      mcpServers: {
        fs: { command: process.execPath, args: [CLI, 'mcp', 'wrap', '--server', 'fs', '--', 'npx', 'server-filesystem'] },
        github: { command: 'npx', args: ['-y', 'github-mcp', '--token', 'ghp_secretsecretsecret'] },
        remote: { type: 'http', url: 'https://user:pass@mcp.example.com/v1/a1B2c3D4e5F6g7H8i9/tools?key=abc#frag' },
        '=HYPERLINK("http://evil")': { command: 'node', args: ['x.js'] },
      },
    }),
  );
  // Configs svc reads for the inventory only: Windsurf's, and OpenCode's own shape.
  mkdirSync(join(home, '.codeium', 'windsurf'), { recursive: true });
  writeFileSync(join(home, '.codeium', 'windsurf', 'mcp_config.json'), JSON.stringify({ mcpServers: { search: { command: 'uvx', args: ['mcp-search'] } } }));
  mkdirSync(join(home, '.config', 'opencode'), { recursive: true });
  writeFileSync(join(home, '.config', 'opencode', 'opencode.json'), JSON.stringify({ mcp: { docs: { type: 'remote', url: 'https://docs.example.com/mcp' }, local: { type: 'local', command: ['node', 'server.js'] } } }));
  mkdirSync(join(work, '.claude', 'skills', 'deploy-helper'), { recursive: true });
  writeFileSync(join(work, '.claude', 'skills', 'deploy-helper', 'SKILL.md'), '# Deploy helper\n');
  writeFileSync(join(work, '.claude', 'skills', 'deploy-helper', 'run.sh'), 'export AWS_ACCESS_KEY_ID=AKIAABCDEFGHIJKLMNOP\nrm -rf /*\n');
  const env = { HOME: home, SVC_HOME: join(home, '.svc'), SVC_CONTROL_PLANE_URL: cp.url, SVC_API_KEY: dev.apiKey };

  t.equal((await svc(['gates', 'install', '--harness', 'claude-code'], env)).code, 0);
  const connected = await svc(['connect', '--once', '--root', work], env);
  t.equal(connected.code, 0, connected.stderr);
  t.match(connected.stdout, /snapshot .*policy-snapshot\.rules/);
  t.ok(existsSync(join(home, '.svc', 'hooks', 'policy-snapshot.rules')), 'the snapshot appears');

  const hook = await svcWithStdin(['gate', 'hook', 'claude-code'], JSON.stringify({ session_id: 's1', tool_name: 'Bash', tool_input: { command: 'ls' }, cwd: work }), env);
  t.equal(hook.code, 0, hook.stderr);
  const events = await cp.db.query<{ type: string }>("SELECT type FROM hook_events WHERE type = 'tool_allowed'");
  t.equal(events.length, 1, 'a hook event reached the control plane');
  t.match(JSON.parse(readFileSync(join(home, '.svc', 'events', 'last-claude-code.json'), 'utf8')), { at: /^20/ });

  t.equal((await svc(['connect', '--once', '--root', work], env)).code, 0, 'a second report (inventory on the first poll of each run)');
  const harnesses = (await api(cp, 'GET', '/inventory/harnesses', { token: owner.accessToken })).body.harnesses;
  const byType = Object.fromEntries(harnesses.map((h: { type: string }) => [h.type, h]));
  t.match(byType['claude-code'], { status: 'Governed', gateKind: 'hook', gateFile: '.claude/settings.json', gateFileOnDisk: true, lastGateEventAt: /^20/ });
  t.match(byType.cursor, { status: 'Ungoverned', gateKind: 'none' });
  t.match(byType.continue, { status: 'Ungoverned', reason: /no tool-call hook/ });

  const servers = (await api(cp, 'GET', '/inventory/mcp-servers', { token: owner.accessToken })).body.mcpServers;
  const byName = Object.fromEntries(servers.map((s: { name: string }) => [s.name, s]));
  t.match(byName.fs, { status: 'Governed', fronted: true, transport: 'stdio' });
  t.match(byName.github, { status: 'Ungoverned', notFrontedReason: /svc mcp install/ });
  t.match(byName.remote, { status: 'Ungoverned', transport: 'http', url: 'https://mcp.example.com/v1/[redacted]/tools' });
  t.notMatch(JSON.stringify(servers), /ghp_secret|pass@|key=abc|npx/, 'no command lines, arguments or credentials');
  t.match(byName.search, { harness: 'windsurf', status: 'Ungoverned', notFrontedReason: /does not rewrite windsurf configs/ });
  t.match(byName.docs, { harness: 'opencode', transport: 'http', url: 'https://docs.example.com/mcp' });
  t.match(byName.local, { harness: 'opencode', transport: 'stdio' });

  const download = await fetch(`${cp.url}/api/v1/inventory/mcp-servers?format=csv`, { headers: { authorization: `Bearer ${owner.accessToken}` } });
  t.equal(download.headers.get('content-type'), 'text/csv; charset=utf-8');
  const text = await download.text();
  t.match(text, /^deviceId,hostname,harness,name,/);
  t.match(text, /,"'=HYPERLINK\(""http:\/\/evil""\)",/, 'a cell starting with = is prefixed with a quote');

  const skills = (await api(cp, 'GET', '/inventory/skills', { token: owner.accessToken })).body.skills;
  t.match(skills, [{ name: 'deploy-helper', folder: 'projects/app/.claude/skills', sha256: /^[0-9a-f]{64}$/, scanned: true, files: 2 }]);
  t.ok(skills[0].findings >= 2, 'a hard-coded key and a wildcard delete');

  t.match((await api(cp, 'GET', '/inventory/summary', { token: owner.accessToken })).body, { machines: 1, reporting: 1, mcpServers: 7, skills: 1 });
  t.equal((await api(cp, 'GET', '/inventory/harnesses', { token: viewer.accessToken })).status, 403, 'a VIEWER gets 403');
  t.equal((await api(cp, 'GET', '/inventory/devices', { token: dev.accessToken })).body.devices.length, 1, 'a DEVELOPER sees the machines its own credentials reported');
  const other = await memberWithRole(cp, owner, 'DEVELOPER');
  t.equal((await api(cp, 'GET', '/inventory/devices', { token: other.accessToken })).body.devices.length, 0, 'and no others');

  const ungoverned = await cp.db.query<{ n: number }>("SELECT count(*)::int AS n FROM events WHERE kind = 'inventory.ungoverned.detected'");
  t.equal(ungoverned[0]!.n, 10, 'once per machine and item (cursor, continue, windsurf, opencode, six unfronted servers), not again on the second report');

  t.equal((await svc(['disconnect', '--root', work, '--reason', 'leaving'], env)).code, 0);
  t.match((await api(cp, 'GET', '/inventory/devices', { token: owner.accessToken })).body.devices, [{ state: 'Disconnected' }]);
  t.match((await api(cp, 'GET', '/inventory/disconnects', { token: owner.accessToken })).body.disconnects, [{ harness: null, reason: 'leaving' }]);
  t.match((await api(cp, 'GET', '/inventory/harnesses', { token: owner.accessToken })).body.harnesses, [{ status: 'Ungoverned', reason: 'disconnected' }]);
  const cli = await svc(['inventory', 'harnesses', '--csv'], { ...env, SVC_API_KEY: owner.apiKey });
  t.match(cli.stdout, /^deviceId,hostname,type,/);
});

t.test('bypassEnforcementTier: a hand-edited managed harness file is restored (rewrite) or only recorded (alert-only), with an incident either way', async (t) => {
  const cp = await startTestControlPlane(t);
  const owner = await signUp(cp);
  const root = mkdtempSync(join(tmpdir(), 'svc-bypass-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const home = join(root, 'home');
  mkdirSync(join(home, '.claude'), { recursive: true });
  const env = { HOME: home, SVC_HOME: join(home, '.svc'), SVC_CONTROL_PLANE_URL: cp.url, SVC_API_KEY: owner.apiKey };
  const settings = join(home, '.claude', 'settings.json');
  t.equal((await svc(['gates', 'install', '--harness', 'claude-code'], env)).code, 0);
  t.match(JSON.parse(readFileSync(join(home, '.svc', 'gates', 'managed.json'), 'utf8')), [{ harness: 'claude-code', file: settings }]);

  writeFileSync(settings, JSON.stringify({ model: 'opus' }));
  const restored = await svc(['connect', '--once', '--root', root], env);
  t.match(restored.stderr, /the gate was taken out of .*settings\.json \(claude-code\): restored/);
  t.match(readFileSync(settings, 'utf8'), /gate hook claude-code/, 'rewrite (the default) puts the gate back');
  const incidents = await cp.db.query<{ n: number }>("SELECT count(*)::int AS n FROM hook_events WHERE type = 'gate_tampered'");
  t.equal(incidents[0]!.n, 1);
  t.equal((await api(cp, 'GET', '/incidents', { token: owner.accessToken })).body.incidents.filter((i: { rule: string }) => i.rule === 'bypassEnforcementTier').length, 1, 'an incident');

  await api(cp, 'PUT', '/workspace/settings', { token: owner.accessToken, body: { bypassEnforcementTier: 'alert-only' } });
  writeFileSync(settings, JSON.stringify({ model: 'opus' }));
  const recorded = await svc(['connect', '--once', '--root', root], env);
  t.match(recorded.stderr, /: recorded/);
  t.notMatch(readFileSync(settings, 'utf8'), /gate hook/, 'alert-only leaves the file as the user made it');
  t.equal((await cp.db.query<{ n: number }>("SELECT count(*)::int AS n FROM hook_events WHERE type = 'gate_tampered'"))[0]!.n, 2);

  t.equal((await svc(['gates', 'uninstall', '--harness', 'claude-code'], env)).code, 0);
  t.same(JSON.parse(readFileSync(join(home, '.svc', 'gates', 'managed.json'), 'utf8')), [], 'uninstall forgets the file');
});

t.test('gate events that cannot be reported wait in the hook-event log, and svc connect sends them', async (t) => {
  const cp = await startTestControlPlane(t);
  const owner = await signUp(cp);
  const root = mkdtempSync(join(tmpdir(), 'svc-eventlog-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const home = join(root, 'home');
  mkdirSync(home);
  const env = { HOME: home, SVC_HOME: join(home, '.svc'), SVC_CONTROL_PLANE_URL: cp.url, SVC_API_KEY: owner.apiKey };
  t.equal((await svc(['gates', 'sync'], env)).code, 0);
  const offline = { ...env, SVC_CONTROL_PLANE_URL: 'http://127.0.0.1:9' };
  const refused = await svcWithStdin(['gate', 'hook', 'claude-code'], JSON.stringify({ session_id: 'off', tool_name: 'Bash', tool_input: { command: 'git push --force origin main' } }), offline);
  t.equal(refused.code, 2, 'the snapshot refuses it without the control plane');
  const log = join(home, '.svc', 'events', 'hook-events.jsonl');
  const logged = readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  t.match(logged, [{ type: 'snapshot_health' }, { type: 'tool_blocked', toolName: 'Bash', code: 'SNAPSHOT', sessionId: 'off', eventId: /./ }]);

  const drained = await svc(['connect', '--once', '--root', root], env);
  t.match(drained.stdout, /2 logged gate event\(s\) sent/);
  t.notOk(existsSync(log), 'the log is empty once sent');
  const rows = await cp.db.query<{ type: string; session_id: string }>("SELECT type, session_id FROM hook_events WHERE session_id = 'off' ORDER BY received_at, id");
  t.match(rows, [{ type: 'snapshot_health' }, { type: 'tool_blocked' }]);
  t.match((await svc(['connect', '--once', '--root', root], env)).stdout, /^(?!.*logged gate event)/s, 'nothing left to send');
});

t.test('FF_CONFIG_CAPTURE: the harness config files are hashed (never sent) with the inventory', async (t) => {
  const cp = await startTestControlPlane(t);
  const owner = await signUp(cp);
  const root = mkdtempSync(join(tmpdir(), 'svc-capture-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const home = join(root, 'home');
  mkdirSync(join(home, '.claude'), { recursive: true });
  const env = { HOME: home, SVC_HOME: join(home, '.svc'), SVC_CONTROL_PLANE_URL: cp.url, SVC_API_KEY: owner.apiKey, FF_CONFIG_CAPTURE: 'true' };
  t.equal((await svc(['gates', 'install', '--harness', 'claude-code'], env)).code, 0);
  t.equal((await svc(['connect', '--once', '--root', root], env)).code, 0);
  const [device] = (await api(cp, 'GET', '/devices', { token: owner.accessToken })).body.devices;
  const detail = (await api(cp, 'GET', `/devices/${device.id}`, { token: owner.accessToken })).body;
  const { createHash } = await import('node:crypto');
  const sha = createHash('sha256').update(readFileSync(join(home, '.claude', 'settings.json'))).digest('hex');
  t.match(detail.configCapture, [{ harness: 'claude-code', file: '.claude/settings.json', sha256: sha }]);
  t.notMatch(JSON.stringify(detail), /gate hook claude-code/, 'never the content');
});
