import t from 'tap';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startMockProvider } from '../../bench/mock/provider.js';
import { agentSandbox, outcome, runClaudeCode } from '../helpers/agents.js';
import { FILESYSTEM, mcpTraces, waitFor, writeSettings } from '../helpers/mcp.js';
import { svc } from '../helpers/wasm.js';

// Claude Code with a filesystem MCP server that `svc mcp install` put behind `svc mcp wrap`:
// the scripted model calls an allowed tool, then one the workspace disabled.
t.setTimeout(600_000);

t.test('Claude Code through a wrapped MCP server: the allowed tool runs, the disabled one comes back as a tool error, the session completes', async (t) => {
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  const { root, home, work } = await agentSandbox(t);
  writeFileSync(join(work, 'notes.txt'), 'first line of the notes\n');
  const svcHome = join(root, 'svc');
  mkdirSync(svcHome);
  const settings = writeSettings(svcHome, { mcpAllowedServers: ['fs'], mcpAllowedTools: ['read_text_file', 'list_directory', 'list_allowed_directories'] });
  // The project's own MCP config, as a user would have it; the wrapper finds its settings through the entry's env.
  writeFileSync(join(work, '.mcp.json'), JSON.stringify({ mcpServers: { fs: { command: FILESYSTEM, args: [work], env: { SVC_CONFIG: settings, SVC_HOME: svcHome } } } }, null, 2));
  mkdirSync(join(work, '.claude'));
  writeFileSync(join(work, '.claude', 'settings.json'), JSON.stringify({ enableAllProjectMcpServers: true }));

  const installed = await svc(['mcp', 'install', '--harness', 'claude-code', '--project', work], { HOME: home });
  t.equal(installed.code, 0, installed.stderr);
  t.match(installed.stdout, /wrapped fs/);
  t.match(JSON.parse(readFileSync(join(work, '.mcp.json'), 'utf8')).mcpServers.fs.args, [/main\.js$/, 'mcp', 'wrap', '--server', 'fs', '--', FILESYSTEM, work]);

  mock.setScript({
    steps: [
      { tool: { name: 'mcp__fs__read_text_file', input: { path: join(work, 'notes.txt') } } },
      { tool: { name: 'mcp__fs__write_file', input: { path: join(work, 'written.txt'), content: 'should not be written' } } },
      { text: 'Read the notes; writing was refused.' },
    ],
  });
  const run = await runClaudeCode(t, {
    baseUrl: mock.url,
    apiKey: 'sk-ant-test',
    home,
    cwd: work,
    prompt: 'Read notes.txt, then write written.txt.',
    args: ['--allowedTools', 'mcp__fs__read_text_file,mcp__fs__write_file'],
  });
  t.equal(run.code, 0, `claude exits 0 (${outcome(run)})`);
  t.match(run.stdout, /Read the notes; writing was refused\./, 'the session completes');

  const bodies = mock.requests.filter((r) => r.route === 'messages').map((r) => JSON.stringify(r.body));
  t.ok(bodies.some((b) => b.includes('first line of the notes')), "the allowed tool ran: the file's text went back to the model");
  const refused = bodies.find((b) => b.includes('[Svc Governance] BLOCKED: TOOL_DISABLED'));
  t.ok(refused, 'the refusal reached the model');
  t.match(refused, /"is_error":true/, 'as a tool error');
  t.notOk(existsSync(join(work, 'written.txt')), 'nothing was written');

  const traces = await waitFor('both call traces', () => (mcpTraces(svcHome).length >= 2 ? mcpTraces(svcHome) : undefined));
  t.match(
    traces.map((tr) => [tr.mcp.tool, tr.mcp.verdict]),
    [
      ['read_text_file', 'allow'],
      ['write_file', 'block'],
    ],
  );
});
