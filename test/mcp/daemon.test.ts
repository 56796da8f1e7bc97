import t from 'tap';
import { once } from 'node:events';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMcpDaemon } from '../../src/mcp/daemon/server.js';
import { MAX_LINE_BYTES } from '../../src/mcp/daemon/protocol.js';
import { createLogger } from '../../src/lib/logger.js';
import { writeSettings } from '../helpers/mcp.js';

const home = mkdtempSync(join(tmpdir(), 'svc-mcpd-unit-'));
t.teardown(() => rmSync(home, { recursive: true, force: true }));
const daemon = await startMcpDaemon({
  socket: join(home, 'd.sock'),
  configFile: writeSettings(home, { mcpAllowedTools: ['read'] }),
  home,
  failBehavior: 'closed',
  env: {},
  logger: createLogger('silent'),
  valkeyUrl: undefined,
  controlPlane: undefined,
  reloadMs: 60_000,
  reportIntervalMs: 60_000,
});
t.teardown(() => daemon.close());

/** A raw connection: send lines, read the replies. */
async function connect() {
  const socket = createConnection(daemon.socket);
  await once(socket, 'connect');
  let buffer = '';
  const replies: any[] = [];
  socket.on('data', (c: Buffer) => {
    buffer += c.toString();
    for (let at = buffer.indexOf('\n'); at !== -1; at = buffer.indexOf('\n')) {
      replies.push(JSON.parse(buffer.slice(0, at)));
      buffer = buffer.slice(at + 1);
    }
  });
  const next = async (count: number) => {
    while (replies.length < count) await once(socket, 'data');
    return replies.slice(0, count);
  };
  return { socket, send: (line: string) => socket.write(`${line}\n`), next };
}

t.test('the socket is for its user only', async (t) => {
  t.equal(statSync(daemon.socket).mode & 0o777, 0o600);
});

t.test('bad input gets an error reply and the connection goes on', async (t) => {
  const c = await connect();
  t.teardown(() => c.socket.destroy());
  c.send('not json');
  c.send('{"id":1,"op":"judge","tool":"read","ctx":{}}');
  c.send('{"id":2,"op":"review","tool":"read","result":{}}');
  c.send('{"id":3,"op":"hello","server":"fs","memberId":null}');
  c.send('{"id":4,"op":"judge","tool":"write","args":{"path":"x\\u0000y"},"ctx":{"workspace":"w","model":"","harness":null,"session":null,"traceId":"tr_1"}}');
  c.send('{"id":5,"op":"judge","tool":"read","ctx":{"workspace":"w","model":"","harness":null,"session":null,"traceId":"tr_2"}}');
  const [notJson, invalid, noHello, hello, refused, allowed] = await c.next(6);
  t.same(notJson, { id: null, ok: false, error: 'not JSON' });
  t.match(invalid, { id: 1, ok: false, error: /^not a request/ });
  t.match(noHello, { id: 2, ok: false, error: 'say hello first' });
  t.match(hello, { id: 3, ok: true, value: { workspaceId: 'local' } });
  t.match(refused, { id: 4, ok: true, value: { kind: 'refuse', code: 'TOOL_DISABLED' } });
  t.match(allowed, { id: 5, ok: true, value: { kind: 'forward', outcome: 'allow' } });
});

t.test('a message over the size limit ends the connection', async (t) => {
  const c = await connect();
  const closed = once(c.socket, 'close');
  c.socket.write(Buffer.alloc(MAX_LINE_BYTES + 1024, 0x61));
  await closed;
  t.pass('closed');
});
