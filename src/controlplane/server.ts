import uWS, { type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from '@trufflesuite/uws-js-unofficial';
import type { z } from 'zod';
import type { Logger } from '../lib/logger.js';
import { listenExclusive } from '../lib/listen.js';
import { PasswordHasher } from './auth/passwords.js';
import { credentialHolds, resolvePrincipal, roleAllowed } from './auth/principal.js';
import { TokenIssuer } from './auth/tokens.js';
import { UpstreamGuard } from './credentials/egress.js';
import type { Database, Queryable } from './db/database.js';
import { routeStatuses } from './routes/openapi.js';
import { ApiError, ForbiddenError, NotFoundError, PayloadTooLargeError, UnauthorizedError, ValidationError } from './errors.js';
import { loggableError } from './failures.js';
import type { Mailer } from './mail/mailer.js';
import { assertStorable, validationError } from './validation.js';
import { Router, type Route } from './router.js';
import { allRoutes } from './routes/index.js';
import type { SecretBox } from './secrets.js';
import type { ControlPlaneSettings, Services } from './services.js';
import { ConfigAnnouncer } from './sync/announcer.js';
import { Dispatcher, type DeliveryTuning } from './delivery/dispatcher.js';
import { HookGateRules } from './hook-gate/rules.js';
import { MemoryCounters } from './throttle/counters.js';
import { Throttle } from './throttle/throttle.js';
import { bumpConfigVersion, currentConfigVersion } from './sync/config-version.js';

export const API_PREFIX = '/api/v1';

export interface ControlPlaneServerOptions {
  host: string;
  port: number;
  db: Database;
  secrets: SecretBox;
  logger: Logger;
  settings: ControlPlaneSettings;
  /** Largest request body accepted; past it, 413. */
  maxBodyBytes?: number;
  accessTtlSeconds?: number;
  /** Password hashing; the production cost unless a test passes a cheaper one. */
  passwords?: PasswordHasher;
  /** Throttles of the public auth routes; counted in this process unless given shared counters. */
  throttle?: Throttle;
  mailer: Mailer;
  /** How often open sync sockets' credentials are checked again (default 30 s). */
  socketRecheckMs?: number;
  /** The control plane's clock; tests move it (hold expiry). Default Date.now. */
  clock?: () => number;
  /** Notification and SIEM delivery timings (tests shorten the backoff). */
  delivery?: Partial<DeliveryTuning>;
  /** Where the hook gate's decide engine and pins are read from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /**
   * A success status a route does not document becomes a 500 UNDOCUMENTED_STATUS (tests run so, to
   * keep the OpenAPI document true); otherwise it is logged.
   */
  strictDocumentation?: boolean;
}

interface Intake {
  address: string;
  method: string;
  path: string;
  query: string;
  authorization: string;
  contentType: string;
  ifNoneMatch: string;
}

const STATUS_TEXT: Record<number, string> = {
  200: 'OK', 201: 'Created', 304: 'Not Modified', 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found',
  405: 'Method Not Allowed', 409: 'Conflict', 410: 'Gone', 413: 'Payload Too Large', 415: 'Unsupported Media Type', 422: 'Unprocessable Entity',
  429: 'Too Many Requests', 500: 'Internal Server Error', 501: 'Not Implemented', 502: 'Bad Gateway', 503: 'Service Unavailable',
};

/** The thin control plane: the JSON REST API under /api/v1 and the config-announcing WebSocket. */
export class ControlPlaneServer {
  readonly services: Services;
  private readonly app: TemplatedApp;
  private readonly router: Router;
  private readonly announcer: ConfigAnnouncer;
  private readonly maxBodyBytes: number;
  private readonly dispatcher: Dispatcher;
  private readonly hookGateRules: HookGateRules;
  private listenSocket: us_listen_socket | undefined;

  constructor(private readonly options: ControlPlaneServerOptions) {
    this.app = uWS.App();
    this.maxBodyBytes = options.maxBodyBytes ?? 8 * 1024 * 1024;
    this.router = new Router(allRoutes);
    this.announcer = new ConfigAnnouncer(this.app, { recheckIntervalMs: options.socketRecheckMs });
    const tokens = new TokenIssuer(options.secrets.deriveKey('access-token'), options.accessTtlSeconds ?? 3600);
    const db = options.db;
    const announcer = this.announcer;
    const clock = options.clock ?? Date.now;
    const upstreams = new UpstreamGuard(options.settings.allowPrivateUpstreams === true);
    this.dispatcher = new Dispatcher({ db, secrets: options.secrets, guard: upstreams, logger: options.logger, clock, tuning: options.delivery });
    this.hookGateRules = new HookGateRules({ logger: options.logger, env: options.env ?? process.env });
    this.services = {
      db,
      secrets: options.secrets,
      tokens,
      passwords: options.passwords ?? new PasswordHasher(),
      throttle: options.throttle ?? new Throttle(new MemoryCounters()),
      mailer: options.mailer,
      upstreams,
      clock,
      hookGateRules: this.hookGateRules,
      deliveries: this.dispatcher,
      sockets: announcer,
      logger: options.logger,
      settings: options.settings,
      async changeConfig<T>(workspaceId: string, change: (tx: Queryable) => Promise<T>) {
        const out = await db.transaction(async (tx) => ({ result: await change(tx), version: await bumpConfigVersion(tx, workspaceId) }));
        announcer.announce(workspaceId, out.version);
        return out;
      },
    };
    this.announcer.attach(
      `${API_PREFIX}/sync/ws`,
      (authorization) => resolvePrincipal(db, tokens, authorization),
      (workspaceId) => currentConfigVersion(db, workspaceId),
      (principal) => credentialHolds(db, principal),
    );
    this.app.any('/*', (res, req) => this.accept(res, req));
  }

  async listen(): Promise<number> {
    this.listenSocket = await listenExclusive(this.app, this.options.host, this.options.port);
    this.dispatcher.start();
    return uWS.us_socket_local_port(this.listenSocket);
  }

  async close(): Promise<void> {
    this.announcer.stop();
    await this.dispatcher.stop();
    await this.hookGateRules.close().catch(() => undefined);
    await this.services.upstreams.close().catch(() => undefined);
    if (this.listenSocket !== undefined) uWS.us_listen_socket_close(this.listenSocket);
    this.listenSocket = undefined;
    // Closes the open connections and sockets too; the typings lag behind the runtime here.
    (this.app as TemplatedApp & { close(): void }).close();
  }

  private accept(res: HttpResponse, req: HttpRequest): void {
    const intake: Intake = {
      address: Buffer.from(res.getRemoteAddressAsText()).toString(),
      method: req.getCaseSensitiveMethod().toUpperCase(),
      path: req.getUrl(),
      query: req.getQuery() ?? '',
      authorization: req.getHeader('authorization'),
      contentType: req.getHeader('content-type'),
      ifNoneMatch: req.getHeader('if-none-match'),
    };
    let aborted = false;
    res.onAborted(() => (aborted = true));
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    res.onData((chunk, isLast) => {
      if (refused) return;
      size += chunk.byteLength;
      if (size > this.maxBodyBytes) {
        refused = true;
        this.send(res, () => aborted, this.errorReply(new PayloadTooLargeError(this.maxBodyBytes)), true);
        return;
      }
      chunks.push(Buffer.from(chunk.slice(0)));
      if (!isLast) return;
      void this.dispatch(intake, Buffer.concat(chunks)).then((reply) => this.send(res, () => aborted, reply));
    });
  }

  private async dispatch(intake: Intake, rawBody: Buffer): Promise<{ status: number; body: unknown; headers: Record<string, string> }> {
    try {
      if (!intake.path.startsWith(API_PREFIX + '/')) throw new NotFoundError(`No route for ${intake.method} ${intake.path}.`);
      const found = this.router.match(intake.method, intake.path.slice(API_PREFIX.length));
      if (found === undefined) throw new NotFoundError(`No route for ${intake.method} ${intake.path}.`);
      if (found === 'method') throw new ApiError(405, 'METHOD_NOT_ALLOWED', `${intake.method} is not allowed on ${intake.path}.`);
      const { route: r, params } = found;
      const principal = r.access === 'P' ? undefined : await this.authorize(r, intake.authorization);
      assertStorable(params, 'path');
      const query = r.query === undefined ? undefined : this.parse(r.query, this.storable(Object.fromEntries(new URLSearchParams(intake.query)), 'query', 400), 400);
      const invalidBody = r.invalidBodyStatus ?? 400;
      let body: unknown;
      try {
        body = r.body === undefined ? undefined : this.parse(r.body, this.storable(this.readJson(rawBody, intake.contentType), 'body', invalidBody), invalidBody);
      } catch (err) {
        if (r.invalidBody === undefined || !(err instanceof ApiError) || (err.status !== 400 && err.status !== 415 && err.status !== 422)) throw err;
        const reply = r.invalidBody(err.message, err.details);
        return { status: reply.status ?? 400, body: reply.body, headers: reply.headers ?? {} };
      }
      const ctx = { services: this.services, params, body, query, headers: { ifNoneMatch: intake.ifNoneMatch }, client: { address: intake.address }, principal };
      const reply = await r.handler(ctx as never);
      const status = reply.status ?? 200;
      if (status < 400 && !routeStatuses(r).includes(status)) this.undocumented(r, status);
      return { status, body: reply.body, headers: reply.headers ?? {} };
    } catch (err) {
      return this.errorReply(err);
    }
  }

  private async authorize(r: Extract<Route, { access: Exclude<Route['access'], 'P'> }>, authorization: string) {
    const access = r.access;
    const principal = await resolvePrincipal(this.options.db, this.services.tokens, authorization);
    if (principal === undefined) throw new UnauthorizedError();
    if (principal.gateway !== undefined && r.gateway !== true) throw new ForbiddenError('A gateway token may call only the routes a gateway needs.');
    if (access === 'SESSION' && principal.sessionId === undefined) throw new UnauthorizedError('This route needs a login access token, not an API key.');
    if (!roleAllowed(access, principal.role)) throw new ForbiddenError(`Your role ${principal.role} may not do this.`);
    return principal;
  }

  private undocumented(r: Route, status: number): void {
    const message = `${r.method} ${r.path} answered ${status}, which its OpenAPI entry does not list`;
    if (this.options.strictDocumentation === true) throw new ApiError(500, 'UNDOCUMENTED_STATUS', message);
    this.options.logger.warn({ route: `${r.method} ${r.path}`, status }, 'route answered an undocumented status');
  }

  private readJson(raw: Buffer, contentType: string): unknown {
    if (raw.length === 0) return undefined;
    if (contentType !== '' && !/^application\/(.+\+)?json\b/i.test(contentType)) {
      throw new ApiError(415, 'UNSUPPORTED_MEDIA_TYPE', `Content type '${contentType}' is not supported; send application/json.`);
    }
    try {
      return JSON.parse(raw.toString('utf8'));
    } catch {
      throw new ValidationError('The body is not valid JSON.');
    }
  }

  private storable<T>(value: T, where: 'body' | 'query', status: number): T {
    assertStorable(value, where, status);
    return value;
  }

  private parse<T>(schema: z.ZodType<T>, value: unknown, invalidStatus: number): T {
    const parsed = schema.safeParse(value);
    if (!parsed.success) throw validationError(parsed.error, invalidStatus);
    return parsed.data;
  }

  private errorReply(err: unknown) {
    if (err instanceof ApiError) {
      return { status: err.status, body: { error: { code: err.code, message: err.message, ...(err.details === undefined ? {} : { details: err.details }) } }, headers: { ...err.headers } };
    }
    this.options.logger.error({ failure: loggableError(err) }, 'control plane request failed');
    return { status: 500, body: { error: { code: 'INTERNAL', message: 'Internal error.' } }, headers: {} };
  }

  private send(res: HttpResponse, isAborted: () => boolean, reply: { status: number; body: unknown; headers: Record<string, string> }, close = false): void {
    if (isAborted()) return;
    res.cork(() => {
      res.writeStatus(`${reply.status} ${STATUS_TEXT[reply.status] ?? ''}`.trim());
      for (const [name, value] of Object.entries(reply.headers)) res.writeHeader(name, value);
      if (reply.status === 304 || reply.body === undefined) res.endWithoutBody(0, close);
      else if (typeof reply.body === 'string' && reply.headers['content-type'] !== undefined) {
        // A download (CSV) whose route set its own content type.
        res.end(reply.body, close);
      } else {
        res.writeHeader('content-type', 'application/json');
        res.end(JSON.stringify(reply.body), close);
      }
    });
  }
}

