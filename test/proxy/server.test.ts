import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import t from 'tap';
import { startProxy } from '../helpers/proxy.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const MARKER = 'svc-in-flight-marker';

/**
 * An upstream that answers a stream's first event at once and the rest only when released: the
 * request stays in flight, past everything the proxy does before it relays.
 */
async function heldStream(t: Tap.Test): Promise<{ url: string; release(): void }> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n');
      void released.then(() => res.end('data: [DONE]\n\n'));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    release();
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, release };
}

t.test('a streamed request in flight keeps no part of its parsed body', async (t) => {
  const upstream = await heldStream(t);
  const proxy = await startProxy(t, { upstreamUrl: upstream.url });
  const parse = JSON.parse;
  let firstTurn: WeakRef<object> | null = null;
  JSON.parse = ((text: string, reviver?: Parameters<typeof parse>[1]) => {
    const value = parse(text, reviver) as { messages?: object[] };
    if (firstTurn === null && typeof text === 'string' && text.includes(MARKER) && Array.isArray(value.messages)) firstTurn = new WeakRef(value.messages[0]!);
    return value;
  }) as typeof JSON.parse;
  t.teardown(() => {
    JSON.parse = parse;
  });

  // A conversation with tools: its anomaly report names the session by the first turns.
  const res = await fetch(`${proxy.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'gpt-4o-mini',
      stream: true,
      messages: [
        { role: 'system', content: `You are a coding agent. ${MARKER} ${'Follow the repository conventions. '.repeat(200)}` },
        { role: 'user', content: 'List the files.' },
      ],
      tools: [{ type: 'function', function: { name: 'bash', description: 'Runs a shell command.', parameters: { type: 'object', properties: { command: { type: 'string' } } } } }],
    }),
  });
  t.equal(res.status, 200);
  const reader = res.body!.getReader();
  const first = await reader.read();
  t.notOk(first.done, 'the stream has begun while the upstream holds the rest');
  JSON.parse = parse;
  t.ok(firstTurn !== null, 'the proxy parsed the body');

  // A WeakRef holds its target until the current job ends.
  await nextTurn();
  gc();
  t.equal(firstTurn!.deref(), undefined, 'the first turn was collected while the response streams');

  upstream.release();
  while (!(await reader.read()).done);
});
