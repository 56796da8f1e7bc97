import { createServer, type AddressInfo } from 'node:net';
import uWS, { type TemplatedApp, type us_listen_socket } from '@trufflesuite/uws-js-unofficial';
import { ListenError } from './errors.js';

// The build in use has this overload and constant at runtime; its typings only declare the
// options argument without a host, and the constant as a member of an enum it does not export.
declare module '@trufflesuite/uws-js-unofficial' {
  export const LIBUS_LISTEN_EXCLUSIVE_PORT: number;
  interface TemplatedApp {
    listen(host: RecognizedString, port: number, options: number, cb: (listenSocket: us_listen_socket | false) => void): TemplatedApp;
  }
}

/**
 * Binds `app` to host:port for this process alone. uWS otherwise sets SO_REUSEPORT, so a second
 * server on a taken port would "listen" too and take a share of its connections.
 */
export function listenExclusive(app: TemplatedApp, host: string, port: number): Promise<us_listen_socket> {
  return listen(app, host, port, uWS.LIBUS_LISTEN_EXCLUSIVE_PORT);
}

/**
 * Binds `app` to host:port alongside the process's other I/O threads (SO_REUSEPORT): the kernel
 * spreads connections over them. The port is taken for this process first with `claimPort`.
 */
export function listenShared(app: TemplatedApp, host: string, port: number): Promise<us_listen_socket> {
  return listen(app, host, port, 0);
}

function listen(app: TemplatedApp, host: string, port: number, options: number): Promise<us_listen_socket> {
  return new Promise((resolve, reject) => {
    app.listen(host, port, options, (socket) => {
      if (socket) resolve(socket);
      else void bindProbe(host, port).then(
        () => reject(new ListenError(host, port, 'the address could not be bound')),
        (reason: string) => reject(new ListenError(host, port, reason)),
      );
    });
  });
}

/**
 * Checks that host:port is free for this process (port 0: picks one) and returns the port. Shared
 * listeners bind it next; a socket already on the port, even another proxy's shared one, fails
 * this check, so two proxies never split one port's connections.
 */
export function claimPort(host: string, port: number): Promise<number> {
  return bindProbe(host, port).catch((reason: string) => Promise.reject(new ListenError(host, port, reason)));
}

const REASONS: Readonly<Record<string, string>> = {
  EADDRINUSE: 'the port is already in use',
  EADDRNOTAVAIL: 'the address is not one of this machine\'s',
  EACCES: 'permission denied',
};

/**
 * Binds host:port with node:net and lets it go: the port bound, or why it could not be bound (uWS
 * reports no errno).
 */
function bindProbe(host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => reject(REASONS[err.code ?? ''] ?? err.code ?? 'unknown error'));
    probe.listen({ host, port, exclusive: true }, () => {
      const bound = (probe.address() as AddressInfo).port;
      probe.close(() => resolve(bound));
    });
  });
}
