import t from 'tap';
import { Client } from 'undici';
import { startMockProvider } from '../../../bench/mock/provider.js';
import { api } from '../../helpers/controlplane.js';
import { holdsWorkspace } from '../../helpers/holds.js';
import { spawnProxy, type SpawnedProxy } from '../../helpers/proxy.js';
import { until } from '../../helpers/until.js';

t.setTimeout(600_000);

// Holds through a proxy of two I/O threads: a call held on one thread is approved once, and the
// identical call then goes through on either thread; a blocked call names its incident.

const { cp, owner, em, dev, gateway, wasmDir } = await holdsWorkspace(t);
const mock = await startMockProvider();
t.teardown(() => mock.close());
const proxy = await spawnProxy(
  t,
  ['--io-threads', '2', '--threads', '1', '--control-plane-url', cp.url, '--api-key', owner.apiKey, '--gateway-id', gateway, '--upstream-url', mock.url],
  { SVC_HOME: t.testdir(), SVC_WASM_DIR: wasmDir, SVC_SYNC_POLL_MS: '60000' },
);

const tools = [{ type: 'function', function: { name: 'bash', description: 'Run a shell command', parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] } } }];

/** Asks for a completion that calls bash with `command`, on a connection of its own (so on either thread). */
async function ask(to: SpawnedProxy, command: string) {
  const client = new Client(to.url, { pipelining: 0 });
  try {
    const res = await client.request({
      path: '/v1/chat/completions',
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${dev.apiKey}`, 'x-mock-tool-args': JSON.stringify({ command }) },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'go' }], tools }),
    });
    const body = (await res.body.json()) as { choices: Array<{ message: { content: string | null; tool_calls?: unknown[] } }> };
    const message = body.choices[0]!.message;
    const text = message.content ?? '';
    return { ran: message.tool_calls?.length === 1, text, holdId: /\(hold (hold_[0-9A-Z]+)\)/.exec(text)?.[1], incidentId: /Incident (inc_[0-9A-Z]+)/.exec(text)?.[1] };
  } finally {
    await client.close();
  }
}

const PUSH = 'git push --force origin main';

t.test('a call held on one thread, approved once, goes through on every thread', async (t) => {
  const held = await ask(proxy, PUSH);
  t.notOk(held.ran);
  t.ok(held.holdId, `held as ${held.holdId}`);
  const hold = (await api(cp, 'GET', `/decisions/${held.holdId}`, { token: owner.accessToken })).body;
  t.match(hold, { state: 'held', rule: 'force-push', requesterMemberId: dev.memberId, gatewayId: gateway });

  const asked = await Promise.all(Array.from({ length: 8 }, () => ask(proxy, PUSH)));
  t.same(new Set(asked.map((a) => a.holdId)), new Set([held.holdId]), 'asked again on either thread: the same pending hold');

  t.equal((await api(cp, 'POST', `/decisions/${held.holdId}/review`, { token: em.apiKey, body: { decision: 'approve' } })).status, 200);
  const retried = await Promise.all(Array.from({ length: 12 }, () => ask(proxy, PUSH)));
  t.same(
    retried.map((r) => r.ran),
    Array(12).fill(true),
    'the identical call now reaches the agent, whichever thread answers',
  );
  await until('the bypass events', async () => {
    const rows = await cp.db.query<{ hold_id: string }>("SELECT hold_id FROM hook_events WHERE type = 'hold_approved_bypass_used'");
    return rows.length > 0 ? rows : undefined;
  });
  const health = JSON.parse(await (await fetch(`${proxy.url}/health`)).text()) as { ioThreads: Array<{ requests: number }> };
  t.ok(health.ioThreads.length === 2 && health.ioThreads.every((thread) => thread.requests > 0), 'both threads took requests');
});

t.test('a blocked call names the incident the control plane opened for it, on either thread', async (t) => {
  const blocked = await Promise.all(Array.from({ length: 6 }, () => ask(proxy, 'sudo rm -rf /')));
  for (const b of blocked) {
    t.match(b.text, /^\[Svc Governance\] BLOCKED: the bash tool call was blocked by rule destructive-shell: .* It was not run\. Incident inc_\w+\.$/);
  }
  const incident = (await api(cp, 'GET', `/incidents/${blocked[0]!.incidentId}`, { token: owner.accessToken })).body;
  t.match(incident, { kind: 'block', rule: 'destructive-shell', state: 'open' });
});
