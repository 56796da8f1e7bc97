import t from 'tap';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, memberWithRole, signUp, startTestControlPlane } from '../helpers/controlplane.js';
import { svc, svcWithStdin } from '../helpers/wasm.js';

const hook = (harness: string, input: string, env: NodeJS.ProcessEnv) => svcWithStdin(['gate', 'hook', harness], input, env);

t.setTimeout(300_000);

function sandbox(t: { teardown(fn: () => void): void }) {
  const root = mkdtempSync(join(tmpdir(), 'svc-gates-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const home = join(root, 'home');
  mkdirSync(home);
  return { root, home, svcHome: join(root, 'svc') };
}


t.test('gates install / uninstall: Claude Code and Cursor, idempotent, backups, restored byte for byte', async (t) => {
  const { home } = sandbox(t);
  mkdirSync(join(home, '.claude'));
  mkdirSync(join(home, '.cursor'));
  mkdirSync(join(home, '.gemini'));
  const geminiFile = join(home, '.gemini', 'settings.json');
  const geminiOriginal = '{"theme":"GitHub"}';
  writeFileSync(geminiFile, geminiOriginal);
  const claudeFile = join(home, '.claude', 'settings.json');
  const original = '{\n    "model": "opus",\n    "hooks": { "PostToolUse": [ { "matcher": "Edit", "hooks": [ { "type": "command", "command": "prettier" } ] } ] }\n}\n';
  writeFileSync(claudeFile, original);
  const env = { HOME: home };

  const dry = await svc(['gates', 'install', '--dry-run'], env);
  t.match(dry.stdout, /claude-code .*settings\.json: would add the gate/);
  t.equal(readFileSync(claudeFile, 'utf8'), original, 'a dry run changes nothing');

  const first = await svc(['gates', 'install'], env);
  t.equal(first.code, 0, first.stderr);
  t.match(first.stdout, /claude-code .*: added the gate \(original kept in .*settings\.json\.svc-backup\)/);
  t.match(first.stdout, /cursor .*hooks\.json: added the gate/);
  const claude = JSON.parse(readFileSync(claudeFile, 'utf8'));
  t.equal(claude.model, 'opus', 'the rest of the file is kept');
  t.match(claude.hooks.PreToolUse, [{ matcher: '*', hooks: [{ type: 'command', command: /main\.js gate hook claude-code$/, timeout: 10 }] }]);
  t.ok(claude.hooks.PostToolUse, 'other hooks are kept');
  const cursor = JSON.parse(readFileSync(join(home, '.cursor', 'hooks.json'), 'utf8'));
  t.match(cursor, { version: 1, hooks: { beforeShellExecution: [{ command: /gate hook cursor$/ }], beforeMCPExecution: [{ command: /gate hook cursor$/ }] } });
  t.match(JSON.parse(readFileSync(geminiFile, 'utf8')), { theme: 'GitHub', hooks: { BeforeTool: [{ matcher: '.*', hooks: [{ type: 'command', command: /gate hook gemini$/, timeout: 10000 }] }] } });

  const again = await svc(['gates', 'install'], env);
  t.match(again.stdout, /the gate is already there/);
  t.same(JSON.parse(readFileSync(claudeFile, 'utf8')), claude, 'running it again changes nothing');

  const removed = await svc(['gates', 'uninstall'], env);
  t.equal(removed.code, 0, removed.stderr);
  t.equal(readFileSync(claudeFile, 'utf8'), original, 'the original, byte for byte');
  t.notOk(existsSync(`${claudeFile}.svc-backup`));
  t.notOk(existsSync(join(home, '.cursor', 'hooks.json')), 'a file install created is removed');
  t.equal(readFileSync(geminiFile, 'utf8'), geminiOriginal);

  writeFileSync(claudeFile, '{ not json');
  const broken = await svc(['gates', 'install', '--harness', 'claude-code'], env);
  t.equal(broken.code, 1);
  t.match(broken.stdout, /left untouched: .*not valid JSON/);
  t.equal(readFileSync(claudeFile, 'utf8'), '{ not json');
});

t.test('gates sync from the control plane, and the hook against it: refusals in the harness protocol, decisions as hook events', async (t) => {
  const cp = await startTestControlPlane(t);
  const owner = await signUp(cp);
  const dev = await memberWithRole(cp, owner, 'DEVELOPER');
  await api(cp, 'PUT', '/workspace/settings', { token: owner.accessToken, body: { mcpDefaultPolicy: 'deny' } });
  await api(cp, 'POST', '/mcp/servers/fs/approve', { token: owner.accessToken });
  const { root, svcHome } = sandbox(t);
  mkdirSync(join(root, '.svc', 'sops'), { recursive: true });
  writeFileSync(join(root, '.svc', 'sops', 'release.md'), '# Releases\n\nreview_before: action:publish\n');
  const env = { SVC_HOME: svcHome, SVC_CONTROL_PLANE_URL: cp.url, SVC_API_KEY: dev.apiKey };

  t.match((await svc(['gates', 'sync', '--root', root], { SVC_HOME: svcHome })).stderr, /give --config <file>, or a control plane/);
  const synced = await svc(['gates', 'sync', '--root', root], env);
  t.equal(synced.code, 0, synced.stderr);
  t.match(synced.stdout, new RegExp(`for workspace ${owner.workspaceId} \\(1 SOP rule`));
  const text = readFileSync(join(svcHome, 'hooks', 'policy-snapshot.rules'), 'utf8');
  t.match(text, new RegExp(`^@workspace ${owner.workspaceId}$`, 'm'));
  t.match(text, /"servers":\{"fs":\{"status":"approved"/);

  const claude = (tool: string, input: object) => hook('claude-code', JSON.stringify({ session_id: 'sess-hook', tool_name: tool, tool_input: input, cwd: root }), { ...env, SVC_WORKSPACE_ID: owner.workspaceId });
  const refused = await claude('Bash', { command: 'git push -f origin main' });
  t.equal(refused.code, 2, 'exit 2: Claude Code refuses the call and shows the model stderr');
  t.match(refused.stderr, /^\[Svc Governance\] BLOCKED: SNAPSHOT: the Bash tool call was blocked by rule destructive:force-push/);
  t.equal((await claude('mcp__fs__read', {})).code, 0, 'an approved MCP server');
  t.match((await claude('mcp__jira__search', {})).stderr, /SERVER_NOT_APPROVED/);
  const held = await claude('Bash', { command: 'npm publish' });
  t.equal(held.code, 0);
  t.match(JSON.parse(held.stdout), { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: /^\[Svc Governance\] HELD: .*hold hold_/ } });
  const allowed = await claude('Bash', { command: 'touch ok.txt' });
  t.same([allowed.code, allowed.stdout, allowed.stderr], [0, '', '']);

  const cursor = await hook('cursor', JSON.stringify({ hook_event_name: 'beforeShellExecution', command: 'rm -rf ~', cwd: root, conversation_id: 'c1' }), env);
  t.match(JSON.parse(cursor.stdout), { permission: 'deny', agentMessage: /destructive:rm-root/ });
  t.match(JSON.parse((await hook('cursor', JSON.stringify({ command: 'ls' }), env)).stdout), { permission: 'allow' });
  t.match((await hook('claude-code', '{"tool_input":{}}', env)).stderr, /HOOK_GATE: the hook input does not read/);
  const gemini = (tool: string, input: object) => hook('gemini', JSON.stringify({ session_id: 'g1', hook_event_name: 'BeforeTool', tool_name: tool, tool_input: input, cwd: root }), env);
  t.match(JSON.parse((await gemini('run_shell_command', { command: 'terraform destroy -auto-approve' })).stdout), { decision: 'deny', reason: /destructive:infra-teardown/ });
  t.same(JSON.parse((await gemini('run_shell_command', { command: 'ls' })).stdout), {});

  const events = await cp.db.query<{ type: string; tool: string; session_id: string; harness: string }>("SELECT type, tool, session_id, harness FROM hook_events WHERE type <> 'snapshot_health' ORDER BY received_at, id");
  t.match(events.map((e) => [e.type, e.tool]), [
    ['tool_blocked', 'Bash'],
    ['tool_allowed', 'mcp__fs__read'],
    ['tool_blocked', 'mcp__jira__search'],
    ['tool_held', 'Bash'],
    ['tool_allowed', 'Bash'],
    ['tool_blocked', 'Shell'],
    ['tool_allowed', 'Shell'],
    ['tool_blocked', 'run_shell_command'],
    ['tool_allowed', 'run_shell_command'],
  ]);
  t.equal(events[0]!.session_id, 'sess-hook');
  t.equal(events[0]!.harness, 'claude-code');

  // The SOP register's REQUIRE_APPROVAL rules travel in the snapshot: held even with no client.
  const policy = await api(cp, 'POST', '/policies', {
    token: owner.accessToken,
    body: { name: 'batches', sop_rules: [{ id: 'big-batch', action: 'require_approval', where: 'count > 100', reason: 'a batch this big needs review' }] },
  });
  t.equal(policy.status, 201);
  t.match((await svc(['gates', 'sync', '--root', root], env)).stdout, /\(2 SOP rule\(s\)\)/);
  t.match(readFileSync(join(svcHome, 'hooks', 'policy-snapshot.rules'), 'utf8'), /^hold \{"id":"big-batch".*"where":"count > 100"\}$/m);
  const offline = { SVC_HOME: svcHome, SVC_WORKSPACE_ID: owner.workspaceId };
  const batch = await hook('claude-code', JSON.stringify({ session_id: 's', tool_name: 'import_rows', tool_input: { count: 500 } }), offline);
  t.match(JSON.parse(batch.stdout), { hookSpecificOutput: { permissionDecision: 'deny', permissionDecisionReason: /^\[Svc Governance\] HELD: .*rule big-batch.*no hold id could be recorded/ } });
  t.same((await hook('claude-code', JSON.stringify({ session_id: 's', tool_name: 'import_rows', tool_input: { count: 5 } }), offline)).stdout, '');
});
