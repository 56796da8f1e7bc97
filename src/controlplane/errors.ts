/**
 * The control plane's typed errors. Each carries the HTTP status and a stable code; the server
 * renders every one as `{ "error": { "code", "message", "details"? } }`. Codes are seed 000's
 * where it names one; the unnamed 401/403/404 cases use UNAUTHORIZED, FORBIDDEN and NOT_FOUND.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export interface ValidationIssue {
  path: string;
  message: string;
}

/** A malformed or out-of-bounds body or query (400; signup answers 422). */
export class ValidationError extends ApiError {
  constructor(message: string, issues: ValidationIssue[] = [], status = 400) {
    super(status, 'validation', message, issues.length > 0 ? { issues } : undefined);
  }
}

export class UnauthorizedError extends ApiError {
  constructor(message = 'Authentication required: send Authorization: Bearer <access token or vk_ key>.') {
    super(401, 'UNAUTHORIZED', message);
  }
}

export class ForbiddenError extends ApiError {
  constructor(message: string) {
    super(403, 'FORBIDDEN', message);
  }
}

export class NotFoundError extends ApiError {
  constructor(message: string) {
    super(404, 'NOT_FOUND', message);
  }
}

export class ConflictError extends ApiError {
  constructor(code: string, message: string) {
    super(409, code, message);
  }
}

export class PayloadTooLargeError extends ApiError {
  constructor(limit: number) {
    super(413, 'PAYLOAD_TOO_LARGE', `Request body exceeds the limit of ${limit} bytes.`);
  }
}

export class SignupDisabledError extends ApiError {
  constructor() {
    super(503, 'SIGNUP_DISABLED', 'Sign-up is switched off on this control plane.');
  }
}
