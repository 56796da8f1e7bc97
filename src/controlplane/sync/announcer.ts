import type { TemplatedApp, WebSocket } from '@trufflesuite/uws-js-unofficial';
import type { Principal } from '../auth/principal.js';

interface SocketData {
  workspaceId: string;
}

/** What a gateway's socket receives: the workspace's config version, on connect and on every change. */
export interface ConfigAnnouncement {
  type: 'config';
  workspaceId: string;
  version: number;
}

const topic = (workspaceId: string) => `config/${workspaceId}`;

/**
 * The push side of config sync. Gateways hold a WebSocket open at /api/v1/sync/ws (authenticated
 * like any request); each config version bump is published to the workspace's topic at once.
 */
export class ConfigAnnouncer {
  constructor(private readonly app: TemplatedApp) {}

  /**
   * Registers the socket route. `authenticate` resolves the Authorization header (or the `token`
   * query parameter, for clients that cannot set headers) and `currentVersion` the version sent on open.
   */
  attach(path: string, authenticate: (authorization: string) => Promise<Principal | undefined>, currentVersion: (workspaceId: string) => Promise<number>): void {
    this.app.ws<SocketData>(path, {
      idleTimeout: 60,
      sendPingsAutomatically: true,
      upgrade: (res, req, context) => {
        const token = new URLSearchParams(req.getQuery() ?? '').get('token');
        const authorization = req.getHeader('authorization') || (token ? `Bearer ${token}` : '');
        const key = req.getHeader('sec-websocket-key');
        const protocol = req.getHeader('sec-websocket-protocol');
        const extensions = req.getHeader('sec-websocket-extensions');
        let aborted = false;
        res.onAborted(() => (aborted = true));
        void authenticate(authorization).then(
          (principal) => {
            if (aborted) return;
            res.cork(() => {
              if (principal === undefined) res.writeStatus('401 Unauthorized').end();
              else res.upgrade<SocketData>({ workspaceId: principal.workspaceId }, key, protocol, extensions, context);
            });
          },
          () => !aborted && res.cork(() => res.writeStatus('500 Internal Server Error').end()),
        );
      },
      open: (ws: WebSocket<SocketData>) => {
        const { workspaceId } = ws.getUserData();
        ws.subscribe(topic(workspaceId));
        void currentVersion(workspaceId).then(
          (version) => {
            try {
              ws.send(JSON.stringify({ type: 'config', workspaceId, version } satisfies ConfigAnnouncement));
            } catch {
              // closed before the version was read
            }
          },
          () => undefined,
        );
      },
    });
  }

  announce(workspaceId: string, version: number): void {
    this.app.publish(topic(workspaceId), JSON.stringify({ type: 'config', workspaceId, version } satisfies ConfigAnnouncement));
  }
}
