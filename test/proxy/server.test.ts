import { setImmediate as nextTurn } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import t from 'tap';
import { startMockProvider } from '../../bench/mock/provider.js';
import { startProxy } from '../helpers/proxy.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const MARKER = 'svc-in-flight-marker';

t.test('a streamed request in flight keeps no part of its parsed body', async (t) => {
  const mock = await startMockProvider();
  t.teardown(() => mock.close());
  const proxy = await startProxy(t, { upstreamUrl: mock.url });
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

  // A conversation with tools: its anomaly report names the session by the first turns. The
  // provider waits a minute between events, so the request stays in flight past everything the
  // proxy does before it relays.
  const res = await fetch(`${proxy.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-mock-chunks': '3', 'x-mock-chunk-delay-ms': '60000' },
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
  t.notOk(first.done, 'the stream has begun while the provider holds the rest');
  JSON.parse = parse;
  t.ok(firstTurn !== null, 'the proxy parsed the body');

  // A WeakRef holds its target until the current job ends.
  await nextTurn();
  gc();
  t.equal(firstTurn!.deref(), undefined, 'the first turn was collected while the response streams');
  await reader.cancel();
});
