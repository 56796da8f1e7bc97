import { withoutTrailingSlashes } from '../lib/trailing-run.js';

/**
 * The control plane answered with an HTTP error (as opposed to not answering at all): its status,
 * its stable `code` (e.g. UNAUTHORIZED, NOT_FOUND, validation, TEAM_EXISTS) and its message.
 * Subclasses name the common statuses so callers can catch exactly what they handle.
 */
export class ControlPlaneHttpError extends Error {
  /** The error code of `{ "error": { "code" } }`, or HTTP_<status> when the body has none. */
  readonly code: string;
  /** The control plane's own message, without the request it answered. */
  readonly reason: string;
  /** `error.details` (validation issues and the like), when sent. */
  readonly details: unknown;

  constructor(
    readonly status: number,
    what: string,
    body: string,
  ) {
    const parsed = parseErrorBody(body);
    super(`control plane answered ${status} to ${what}: ${parsed?.message === undefined ? body.slice(0, 300) : `${parsed.message} (${parsed.code ?? status})`}`);
    this.name = new.target.name;
    this.code = parsed?.code ?? `HTTP_${status}`;
    this.reason = parsed?.message ?? body.slice(0, 300);
    this.details = parsed?.details;
  }
}

/** 401: no credential, or one that is unknown, revoked or expired. */
export class ControlPlaneUnauthorizedError extends ControlPlaneHttpError {}
/** 403: the role (or the credential's kind) may not do this. */
export class ControlPlaneForbiddenError extends ControlPlaneHttpError {}
/** 404: no such resource, or not one the caller may see. */
export class ControlPlaneNotFoundError extends ControlPlaneHttpError {}
/** 409: it conflicts with what is there (code names how). */
export class ControlPlaneConflictError extends ControlPlaneHttpError {}
/** 400 or 422: the request failed validation; `details.issues` lists where. */
export class ControlPlaneValidationError extends ControlPlaneHttpError {}
/** 429: over a limit; `retryAfterSeconds` when the control plane said. */
export class ControlPlaneRateLimitedError extends ControlPlaneHttpError {
  retryAfterSeconds: number | undefined;
}

const BY_STATUS: Record<number, typeof ControlPlaneHttpError> = {
  400: ControlPlaneValidationError,
  401: ControlPlaneUnauthorizedError,
  403: ControlPlaneForbiddenError,
  404: ControlPlaneNotFoundError,
  409: ControlPlaneConflictError,
  422: ControlPlaneValidationError,
  429: ControlPlaneRateLimitedError,
};

function parseErrorBody(body: string): { code?: string; message?: string; details?: unknown } | undefined {
  try {
    const error = (JSON.parse(body) as { error?: unknown }).error;
    if (typeof error !== 'object' || error === null) return undefined;
    const { code, message, details } = error as Record<string, unknown>;
    return { code: typeof code === 'string' ? code : undefined, message: typeof message === 'string' ? message : undefined, details };
  } catch {
    return undefined;
  }
}

/** The typed error for an HTTP error answer. */
export function controlPlaneError(status: number, what: string, body: string, retryAfter?: string): ControlPlaneHttpError {
  const error = new (BY_STATUS[status] ?? ControlPlaneHttpError)(status, what, body);
  if (error instanceof ControlPlaneRateLimitedError && retryAfter !== undefined && /^\d+$/.test(retryAfter)) error.retryAfterSeconds = Number(retryAfter);
  return error;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ControlPlaneApiOptions {
  /** Base URL of the control plane, without /api/v1. */
  readonly controlPlaneUrl: string;
  /** The key a gateway (or the CLI, or an SDK) acts with; without one only public routes answer. */
  readonly apiKey?: string | undefined;
  /** How long one call may take unless the call says otherwise. */
  readonly timeoutMs?: number;
}

export interface ApiAnswer {
  readonly status: number;
  readonly text: string;
  readonly etag: string | undefined;
}

/**
 * A JSON client of the control plane's REST API under /api/v1 with one workspace key: what a
 * gateway syncs its config with, records holds and looks approvals up with, and what the command
 * line uses. A 4xx or 5xx rejects with a ControlPlaneHttpError; no answer rejects with the
 * network error.
 */
export class ControlPlaneApi {
  readonly baseUrl: string;

  constructor(private readonly options: ControlPlaneApiOptions) {
    this.baseUrl = withoutTrailingSlashes(options.controlPlaneUrl);
  }

  async call(method: HttpMethod, path: string, body?: unknown, opts: { headers?: Record<string, string>; timeoutMs?: number } = {}): Promise<ApiAnswer> {
    const timeout = opts.timeoutMs ?? this.options.timeoutMs ?? 5000;
    // Loaded with the first call: undici takes a process ~100 ms to load, and an MCP wrapper with no control plane makes none.
    const { request } = await import('undici');
    const res = await request(`${this.baseUrl}/api/v1${path}`, {
      method,
      headers: { ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...opts.headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      headersTimeout: timeout,
      bodyTimeout: timeout,
    });
    const text = await res.body.text();
    if (res.statusCode >= 400) {
      const retryAfter = res.headers['retry-after'];
      throw controlPlaneError(res.statusCode, `${method} ${path.split('?')[0]}`, text, typeof retryAfter === 'string' ? retryAfter : undefined);
    }
    const etag = res.headers.etag;
    return { status: res.statusCode, text, etag: typeof etag === 'string' ? etag : undefined };
  }

  /** `call`, its body parsed as JSON. */
  async json<T>(method: HttpMethod, path: string, body?: unknown, opts: { timeoutMs?: number } = {}): Promise<T> {
    const answer = await this.call(method, path, body, opts);
    return (answer.text === '' ? undefined : JSON.parse(answer.text)) as T;
  }
}
