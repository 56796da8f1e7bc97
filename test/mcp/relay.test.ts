import t from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { buildRuntimeConfig } from '../../src/config/runtime.js';
import { createLogger } from '../../src/lib/logger.js';
import { McpGovernance } from '../../src/mcp/governance.js';
import { LocalSession } from '../../src/mcp/governed-session.js';
import { MemoryStore } from '../../src/state/index.js';
import { McpRelay } from '../../src/mcp/relay.js';
import type { TraceRecord } from '../../src/traces/trace.js';

/** A client and a server with the relay between them, over in-memory transports. */
async function relayed(t: Tap.Test, settings: Record<string, unknown>, register: (server: McpServer) => void) {
  const [clientSide, harnessSide] = InMemoryTransport.createLinkedPair();
  const [serverLink, serverSide] = InMemoryTransport.createLinkedPair();
  const server = new McpServer({ name: 's', version: '1' });
  register(server);
  await server.connect(serverSide);
  const traces: TraceRecord[] = [];
  const governance = new McpGovernance('s', { ok: true, config: buildRuntimeConfig({ file: { settings } }) }, {}, new MemoryStore());
  new McpRelay({ harness: harnessSide, server: serverLink, policy: new LocalSession(governance), record: (r) => traces.push(r), logger: createLogger('silent'), session: 'sess', harnessName: 'test' });
  await serverLink.start();
  await harnessSide.start();
  const client = new Client({ name: 'c', version: '1' }, { capabilities: { sampling: {}, elicitation: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({ role: 'assistant', content: { type: 'text', text: 'sampled answer' }, model: 'm' }));
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Ana' } }));
  await client.connect(clientSide);
  t.teardown(async () => {
    await client.close();
    await server.close();
  });
  return { client, traces };
}

t.test('the server\'s own requests (sampling, elicitation) reach the harness and their answers come back', async (t) => {
  const { client, traces } = await relayed(t, {}, (server) => {
    server.registerTool('ask', { inputSchema: { q: z.string() } }, async ({ q }) => {
      const sampled = await server.server.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: q } }], maxTokens: 10 });
      const elicited = await server.server.elicitInput({ message: 'name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } });
      return { content: [{ type: 'text', text: `${(sampled.content as { text: string }).text} / ${String(elicited.content?.name)}` }] };
    });
  });
  const result = await client.callTool({ name: 'ask', arguments: { q: 'hi' } });
  t.same(result.content, [{ type: 'text', text: 'sampled answer / Ana' }]);
  t.match(traces, [{ session: 'sess', harness: 'test', mcp: { server: 's', tool: 'ask', verdict: 'allow' } }]);
});

t.test('a cancellation reaches the server after the call it cancels, and the call is traced as cancelled', async (t) => {
  let aborted!: () => void;
  const abortSeen = new Promise<void>((resolve) => (aborted = resolve));
  const { client, traces } = await relayed(t, { mcpAllowedTools: ['slow'] }, (server) => {
    server.registerTool('slow', {}, async (extra) => {
      await new Promise<void>((resolve) => extra.signal.addEventListener('abort', () => resolve()));
      aborted();
      return { content: [] };
    });
  });
  const controller = new AbortController();
  const call = client.callTool({ name: 'slow', arguments: {} }, undefined, { signal: controller.signal });
  controller.abort('enough');
  await t.rejects(call);
  await abortSeen;
  t.pass('the server saw the cancellation');
  t.match(traces, [{ mcp: { tool: 'slow', verdict: 'failed' }, warnings: ['cancelled by the harness'] }]);
});
