/**
 * The typed error hierarchy of the gateway. Every refusal the proxy sends is one of these:
 * a stable `code`, the HTTP `status`, and the OpenAI-style error `type`. The proxy renders
 * them in the shape of the route's provider (see proxy/respond.ts).
 */
export class SvcError extends Error {
  readonly code: string;
  readonly status: number;
  readonly type: string;
  readonly param: string | null;
  /** Headers the refusal carries besides the trace id (e.g. retry-after). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    message: string,
    opts: { code: string; status: number; type: string; param?: string | null; headers?: Record<string, string>; cause?: unknown },
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = new.target.name;
    this.code = opts.code;
    this.status = opts.status;
    this.type = opts.type;
    this.param = opts.param ?? null;
    this.headers = opts.headers ?? {};
  }
}

export class InvalidRequestError extends SvcError {
  constructor(message: string, param: string | null = null, code = 'invalid_request') {
    super(message, { code, status: 400, type: 'invalid_request_error', param });
  }
}

/** A body nested deeper than inspection can follow: refused as the sender's, never sent on uninspected. */
export class NestingTooDeepError extends InvalidRequestError {
  constructor(cause: unknown) {
    super('The request body is nested too deeply to be inspected.', null, 'nesting_too_deep');
    this.cause = cause;
  }
}

/** Whether `err`, or an error it was caused by, is JavaScript running out of call stack. */
export function isStackOverflow(err: unknown): boolean {
  for (let e = err; e instanceof Error; e = e.cause) {
    if (e.name === 'RangeError' && /call stack/i.test(e.message)) return true;
  }
  return false;
}

export class AuthenticationError extends SvcError {
  constructor(message = 'Invalid API key. Use a virtual key (vk_…) issued for this gateway.') {
    super(message, { code: 'invalid_api_key', status: 401, type: 'authentication_error' });
  }
}

export class NotFoundError extends SvcError {
  constructor(method: string, path: string) {
    super(`No route for ${method} ${path}.`, { code: 'not_found', status: 404, type: 'not_found_error' });
  }
}

export class PayloadTooLargeError extends SvcError {
  constructor(limit: number) {
    super(`Request body exceeds the limit of ${limit} bytes.`, {
      code: 'request_too_large',
      status: 413,
      type: 'invalid_request_error',
    });
  }
}

export class UnsupportedMediaTypeError extends SvcError {
  constructor(contentType: string) {
    super(`Content type '${contentType || '(none)'}' is not supported; send application/json.`, {
      code: 'unsupported_media_type',
      status: 415,
      type: 'invalid_request_error',
    });
  }
}

export class ProviderNotSupportedError extends SvcError {
  constructor(provider: string, detail: string) {
    super(`Provider '${provider}' is not supported on this route yet: ${detail}`, {
      code: 'provider_not_supported',
      status: 501,
      type: 'invalid_request_error',
    });
  }
}

/** The upstream answered with an error, or could not be reached. */
export class UpstreamError extends SvcError {
  constructor(message: string, opts: { status?: number; code?: string; cause?: unknown; headers?: Record<string, string> } = {}) {
    super(message, { code: opts.code ?? 'upstream_error', status: opts.status ?? 502, type: 'api_error', cause: opts.cause, headers: opts.headers });
  }
}

export class UpstreamTimeoutError extends UpstreamError {
  constructor(ms: number, what = 'did not answer') {
    super(`The upstream provider ${what} within ${ms} ms.`, { status: 504, code: 'upstream_timeout' });
  }
}

export class ShuttingDownError extends SvcError {
  constructor() {
    super('The gateway is shutting down; retry on another instance.', {
      code: 'shutting_down',
      status: 503,
      type: 'api_error',
      headers: { 'retry-after': '1' },
    });
  }
}

/** The policy engine could not give a verdict; the request fails closed. */
export class GovernanceUnavailableError extends SvcError {
  constructor(reason: string, cause?: unknown) {
    super(`Governance is unavailable (${reason}); the request was not sent.`, {
      code: 'governance_unavailable',
      status: 503,
      type: 'api_error',
      cause,
      headers: { 'retry-after': '1' },
    });
  }
}

/** A policy refused the request. */
export class PolicyBlockedError extends SvcError {
  constructor(message: string, code: string) {
    super(message, { code, status: 403, type: 'permission_error' });
  }
}

/** The anomaly detectors stopped the session: a detector whose action is kill fired. */
export class AnomalyKilledError extends PolicyBlockedError {
  constructor(reason: string) {
    super(`Refused by the anomaly detectors: ${reason}.`, 'anomaly_killed');
  }
}

/** A WASM rule refused (or held) the request itself: 403 policy_denied naming the rule. */
export class RuleDeniedError extends PolicyBlockedError {
  constructor(
    readonly rule: string,
    action: 'block' | 'hold',
    reason: string,
  ) {
    super(
      action === 'hold'
        ? `[Svc Governance] HELD: rule ${rule} holds this request for a person's approval: ${reason}`
        : `[Svc Governance] BLOCKED: rule ${rule} refused this request: ${reason}`,
      'policy_denied',
    );
  }
}

export class ModelNotAllowedError extends SvcError {
  constructor(model: string) {
    super(`The model '${model}' is not in this workspace's allowedModels.`, { code: 'model_not_allowed', status: 403, type: 'permission_error', param: 'model' });
  }
}

export class ByokRequiredError extends SvcError {
  constructor(provider: string) {
    super(`No credential is provisioned for provider '${provider}', and this gateway requires the workspace's own key.`, {
      code: 'byok_required',
      status: 402,
      type: 'invalid_request_error',
    });
  }
}

/** A reason not to start that the operator can fix; the CLI prints its message alone and exits 2. */
export class StartupError extends Error {
  constructor(
    message: string,
    readonly code: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Raised by configuration loading. */
export class ConfigError extends StartupError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, 'invalid_config', options);
  }
}

/** A server could not bind its address: the port is taken, or the address is not this machine's. */
export class ListenError extends StartupError {
  constructor(
    readonly host: string,
    readonly port: number,
    reason: string,
  ) {
    super(`cannot listen on ${host}:${port}: ${reason}`, 'listen_failed');
  }
}
