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
