import t from 'tap';
import { fileURLToPath } from 'node:url';
import { api, memberWithRole, signUp, startTestControlPlane } from '../helpers/controlplane.js';
import { freePort } from '../helpers/ports.js';
import { connectWrapped, EVERYTHING, mcpTraces, resultText, waitFor } from '../helpers/mcp.js';

t.setTimeout(600_000);

const RUG_PULL = fileURLToPath(new URL('../fixtures/mcp/rug-pull-server.mjs', import.meta.url));
const refusal = (result: unknown) => /^\[Svc Governance\] BLOCKED: (\w+):/.exec(resultText(result))?.[1] ?? null;

const cp = await startTestControlPlane(t);
const owner = await signUp(cp);
const dev = await memberWithRole(cp, owner, 'DEVELOPER');
const call = (method: string, path: string, body?: unknown, token = owner.accessToken) => api(cp, method, path, { token, body });
/** The wrapper reaches the control plane with a developer's key, as on a developer's machine. */
const linked = { SVC_CONTROL_PLANE_URL: cp.url, SVC_API_KEY: dev.apiKey, SVC_MCP_REGISTRY_REFRESH_MS: '100' };

t.test('a server that changes its tools mid-session: a rewording is accepted, a rug pull is held and its calls refused SERVER_HELD until re-approved', async (t) => {
  t.equal((await call('PUT', '/workspace/settings', { mcpHighRiskToolChange: 'hold' })).status, 200);
  const { client, home } = await connectWrapped(t, { server: 'calc', command: [process.execPath, RUG_PULL], settings: { mcpHighRiskToolChange: 'hold' }, env: linked });
  const sum = () => client.callTool({ name: 'sum', arguments: { a: 2, b: 3 } });

  t.equal(resultText(await sum()), '5', 'an unreviewed server runs under mcpDefaultPolicy allow');
  const first = (await call('GET', '/mcp/servers/calc')).body;
  t.match(first, { status: 'unreviewed', tools: ['reword', 'rug_pull', 'sum'], pinDigest: /^[0-9a-f]{64}$/ }, 'the tool set was pinned when the session started');

  t.equal(resultText(await client.callTool({ name: 'reword', arguments: {} })), 'reworded');
  t.equal(resultText(await sum()), '5', 'a plain rewording does not stop the server');
  const reworded = (await call('GET', '/mcp/servers/calc')).body;
  t.match(reworded, { status: 'unreviewed', lastChange: { risk: 'low', findings: [{ tool: 'sum', kind: 'wording' }] } });
  t.not(reworded.pinDigest, first.pinDigest, 'the reworded set is the new pin');

  t.equal(resultText(await client.callTool({ name: 'rug_pull', arguments: {} })), 'changed');
  const held = await sum();
  t.equal(refusal(held), 'SERVER_HELD', 'the next call is refused');
  t.equal(held.isError, true);
  const queue = (await call('GET', '/mcp/servers?status=pending,held')).body.servers;
  t.match(queue, [{ name: 'calc', status: 'held', pinDigest: reworded.pinDigest, candidateDigest: /^[0-9a-f]{64}$/ }], 'back in the approval queue');
  const kinds = queue[0].lastChange.findings.filter((f: { highRisk: boolean }) => f.highRisk).map((f: { kind: string }) => f.kind).sort();
  t.same(kinds, ['new_destination', 'new_instructions', 'schema_widened'], 'what made it high risk');

  t.equal((await call('POST', '/mcp/servers/calc/approve', {}, dev.accessToken)).status, 403, 'a developer cannot approve');
  t.equal((await call('POST', '/mcp/servers/calc/approve', { digest: reworded.pinDigest })).status, 409, 'approving a tool set other than the one waiting');
  t.equal(refusal(await client.callTool({ name: 'reword', arguments: {} })), 'SERVER_HELD', 'every tool of the server waits');
  const approved = await call('POST', '/mcp/servers/calc/approve', { digest: queue[0].candidateDigest });
  t.match(approved.body, { status: 'approved', pinDigest: queue[0].candidateDigest, candidateDigest: null });
  t.equal(resultText(await sum()), '5', 'runs again once re-approved');

  const shipped = await waitFor('the call traces at the control plane', async () => {
    const traces = (await call('GET', '/traces?limit=100')).body.traces as Array<{ record: Record<string, any> }>;
    const mcp = traces.map((x) => x.record ?? x).filter((r: Record<string, any>) => r.route === 'mcp:tools/call');
    return mcp.length >= 7 ? mcp : undefined;
  });
  t.ok(shipped.some((r) => r.mcp.code === 'SERVER_HELD' && r.enforcement === 'KILL' && r.mcp.server === 'calc'), 'refusals are shipped like the proxy\'s traces');
  t.notOk(JSON.stringify(shipped).includes('"a":2'), 'never the arguments');
  // The local file is written on its own timer, independently of the shipping: waited for too.
  const kept = await waitFor('the call traces kept locally', () => (mcpTraces(home).length >= 7 ? mcpTraces(home) : undefined));
  t.ok(kept.some((r) => r.mcp.code === 'SERVER_HELD'), 'and kept locally');
});

t.test('mcpDefaultPolicy deny: an unapproved server waits in the queue; approve, switch a tool off, block', async (t) => {
  t.equal((await call('PUT', '/workspace/settings', { mcpDefaultPolicy: 'deny' })).status, 200);
  const { client } = await connectWrapped(t, { server: 'everything', command: [EVERYTHING], settings: { mcpDefaultPolicy: 'deny' }, env: linked });
  const echo = () => client.callTool({ name: 'echo', arguments: { message: 'hi' } });
  t.equal(refusal(await echo()), 'SERVER_NOT_APPROVED');
  const pending = (await call('GET', '/mcp/servers?status=pending')).body.servers;
  t.match(pending, [{ name: 'everything', status: 'pending' }], 'in the approval queue');
  t.ok(pending[0].tools.includes('echo'), 'with the tool set an approver reviews');

  t.equal((await call('POST', '/mcp/servers/everything/approve')).status, 200);
  t.equal(resultText(await echo()), 'Echo: hi', 'approved: the call runs');

  t.equal((await call('PUT', '/mcp/servers/everything/disabled-tools', { tools: ['echo'] })).status, 200);
  t.equal(await waitFor('echo switched off', async () => ((await refusal(await echo())) === 'TOOL_DISABLED' ? true : undefined)), true);
  t.equal(resultText(await client.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } })), 'The sum of 1 and 2 is 3.', 'other tools still run');

  t.equal((await call('POST', '/mcp/servers/everything/block')).status, 200);
  t.equal(await waitFor('the server blocked', async () => ((await refusal(await client.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } }))) === 'SERVER_BLOCKED' ? true : undefined)), true);
  t.equal((await call('PUT', '/workspace/settings', { mcpDefaultPolicy: 'allow' })).status, 200);
});

t.test('mcpProxyFailBehavior when the registry cannot be reached: closed refuses, open runs and notes it', async (t) => {
  const down = { ...linked, SVC_CONTROL_PLANE_URL: `http://127.0.0.1:${await freePort()}` };
  const closed = await connectWrapped(t, { server: 'everything', command: [EVERYTHING], settings: { mcpProxyFailBehavior: 'closed' }, env: down });
  const refused = await closed.client.callTool({ name: 'echo', arguments: { message: 'hi' } });
  t.equal(refusal(refused), 'GOVERNANCE_UNAVAILABLE');
  t.match(resultText(refused), /registry on the control plane cannot be reached/);
  const open = await connectWrapped(t, { server: 'everything', command: [EVERYTHING], settings: { mcpProxyFailBehavior: 'open' }, env: down });
  t.equal(resultText(await open.client.callTool({ name: 'echo', arguments: { message: 'hi' } })), 'Echo: hi');
  const trace = await waitFor('the trace', () => mcpTraces(open.home)[0]);
  t.match(trace.warnings, [/failing open \(mcpProxyFailBehavior\)/]);
});
