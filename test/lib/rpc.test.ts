import t from 'tap';
import { MessageChannel } from 'node:worker_threads';
import { RemoteCallError, RpcChannel } from '../../src/lib/rpc.js';

class LedgerDown extends Error {}

interface ServerApi {
  [method: string]: (...args: never[]) => unknown;
  add(a: number, b: number): number;
  slow(ms: number): Promise<string>;
  fail(): never;
  failCoded(): never;
  remember(value: string): void;
  seen(): string[];
}

function pair(t: Tap.Test) {
  const { port1, port2 } = new MessageChannel();
  const seen: string[] = [];
  const server = new RpcChannel(port2, {
    add: (a: number, b: number) => a + b,
    slow: (ms: number) => new Promise((resolve) => setTimeout(() => resolve(`after ${ms}`), ms)),
    fail: () => {
      throw new LedgerDown('the ledger cannot tell');
    },
    failCoded: () => {
      throw Object.assign(new Error('refused'), { code: 'cap_reached' });
    },
    remember: (value: string) => void seen.push(value),
    seen: () => seen,
  } satisfies ServerApi);
  const client = new RpcChannel<ServerApi>(port1, {});
  t.teardown(() => {
    client.close();
    server.close();
    port1.close();
    port2.close();
  });
  return { client, server, seen };
}

t.test('calls answer with the handler\'s value, awaited, each matched to its own call', async (t) => {
  const { client } = pair(t);
  const answers = await Promise.all([client.call('slow', 30), client.call('add', 2, 3), client.call('add', 40, 2)]);
  t.same(answers, ['after 30', 5, 42]);
});

t.test('a failure comes back as a RemoteCallError with the message, code and error name', async (t) => {
  const { client } = pair(t);
  const plain = await client.call('fail').catch((e: unknown) => e);
  t.type(plain, RemoteCallError);
  t.match(plain, { method: 'fail', remoteMessage: 'the ledger cannot tell', remoteName: 'LedgerDown', code: undefined });
  t.match(await client.call('failCoded').catch((e: unknown) => e), { code: 'cap_reached', remoteMessage: 'refused' });
  t.match(await client.call('nope' as 'add', 1, 2).catch((e: unknown) => e), { code: 'no_such_method' });
});

t.test('notifications and calls arrive in the order they were sent, batched per turn', async (t) => {
  const { client, seen } = pair(t);
  for (let i = 0; i < 100; i++) client.notify('remember', `n${i}`);
  const order = await client.call('seen');
  t.equal(order.length, 100, 'every notification before the call sent after them');
  t.same(order.slice(0, 3), ['n0', 'n1', 'n2']);
  t.same(seen.at(-1), 'n99');
});

t.test('closing rejects calls pending and later ones; nothing is sent after', async (t) => {
  const { client } = pair(t);
  const pending = client.call('slow', 200);
  client.close('the thread stopped');
  t.match(await pending.catch((e: unknown) => e), { code: 'channel_closed', remoteMessage: 'the thread stopped' });
  t.match(await client.call('add', 1, 1).catch((e: unknown) => e), { code: 'channel_closed' });
});

t.test('messages that are not the channel\'s are left alone', async (t) => {
  const { port1, port2 } = new MessageChannel();
  const client = new RpcChannel<ServerApi>(port1, {});
  const server = new RpcChannel(port2, { add: (a: number, b: number) => a + b });
  t.teardown(() => {
    client.close();
    server.close();
    port1.close();
    port2.close();
  });
  port1.postMessage('hello');
  port1.postMessage({ other: true });
  t.equal(await client.call('add', 1, 2), 3);
});
