import type { Logger } from '../lib/logger.js';
import type { TokenIssuer } from './auth/tokens.js';
import type { Database, Queryable } from './db/database.js';
import type { SecretBox } from './secrets.js';

export interface ControlPlaneSettings {
  /** Off: signup and register answer 503 SIGNUP_DISABLED. */
  readonly signupEnabled: boolean;
  /** Sends every provider credential check to this base URL instead of the provider's own (tests, air-gapped mirrors). */
  readonly providerBaseUrl: string | undefined;
  readonly refreshTtlSeconds: number;
}

/** Everything a route handler uses. */
export interface Services {
  readonly db: Database;
  readonly secrets: SecretBox;
  readonly tokens: TokenIssuer;
  readonly logger: Logger;
  readonly settings: ControlPlaneSettings;
  /**
   * Runs `change` in one transaction, bumps the workspace's config version in it and, once it has
   * committed, announces the new version to the workspace's gateways.
   */
  changeConfig<T>(workspaceId: string, change: (tx: Queryable) => Promise<T>): Promise<{ result: T; version: number }>;
}
