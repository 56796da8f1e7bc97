import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, signUp, startTestControlPlane } from '../helpers/controlplane.js';
import { connectWrapped, EVERYTHING, resultText, startChild, waitFor, writeSettings } from '../helpers/mcp.js';
import { CLI } from '../helpers/proxy.js';

t.setTimeout(600_000);

const refusal = (result: unknown) => /^\[Svc Governance\] BLOCKED: (\w+):/.exec(resultText(result))?.[1] ?? null;

t.test('mcpProxyMode daemon: one daemon answers every wrapper, counts one budget without Redis, reads settings again, reports to the control plane; wrappers carry on when it dies', async (t) => {
  const cp = await startTestControlPlane(t);
  const owner = await signUp(cp);
  const home = mkdtempSync(join(tmpdir(), 'svc-mcpd-'));
  t.teardown(() => rmSync(home, { recursive: true, force: true }));
  const socket = join(home, 'd.sock');
  const budget = { budgets: [{ id: 'echo-hourly', scope: 'tool', tool: 'echo', period: 'hour', limit: 3 }] };
  const config = writeSettings(home, { mcpBudgets: budget });
  const daemon = await startChild(
    t,
    [CLI, 'mcp', 'daemon', '--config', config, '--socket', socket, '--reload-ms', '200', '--report-interval-ms', '1000', '--control-plane-url', cp.url, '--api-key', owner.apiKey],
    { SVC_HOME: home, SVC_LOG_LEVEL: 'warn', SVC_MCP_DAEMON_ID: 'test-machine' },
    /listening at/,
  );
  t.match(daemon.output(), `svc mcp daemon: listening at ${socket}`);
  await t.rejects(
    startChild(t, [CLI, 'mcp', 'daemon', '--config', config, '--socket', socket], { SVC_HOME: home }, /listening at/),
    /already answers at/,
    'a second daemon on the same socket refuses to start',
  );

  // The wrappers' own config allows only two tools and has no budget: while the daemon answers, its settings decide.
  const daemonMode = { SVC_MCP_PROXY_MODE: 'daemon', SVC_MCP_DAEMON_SOCKET: socket };
  const local = { mcpAllowedTools: ['echo', 'get-sum'] };
  const wrappers = await Promise.all([0, 1].map(() => connectWrapped(t, { server: 'everything', command: [EVERYTHING], settings: local, env: daemonMode })));
  const outcomes: string[] = [];
  for (let i = 0; i < 4; i++) {
    const result = await wrappers[i % 2]!.client.callTool({ name: 'echo', arguments: { message: `call ${i}` } });
    outcomes.push(refusal(result) ?? resultText(result));
  }
  t.same(outcomes, ['Echo: call 0', 'Echo: call 1', 'Echo: call 2', 'MCP_BUDGET_EXCEEDED'], 'one budget across both wrappers, counted by the daemon alone');

  writeFileSync(config, JSON.stringify({ settings: { mcpAllowedTools: ['get-sum'] } }));
  const disabled = await waitFor('the edited settings in force', async () => {
    const result = await wrappers[0]!.client.callTool({ name: 'echo', arguments: { message: 'again' } });
    return refusal(result) === 'TOOL_DISABLED' ? result : undefined;
  });
  t.match(resultText(disabled), /echo/, 'a running session is judged by the settings read again');

  const status = await waitFor('the daemon\'s report', async () => {
    const body = (await api(cp, 'GET', '/mcp-daemon/status', { token: owner.accessToken })).body;
    return body.running && body.counters.lookups >= 5 ? body : undefined;
  });
  t.match(status.daemons, [{ daemonId: 'test-machine', running: true, servers: [{ name: 'everything', sessions: 2 }] }]);
  t.ok(status.counters.refused >= 2);

  daemon.child.kill('SIGKILL');
  const after = await wrappers[1]!.client.callTool({ name: 'printEnv', arguments: {} });
  t.equal(refusal(after), 'TOOL_DISABLED', 'the daemon gone, the wrapper governs in its own process with its own settings');
  t.equal(resultText(await wrappers[1]!.client.callTool({ name: 'echo', arguments: { message: 'local' } })), 'Echo: local');
});
