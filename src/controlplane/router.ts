import type { z } from 'zod';
import type { Principal } from './auth/principal.js';
import type { Services } from './services.js';

/**
 * Who may call a route: P public, A any member (access token or vk_ key), OA owner or admin,
 * OAE owner, admin or EM, OAED any member but a viewer, SESSION a login session (access token only).
 */
export type Access = 'P' | 'A' | 'OA' | 'OAE' | 'OAED' | 'SESSION';

/** Who is calling, as the connection shows it (never a forwarded-for header, which anyone can write). */
export interface ClientInfo {
  /** The peer's IP address. */
  readonly address: string;
}

export interface RequestContext<Body, Query> {
  readonly services: Services;
  readonly params: Readonly<Record<string, string>>;
  readonly body: Body;
  readonly query: Query;
  readonly headers: Readonly<{ ifNoneMatch: string }>;
  readonly client: ClientInfo;
}

export interface AuthedContext<Body, Query> extends RequestContext<Body, Query> {
  readonly principal: Principal;
}

export interface Reply {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
}

interface RouteBase<Body, Query> {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Below /api/v1, with `:name` segments. */
  path: string;
  summary: string;
  body?: z.ZodType<Body>;
  /** The request body's schema as the OpenAPI document shows it, when `body` only pre-screens it. */
  documentedBody?: z.ZodType;
  query?: z.ZodType<Query>;
  /**
   * The answer to a body that cannot be read (not JSON, not storable, failing the schema) in place
   * of the usual 400 `validation` (the hook gate answers its refusal shape).
   */
  invalidBody?: (message: string, details: unknown) => Reply;
  /** Status for an invalid body (seed 000: signup answers 422, every other route 400). */
  invalidBodyStatus?: 400 | 422;
  /**
   * Every status the route answers, for the OpenAPI document. Without it: 200, 400 when it takes
   * a body or query, 401 and 403 as its access implies, and 404 when its path has parameters.
   */
  statuses?: readonly number[];
  /** A gateway's own `gwt_` token may call it (config sync, heartbeats, traces, holds); no other route. */
  gateway?: boolean;
}

export interface PublicRoute<Body, Query> extends RouteBase<Body, Query> {
  access: 'P';
  handler(ctx: RequestContext<Body, Query>): Promise<Reply>;
}

export interface AuthedRoute<Body, Query> extends RouteBase<Body, Query> {
  access: Exclude<Access, 'P'>;
  handler(ctx: AuthedContext<Body, Query>): Promise<Reply>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Route = PublicRoute<any, any> | AuthedRoute<any, any>;

/** Typed constructors so each handler sees its own body and query types. */
export const route = {
  public: <B = undefined, Q = undefined>(r: Omit<PublicRoute<B, Q>, 'access'>): Route => ({ ...r, access: 'P' }),
  authed: <B = undefined, Q = undefined>(access: Exclude<Access, 'P'>, r: Omit<AuthedRoute<B, Q>, 'access'>): Route => ({ ...r, access }),
};

interface CompiledRoute {
  route: Route;
  segments: readonly string[];
}

export interface RouteMatch {
  route: Route;
  params: Record<string, string>;
}

/** A percent-decoded path segment; undefined when the encoding is malformed. */
function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** Matches a method and a path below /api/v1 to a route; literal segments win over parameters. */
export class Router {
  private readonly compiled: CompiledRoute[];

  constructor(readonly routes: readonly Route[]) {
    const specificity = (segments: readonly string[]) => segments.filter((s) => s.startsWith(':')).length;
    this.compiled = routes
      .map((r) => ({ route: r, segments: r.path.split('/').filter(Boolean) }))
      .sort((a, b) => specificity(a.segments) - specificity(b.segments));
  }

  /** The route, or 'method' when the path exists under another method, or undefined. */
  match(method: string, path: string): RouteMatch | 'method' | undefined {
    const parts = path.split('/').filter(Boolean);
    let pathExists = false;
    for (const { route: r, segments } of this.compiled) {
      if (segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      const fits = segments.every((seg, i) => {
        if (seg.startsWith(':')) {
          const value = decodeSegment(parts[i]!);
          if (value === undefined) return false;
          params[seg.slice(1)] = value;
          return true;
        }
        return seg === parts[i];
      });
      if (!fits) continue;
      if (r.method === method) return { route: r, params };
      pathExists = true;
    }
    return pathExists ? 'method' : undefined;
  }
}
