import { WebSocket } from 'undici';
import { ControlPlaneApi, ControlPlaneHttpError } from './control-plane-api.js';
import { ConfigError } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';
import type { LastGoodConfig } from './last-good.js';
import { describeZodError } from './zod-error.js';
import { gatewayConfigDocumentSchema, type ConfigAck, type GatewayConfigDocument, type Heartbeat } from './sync-document.js';

export interface ConfigSyncOptions {
  /** Base URL of the control plane, without /api/v1. */
  controlPlaneUrl: string;
  apiKey: string;
  gatewayId: string;
  lastGood: LastGoodConfig;
  /** Fallback poll when no push arrives (30 s in production). */
  pollIntervalMs: number;
  heartbeatIntervalMs: number;
  /** Turns a document into the live config; throws or rejects (a ConfigError) to reject it. */
  apply(document: GatewayConfigDocument): void | Promise<void>;
  /** Counters sent with each heartbeat. */
  heartbeat(): Omit<Heartbeat, 'configVersion'>;
  logger: Logger;
  /** How long one call to the control plane may take. */
  requestTimeoutMs?: number;
}

export { ControlPlaneHttpError };

const MAX_RECONNECT_MS = 30_000;

/**
 * The proxy's side of config sync. It pulls the gateway's config at start, then whenever the
 * control plane announces a new version on the WebSocket, and on a poll as a fallback (also
 * after each heartbeat that reports a version it does not serve). Each new document is validated,
 * applied, persisted as the last good config and acknowledged applied or rejected.
 */
export class ConfigSyncClient {
  private appliedVersion: number | undefined;
  private etag: string | undefined;
  private pulling: Promise<void> | undefined;
  private pullAgain = false;
  private socket: WebSocket | undefined;
  private reconnectDelayMs = 500;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private readonly timers: NodeJS.Timeout[] = [];
  private closed = false;
  private api: ControlPlaneApi | undefined;

  constructor(private readonly options: ConfigSyncOptions) {}

  get version(): number | undefined {
    return this.appliedVersion;
  }

  /**
   * The first config: from the control plane, or the last good one when the control plane cannot
   * be reached. Throws when neither is available or the control plane refuses this gateway.
   */
  async start(): Promise<'control-plane' | 'last-good'> {
    let unreachable: string | undefined;
    try {
      await this.pullOnce();
    } catch (err) {
      if (err instanceof ControlPlaneHttpError && err.status < 500) throw new ConfigError(err.message);
      unreachable = (err as Error).message;
    }
    const source = this.appliedVersion === undefined ? 'last-good' : 'control-plane';
    if (source === 'last-good') {
      const why = unreachable === undefined ? 'the config from the control plane was rejected' : `the control plane is unreachable (${unreachable})`;
      const loaded = await this.options.lastGood.load();
      const saved = loaded?.document.gatewayId === this.options.gatewayId ? loaded : undefined;
      if (saved === undefined) throw new ConfigError(`${why} and no last good config is saved`);
      await this.options.apply(saved.document);
      this.appliedVersion = saved.document.version;
      this.options.logger.warn({ why, version: saved.document.version, savedAt: saved.savedAt }, 'serving the last good config');
    }
    this.connect();
    this.timers.push(setInterval(() => void this.pull(), this.options.pollIntervalMs));
    this.timers.push(setInterval(() => void this.sendHeartbeat(), this.options.heartbeatIntervalMs));
    for (const timer of this.timers) timer.unref();
    void this.sendHeartbeat();
    return source;
  }

  /** Pulls now; concurrent calls share one pull, and a call during a pull runs one more after it. */
  pull(): Promise<void> {
    if (this.pulling !== undefined) {
      this.pullAgain = true;
      return this.pulling;
    }
    this.pulling = (async () => {
      do {
        this.pullAgain = false;
        try {
          await this.pullOnce();
        } catch (err) {
          this.options.logger.warn({ err: (err as Error).message }, 'config pull failed; keeping the current config');
        }
      } while (this.pullAgain && !this.closed);
    })().finally(() => (this.pulling = undefined));
    return this.pulling;
  }

  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    clearTimeout(this.reconnectTimer);
    this.socket?.close();
  }

  private async pullOnce(): Promise<void> {
    const res = await this.call('GET', 'config', undefined, this.etag === undefined ? {} : { 'if-none-match': this.etag });
    if (res.status === 304) return;
    const raw = JSON.parse(res.text) as { version?: unknown };
    const parsed = gatewayConfigDocumentSchema.safeParse(raw);
    const etag = typeof res.etag === 'string' ? res.etag : undefined;
    if (!parsed.success) {
      const version = raw.version;
      await this.ack({ version: typeof version === 'number' && version >= 1 ? Math.floor(version) : 1, status: 'rejected', reason: `invalid config: ${describeZodError(parsed.error)}`.slice(0, 2000) });
      this.etag = etag;
      return;
    }
    const document = parsed.data;
    if (document.version === this.appliedVersion) {
      this.etag = etag;
      return;
    }
    try {
      await this.options.apply(document);
    } catch (err) {
      this.etag = etag;
      this.options.logger.error({ version: document.version, err: (err as Error).message }, 'config from the control plane rejected');
      await this.ack({ version: document.version, status: 'rejected', reason: (err as Error).message.slice(0, 2000) });
      return;
    }
    this.appliedVersion = document.version;
    this.etag = etag;
    this.options.logger.info({ version: document.version }, 'config from the control plane applied');
    await this.options.lastGood.save(document).catch((err: unknown) => this.options.logger.error({ err }, 'could not save the last good config'));
    await this.ack({ version: document.version, status: 'applied' });
  }

  private async ack(ack: ConfigAck): Promise<void> {
    await this.call('POST', 'config-ack', ack).catch((err: unknown) => this.options.logger.warn({ err: (err as Error).message }, 'config ack failed'));
  }

  private async sendHeartbeat(): Promise<void> {
    try {
      const res = await this.call('POST', 'heartbeat', { ...this.options.heartbeat(), configVersion: this.appliedVersion ?? 0 });
      const current = (JSON.parse(res.text) as { configVersion?: number }).configVersion;
      if (current !== undefined && current !== this.appliedVersion) void this.pull();
    } catch (err) {
      this.options.logger.warn({ err: (err as Error).message }, 'heartbeat to the control plane failed');
    }
  }

  private async call(method: 'GET' | 'POST', what: string, body?: unknown, headers: Record<string, string> = {}) {
    this.api ??= new ControlPlaneApi({ controlPlaneUrl: this.options.controlPlaneUrl, apiKey: this.options.apiKey, timeoutMs: this.options.requestTimeoutMs ?? 5000 });
    return this.api.call(method, `/gateways/${encodeURIComponent(this.options.gatewayId)}/${what}`, body, { headers });
  }

  /** Holds the announcement socket open, reconnecting with backoff; every announced version we do not serve triggers a pull. */
  private connect(): void {
    if (this.closed) return;
    const url = `${this.options.controlPlaneUrl.replace(/^http/, 'ws')}/api/v1/sync/ws`;
    const socket = new WebSocket(url, { headers: { authorization: `Bearer ${this.options.apiKey}` } });
    this.socket = socket;
    socket.addEventListener('open', () => (this.reconnectDelayMs = 500));
    socket.addEventListener('message', (event) => {
      try {
        const message = JSON.parse(String(event.data)) as { type?: string; version?: number };
        if (message.type === 'config' && message.version !== this.appliedVersion) void this.pull();
      } catch {
        this.options.logger.warn('unreadable message on the config socket');
      }
    });
    socket.addEventListener('close', () => {
      if (this.closed) return;
      this.reconnectTimer = setTimeout(() => this.connect(), this.reconnectDelayMs);
      this.reconnectTimer.unref();
      this.reconnectDelayMs = Math.min(this.reconnectDelayMs * 2, MAX_RECONNECT_MS);
    });
    // An error is always followed by a close, which reconnects.
    socket.addEventListener('error', () => undefined);
  }
}
