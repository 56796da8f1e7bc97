import { BlockList, isIP } from 'node:net';
import { SvcError } from '../lib/errors.js';
import { trailingRunStart } from '../lib/trailing-run.js';

/**
 * Egress rules (seed 001 `egressMode`, `egressAllow`): which upstream hosts the proxy may call.
 * An allow entry is a host (`api.openai.com`), a `.suffix` domain (`.openai.azure.com`: the
 * domain itself and every subdomain), an IP address, or a CIDR (`10.0.0.0/8`, `2001:db8::/32`)
 * that matches IP-literal hosts. Under monitor a host off the list is allowed but reported; under
 * enforce it is refused with EgressDeniedError; off allows everything.
 */

export type EgressMode = 'off' | 'monitor' | 'enforce';

export interface EgressDecision {
  /** Always true when mode is off; under monitor a false here is logged, not refused. */
  allowed: boolean;
  mode: EgressMode;
  /** The host as matched: lower case, without brackets or trailing dots. */
  host: string;
}

const LABEL = '[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?';
const HOSTNAME = new RegExp(`^${LABEL}(?:\\.${LABEL})*$`);
const MAX_HOSTNAME = 253;
const DOT = 0x2e;

function normalizeHost(host: string): string {
  const h = host.trim().toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) return h.slice(1, -1);
  // A name's trailing dots (the root).
  return h.slice(0, trailingRunStart(h, (unit) => unit === DOT));
}

function isHostname(name: string): boolean {
  return name.length <= MAX_HOSTNAME && HOSTNAME.test(name);
}

export class EgressPolicy {
  readonly mode: EgressMode;
  /** Allow entries that are none of host, `.suffix` or CIDR; ignored. */
  readonly invalid: string[] = [];
  private readonly hosts = new Set<string>();
  /** Suffix domains without their leading dot. */
  private readonly suffixes = new Set<string>();
  private readonly addresses = new BlockList();

  /** `allow` is the proxy's local list and the workspace's `egressAllow` together (the seed adds them). */
  constructor(mode: EgressMode | undefined, allow: readonly string[]) {
    this.mode = mode ?? 'off';
    for (const entry of allow) {
      if (!this.add(entry)) this.invalid.push(entry);
    }
  }

  /** `host` as in `URL.hostname`; a host with a port never matches. */
  check(host: string): EgressDecision {
    const h = normalizeHost(host);
    return { allowed: this.mode === 'off' || this.matches(h), mode: this.mode, host: h };
  }

  private matches(host: string): boolean {
    const family = isIP(host);
    if (family !== 0) return this.addresses.check(host, family === 4 ? 'ipv4' : 'ipv6');
    if (this.hosts.has(host)) return true;
    // Walk up by labels: a.b.openai.com → b.openai.com → openai.com → com.
    for (let rest = host; ; ) {
      if (this.suffixes.has(rest)) return true;
      const dot = rest.indexOf('.');
      if (dot < 0) return false;
      rest = rest.slice(dot + 1);
    }
  }

  private add(entry: string): boolean {
    const e = normalizeHost(entry);
    const slash = e.indexOf('/');
    if (slash >= 0) return this.addCidr(normalizeHost(e.slice(0, slash)), e.slice(slash + 1));
    const family = isIP(e);
    if (family !== 0) {
      this.addresses.addAddress(e, family === 4 ? 'ipv4' : 'ipv6');
      return true;
    }
    if (e.startsWith('.')) {
      const domain = e.slice(1);
      if (!isHostname(domain)) return false;
      this.suffixes.add(domain);
      return true;
    }
    if (!isHostname(e)) return false;
    this.hosts.add(e);
    return true;
  }

  private addCidr(address: string, prefix: string): boolean {
    const family = isIP(address);
    if (family === 0 || !/^\d{1,3}$/.test(prefix) || Number(prefix) > (family === 4 ? 32 : 128)) return false;
    this.addresses.addSubnet(address, Number(prefix), family === 4 ? 'ipv4' : 'ipv6');
    return true;
  }
}

/** An upstream host the enforced egress policy does not allow. */
export class EgressDeniedError extends SvcError {
  constructor(host: string) {
    super(`Egress to host '${host}' is not allowed by the egress policy of this workspace.`, {
      code: 'egress_denied',
      status: 403,
      type: 'permission_error',
    });
  }
}
