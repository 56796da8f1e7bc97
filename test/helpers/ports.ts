import { once } from 'node:events';
import { createServer } from 'node:net';
import uWS from '@trufflesuite/uws-js-unofficial';

interface Teardown {
  teardown(fn: () => unknown): void;
}

/**
 * A port held, until the test ends, by a uWS server listening the default way (SO_REUSEPORT),
 * as a second gateway built on uWS would: a server that does not insist on the port alone
 * would bind it too.
 */
export async function occupiedPort(t: Teardown): Promise<number> {
  const port = await new Promise<number>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
  const app = uWS.App();
  const socket = await new Promise<uWS.us_listen_socket>((resolve, reject) =>
    app.listen('127.0.0.1', port, (s) => (s ? resolve(s) : reject(new Error(`port ${port} was taken meanwhile`)))),
  );
  t.teardown(() => {
    uWS.us_listen_socket_close(socket);
    (app as uWS.TemplatedApp & { close(): void }).close();
  });
  return port;
}

/** A port nothing listens on (free when asked; a test binds it next or uses it as an address that refuses). */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
