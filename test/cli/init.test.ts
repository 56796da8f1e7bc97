import t from 'tap';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { api, startTestControlPlane } from '../helpers/controlplane.js';
import { svcWithStdin } from '../helpers/wasm.js';

t.setTimeout(300_000);


/** Every file under `dir` and its bytes. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[relative(dir, p)] = readFileSync(p, 'utf8');
    }
  };
  walk(dir);
  return out;
}

t.test('svc init, non-interactive, in a home with five harnesses: a workspace, a key, every harness pointed at the proxy and gated, MCP servers wrapped; a second run changes nothing', async (t) => {
  const cp = await startTestControlPlane(t);
  const root = mkdtempSync(join(tmpdir(), 'svc-init-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const home = join(root, 'home');
  const project = join(home, 'code', 'app');
  mkdirSync(project, { recursive: true });
  const put = (path: string, text: string) => {
    mkdirSync(join(home, path, '..'), { recursive: true });
    writeFileSync(join(home, path), text);
  };
  put('.claude/settings.json', JSON.stringify({ model: 'opus', permissions: { allow: ['Bash(ls:*)'] } }, null, 2));
  put('.codex/config.toml', 'model = "gpt-5.1-codex"\napproval_policy = "on-request"\n\n[sandbox_workspace_write]\nnetwork_access = false\n');
  put('.cursor/mcp.json', JSON.stringify({ mcpServers: { fs: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'] } } }));
  put('.gemini/settings.json', JSON.stringify({ theme: 'GitHub', mcpServers: { memory: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'] } } }));
  put('.config/opencode/opencode.json', JSON.stringify({ $schema: 'https://opencode.ai/config.json', theme: 'system' }));
  const env = { HOME: home, SVC_HOME: join(home, '.svc'), SVC_CONTROL_PLANE_URL: cp.url, SVC_API_KEY: '' };

  const first = await svcWithStdin(['init', '--email', 'dev@example.com', '--password-stdin', '--workspace-name', 'acme', '--project', project], 'correct horse battery\n', env);
  t.equal(first.code, 0, first.stderr);
  t.match(first.stdout, /created workspace acme \(ws_\w+\) as dev@example\.com \(OWNER\)/);
  const credentials = JSON.parse(readFileSync(join(home, '.svc', 'credentials.json'), 'utf8'));
  t.equal(statSync(join(home, '.svc', 'credentials.json')).mode & 0o777, 0o600);
  t.match(credentials, { apiKey: /^vk_/, controlPlaneUrl: cp.url, role: 'OWNER' });
  t.equal((await api(cp, 'GET', '/auth/me', { token: credentials.apiKey })).status, 200, 'the key works');

  const claude = JSON.parse(readFileSync(join(home, '.claude', 'settings.json'), 'utf8'));
  t.match(claude, { model: 'opus', permissions: { allow: ['Bash(ls:*)'] }, env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:4000', ANTHROPIC_AUTH_TOKEN: credentials.apiKey } });
  t.match(claude.hooks.PreToolUse, [{ matcher: '*', hooks: [{ command: /gate hook claude-code$/ }] }]);
  const codex = readFileSync(join(home, '.codex', 'config.toml'), 'utf8');
  t.match(codex, /^model_provider = "svc"\nmodel = "gpt-5\.1-codex"\napproval_policy = "on-request"\n/);
  t.match(codex, /\[sandbox_workspace_write\]\nnetwork_access = false\n/);
  t.match(codex, /\[model_providers\.svc\]\nname = "svc"\nbase_url = "http:\/\/127\.0\.0\.1:4000\/v1"\nenv_key = "SVC_API_KEY"\nwire_api = "responses"\n$/);
  t.match(readFileSync(join(home, '.codex', 'rules', 'svc-gate.rules'), 'utf8'), /pattern = \["git", "push", "--force"\]/);
  const cursorHooks = JSON.parse(readFileSync(join(home, '.cursor', 'hooks.json'), 'utf8'));
  t.match(cursorHooks.hooks.beforeShellExecution, [{ command: /gate hook cursor$/ }]);
  t.match(JSON.parse(readFileSync(join(home, '.cursor', 'mcp.json'), 'utf8')).mcpServers.fs.args, [/main\.js$/, 'mcp', 'wrap', '--server', 'fs', '--', 'npx', '-y', '@modelcontextprotocol/server-filesystem', '/tmp']);
  const gemini = JSON.parse(readFileSync(join(home, '.gemini', 'settings.json'), 'utf8'));
  t.match(gemini, { theme: 'GitHub', hooks: { BeforeTool: [{ hooks: [{ command: /gate hook gemini$/ }] }] }, mcpServers: { memory: { args: [/main\.js$/, 'mcp', 'wrap', '--server', 'memory', '--', 'npx', '-y', '@modelcontextprotocol/server-memory'] } } });
  t.match(JSON.parse(readFileSync(join(home, '.config', 'opencode', 'opencode.json'), 'utf8')), {
    theme: 'system',
    provider: { anthropic: { options: { baseURL: 'http://127.0.0.1:4000/v1', apiKey: credentials.apiKey } }, openai: { options: { baseURL: 'http://127.0.0.1:4000/v1' } } },
  });
  t.match(readFileSync(join(home, '.svc', 'hooks', 'policy-snapshot.rules'), 'utf8'), new RegExp(`^@workspace ${credentials.workspaceId}$`, 'm'));
  for (const file of ['.claude/settings.json', '.codex/config.toml', '.gemini/settings.json', '.config/opencode/opencode.json']) {
    t.ok(statSync(join(home, `${file}.svc-backup`)).isFile(), `${file}: the original is kept`);
  }

  const before = snapshot(home);
  const second = await svcWithStdin(['init', '--project', project], '', env);
  t.equal(second.code, 0, second.stderr);
  t.match(second.stdout, /joined workspace acme/);
  t.match(second.stdout, /already pointed at the proxy/);
  t.match(second.stdout, /policy snapshot: unchanged/);
  t.same(snapshot(home), before, 'a second run changes no file');
});
