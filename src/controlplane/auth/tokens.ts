import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export interface AccessClaims {
  /** The member the token acts as. */
  sub: string;
  /** The login session; logout revokes it. */
  sid: string;
  iat: number;
  exp: number;
}

const b64 = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** HS256 JSON Web Tokens for access; opaque `rt_` refresh tokens; opaque `vk_` virtual keys. */
export class TokenIssuer {
  constructor(
    private readonly secret: Buffer,
    readonly accessTtlSeconds: number,
  ) {}

  issueAccess(memberId: string, sessionId: string, now = Date.now()): string {
    const iat = Math.floor(now / 1000);
    const unsigned = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ sub: memberId, sid: sessionId, iat, exp: iat + this.accessTtlSeconds })}`;
    return `${unsigned}.${this.sign(unsigned)}`;
  }

  /** The claims of a well-signed, unexpired token; undefined otherwise. */
  verifyAccess(token: string, now = Date.now()): AccessClaims | undefined {
    const parts = token.split('.');
    if (parts.length !== 3) return undefined;
    const [header, payload, signature] = parts as [string, string, string];
    const expected = Buffer.from(this.sign(`${header}.${payload}`));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    try {
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Partial<AccessClaims>;
      if (typeof claims.sub !== 'string' || typeof claims.sid !== 'string' || typeof claims.exp !== 'number') return undefined;
      return claims.exp * 1000 > now ? (claims as AccessClaims) : undefined;
    } catch {
      return undefined;
    }
  }

  private sign(data: string): string {
    return createHmac('sha256', this.secret).update(data).digest('base64url');
  }
}

export const newRefreshToken = (): string => 'rt_' + randomBytes(32).toString('base64url');
export const newVirtualKey = (): string => 'vk_' + randomBytes(24).toString('base64url');

export const GATEWAY_TOKEN_PREFIX = 'gwt_';
/** A gateway's own credential; it names its gateway (`gwt_<ulid>.<secret>`) so a proxy needs nothing else. */
export const newGatewayToken = (gatewayId: string): string => `${GATEWAY_TOKEN_PREFIX}${gatewayId.replace(/^gw_/, '')}.${randomBytes(32).toString('base64url')}`;
