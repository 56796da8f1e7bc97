import { createConnection, createServer, type Server, type Socket } from 'node:net';

interface Teardown {
  teardown(fn: () => unknown): void;
}

/**
 * A TCP relay to `target` that a test can cut and restore, so a client sees the service behind
 * it become unreachable (connection refused) and come back on the same address.
 */
export class SwitchableLink {
  port = 0;
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly target: { host: string; port: number }) {}

  static async open(t: Teardown, target: { host: string; port: number }): Promise<SwitchableLink> {
    const link = new SwitchableLink(target);
    await link.up();
    t.teardown(() => link.down());
    return link;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  up(): Promise<void> {
    const server = createServer((client) => {
      const upstream = createConnection(this.target);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    this.server = server;
    return new Promise((resolve, reject) => {
      // Reopening on the same port can fail if another process took it meanwhile: say so, do not hang.
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => {
        this.port = (server.address() as { port: number }).port;
        resolve();
      });
    });
  }

  /** Refuses new connections and cuts the open ones. */
  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    if (server !== undefined) await new Promise((resolve) => server.close(resolve));
  }
}
