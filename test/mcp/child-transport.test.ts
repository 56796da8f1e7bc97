import t from 'tap';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { ChildProcessTransport } from '../../src/mcp/child-transport.js';

const notices = [1, 2, 3].map((n) => ({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: `notice ${n}` } }));

t.test('what the server sent before anyone listened reaches the first listener, in order', async (t) => {
  const script = `for (const m of ${JSON.stringify(notices)}) process.stdout.write(JSON.stringify(m) + '\\n');`;
  const child = new ChildProcessTransport({ command: process.execPath, args: ['-e', script], env: process.env });
  await child.start();
  // Closed: every line it wrote has been read, with no one listening.
  t.same(await child.exited, { code: 0, signal: null });
  const heard: JSONRPCMessage[] = [];
  child.onmessage = (message) => heard.push(message);
  t.same(heard, notices);
  const later: JSONRPCMessage[] = [];
  child.onmessage = (message) => later.push(message);
  t.same(later, [], 'handed over once, to the first listener');
});

t.test('a server that floods its output before anyone listens has the excess dropped, each drop reported', async (t) => {
  const script = `const line = JSON.stringify(${JSON.stringify(notices[0])}) + '\\n'; process.stdout.write(line.repeat(1003));`;
  const child = new ChildProcessTransport({ command: process.execPath, args: ['-e', script], env: process.env });
  const errors: string[] = [];
  child.onerror = (err) => errors.push(err.message);
  await child.start();
  await child.exited;
  const heard: JSONRPCMessage[] = [];
  child.onmessage = (message) => heard.push(message);
  t.equal(heard.length, 1000, 'the first thousand are kept');
  t.equal(errors.length, 3);
  t.match(errors[0], /more than 1000 messages before the wrapper listened/);
});
