import type { TemplatedApp, WebSocket } from '@trufflesuite/uws-js-unofficial';
import type { Principal } from '../auth/principal.js';

interface SocketData {
  workspaceId: string;
  principal: Principal;
}

/** What a gateway's socket receives: the workspace's config version, on connect and on every change. */
export interface ConfigAnnouncement {
  type: 'config';
  workspaceId: string;
  version: number;
}

const topic = (workspaceId: string) => `config/${workspaceId}`;

/** The close code of a socket whose credential ended (1008, policy violation, as for a refused one). */
export const CREDENTIAL_ENDED = 1008;

const credentialOf = (p: Principal): string =>
  p.gateway !== undefined ? `gateway:${p.gateway.id}:${p.gateway.tokenHash}` : p.keyId !== undefined ? `key:${p.keyId}` : `session:${p.sessionId}`;

export interface AnnouncerOptions {
  /**
   * How often every open socket's credential is checked again, so one revoked through another
   * control-plane process (sharing the database) closes too. Default 30 s; 0 turns it off.
   */
  recheckIntervalMs?: number;
}

/**
 * The push side of config sync. Gateways hold a WebSocket open at /api/v1/sync/ws (authenticated
 * like any request); each config version bump is published to the workspace's topic at once.
 * A socket lives only as long as its credential: logging the session out, signing it out by a
 * password change or revoking the key closes it at once, and a periodic check catches the rest.
 */
export class ConfigAnnouncer {
  private readonly sockets = new Map<string, Set<WebSocket<SocketData>>>();
  private recheckTimer: NodeJS.Timeout | undefined;
  private rechecking = false;

  constructor(
    private readonly app: TemplatedApp,
    private readonly options: AnnouncerOptions = {},
  ) {}

  /**
   * Registers the socket route. `authenticate` resolves the Authorization header (or the `token`
   * query parameter, for clients that cannot set headers), `currentVersion` the version sent on
   * open, `holds` whether a socket's credential still stands.
   */
  attach(
    path: string,
    authenticate: (authorization: string) => Promise<Principal | undefined>,
    currentVersion: (workspaceId: string) => Promise<number>,
    holds: (principal: Principal) => Promise<boolean>,
  ): void {
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
              else res.upgrade<SocketData>({ workspaceId: principal.workspaceId, principal }, key, protocol, extensions, context);
            });
          },
          () => !aborted && res.cork(() => res.writeStatus('500 Internal Server Error').end()),
        );
      },
      open: (ws: WebSocket<SocketData>) => {
        const { workspaceId, principal } = ws.getUserData();
        const credential = credentialOf(principal);
        let set = this.sockets.get(credential);
        if (set === undefined) this.sockets.set(credential, (set = new Set()));
        set.add(ws);
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
        // The credential may have ended between the upgrade and now.
        void holds(principal).then((ok) => ok || this.closeCredential(credential, 'credential ended'), () => undefined);
      },
      close: (ws: WebSocket<SocketData>) => {
        const credential = credentialOf(ws.getUserData().principal);
        const set = this.sockets.get(credential);
        set?.delete(ws);
        if (set?.size === 0) this.sockets.delete(credential);
      },
    });
    const interval = this.options.recheckIntervalMs ?? 30_000;
    if (interval > 0) {
      this.recheckTimer = setInterval(() => void this.recheck(holds), interval);
      this.recheckTimer.unref();
    }
  }

  announce(workspaceId: string, version: number): void {
    this.app.publish(topic(workspaceId), JSON.stringify({ type: 'config', workspaceId, version } satisfies ConfigAnnouncement));
  }

  /** Closes the sockets of these login sessions (logged out, signed out). */
  sessionsEnded(sessionIds: readonly string[]): void {
    for (const id of sessionIds) this.closeCredential(`session:${id}`, 'session ended');
  }

  /** Closes the sockets of these keys (revoked). */
  keysRevoked(keyIds: readonly string[]): void {
    for (const id of keyIds) this.closeCredential(`key:${id}`, 'key revoked');
  }

  /** Closes the sockets of a revoked gateway, or of every token of it but `keepTokenHash` (rotated). */
  gatewayTokensEnded(gatewayId: string, keepTokenHash?: string): void {
    for (const credential of [...this.sockets.keys()]) {
      if (credential.startsWith(`gateway:${gatewayId}:`) && credential !== `gateway:${gatewayId}:${keepTokenHash}`) this.closeCredential(credential, 'gateway token ended');
    }
  }

  /** Sockets open now. */
  get openCount(): number {
    let n = 0;
    for (const set of this.sockets.values()) n += set.size;
    return n;
  }

  stop(): void {
    clearInterval(this.recheckTimer);
  }

  private closeCredential(credential: string, reason: string): void {
    const set = this.sockets.get(credential);
    if (set === undefined) return;
    this.sockets.delete(credential);
    for (const ws of set) {
      try {
        ws.end(CREDENTIAL_ENDED, reason);
      } catch {
        // already closed
      }
    }
  }

  private async recheck(holds: (principal: Principal) => Promise<boolean>): Promise<void> {
    if (this.rechecking) return;
    this.rechecking = true;
    try {
      for (const [credential, set] of [...this.sockets]) {
        const first = set.values().next().value;
        if (first === undefined) continue;
        let principal: Principal;
        try {
          principal = first.getUserData().principal;
        } catch {
          continue;
        }
        if (!(await holds(principal).catch(() => true))) this.closeCredential(credential, 'credential ended');
      }
    } finally {
      this.rechecking = false;
    }
  }
}
