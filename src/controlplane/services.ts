import type { Logger } from '../lib/logger.js';
import type { PasswordHasher } from './auth/passwords.js';
import type { TokenIssuer } from './auth/tokens.js';
import type { UpstreamGuard } from './credentials/egress.js';
import type { Database, Queryable } from './db/database.js';
import type { Deliveries } from './delivery/dispatcher.js';
import type { HookGateRules } from './hook-gate/rules.js';
import type { Mailer } from './mail/mailer.js';
import type { SecretBox } from './secrets.js';
import type { Throttle } from './throttle/throttle.js';

export interface ControlPlaneSettings {
  /** Off: signup and register answer 503 SIGNUP_DISABLED. */
  readonly signupEnabled: boolean;
  /** Sends every provider credential check to this base URL instead of the provider's own (tests, air-gapped mirrors). */
  readonly providerBaseUrl: string | undefined;
  readonly refreshTtlSeconds: number;
  /** Credential checks may call loopback, private and link-local addresses (never cloud metadata ones). */
  readonly allowPrivateUpstreams?: boolean;
  /** How long an email verification token stays valid. Default 24 hours. */
  readonly verificationTtlSeconds?: number;
}

/** Closes the sync sockets that authenticated with credentials that no longer hold. */
export interface SocketRevoker {
  sessionsEnded(sessionIds: readonly string[]): void;
  keysRevoked(keyIds: readonly string[]): void;
  gatewayTokensEnded(gatewayId: string, keepTokenHash?: string): void;
}

/** Everything a route handler uses. */
export interface Services {
  readonly db: Database;
  readonly secrets: SecretBox;
  readonly tokens: TokenIssuer;
  readonly passwords: PasswordHasher;
  readonly throttle: Throttle;
  readonly mailer: Mailer;
  readonly upstreams: UpstreamGuard;
  readonly sockets: SocketRevoker;
  readonly logger: Logger;
  readonly settings: ControlPlaneSettings;
  /** The control plane's clock (ms since the epoch): hold, incident and delivery times; tests move it. */
  readonly clock: () => number;
  /** The workspaces' rules as the hook gate judges with them. */
  readonly hookGateRules: HookGateRules;
  /** Notification and SIEM delivery. */
  readonly deliveries: Deliveries;
  /**
   * Runs `change` in one transaction, bumps the workspace's config version in it and, once it has
   * committed, announces the new version to the workspace's gateways.
   */
  changeConfig<T>(workspaceId: string, change: (tx: Queryable) => Promise<T>): Promise<{ result: T; version: number }>;
}
