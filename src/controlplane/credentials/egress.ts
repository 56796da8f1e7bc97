import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, isIPv4, type LookupFunction } from 'node:net';
import { Agent } from 'undici';
import { withoutTrailingSlashes } from '../../lib/trailing-run.js';

/**
 * Which addresses the control plane may call when it checks a credential. The URL comes from a
 * workspace admin (an Ollama `apiBase`, an Azure endpoint), so without these checks the check
 * would be a port scanner of the control plane's own network.
 *
 * Refused: loopback, private, carrier-grade NAT, link-local, unique-local, unspecified,
 * documentation, benchmarking, multicast and reserved ranges, in IPv4 and IPv6, and IPv4
 * addresses carried inside IPv6 (IPv4-mapped, NAT64, 6to4); the names `localhost`, `*.localhost`,
 * `*.internal`, `*.local`, `*.home.arpa`; and the cloud metadata services by address and name.
 * `allowPrivate` (the operator's --allow-private-upstreams) lifts every refusal but the metadata ones.
 *
 * A name is resolved once, every address it resolves to is checked, and the connection is made to
 * those checked addresses only (the lookup is the connection's own), so a DNS answer that changes
 * between check and connect (rebinding) cannot send it elsewhere.
 */

interface Range {
  bytes: number[];
  prefix: number;
  reason: string;
}

function parseV4(ip: string): number[] {
  return ip.split('.').map(Number);
}

/** 16 bytes of an IPv6 address (an embedded dotted IPv4 tail included). */
function parseV6(ip: string): number[] {
  let text = ip.toLowerCase();
  let tail: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted !== null) {
    const v4 = parseV4(dotted[1]!);
    tail = [(v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!];
    text = text.slice(0, -dotted[1]!.length) + '0:0';
  }
  const [head = '', rest] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = rest === undefined || rest === '' ? [] : rest.split(':');
  const groups = rest === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  const words = groups.map((g) => parseInt(g, 16));
  if (tail.length > 0) words.splice(6, 2, ...tail);
  return words.flatMap((w) => [w >> 8, w & 0xff]);
}

const range = (cidr: string, reason: string): Range => {
  const [net, prefix] = cidr.split('/') as [string, string];
  return { bytes: isIPv4(net) ? parseV4(net) : parseV6(net), prefix: Number(prefix), reason };
};

const V4_REFUSED: Range[] = [
  range('0.0.0.0/8', 'an unspecified ("this network") address'),
  range('10.0.0.0/8', 'a private address'),
  range('100.64.0.0/10', 'a carrier-grade NAT address'),
  range('127.0.0.0/8', 'a loopback address'),
  range('169.254.0.0/16', 'a link-local address'),
  range('172.16.0.0/12', 'a private address'),
  range('192.0.0.0/24', 'an IETF protocol address'),
  range('192.0.2.0/24', 'a documentation address'),
  range('192.88.99.0/24', 'a 6to4 relay address'),
  range('192.168.0.0/16', 'a private address'),
  range('198.18.0.0/15', 'a benchmarking address'),
  range('198.51.100.0/24', 'a documentation address'),
  range('203.0.113.0/24', 'a documentation address'),
  range('224.0.0.0/4', 'a multicast address'),
  range('240.0.0.0/4', 'a reserved address'),
];

const V6_REFUSED: Range[] = [
  range('::/128', 'an unspecified address'),
  range('::1/128', 'a loopback address'),
  range('::/96', 'an IPv4-compatible address'),
  range('64:ff9b:1::/48', 'a local NAT64 address'),
  range('100::/64', 'a discard-only address'),
  range('2001::/32', 'a Teredo address'),
  range('2001:db8::/32', 'a documentation address'),
  range('fc00::/7', 'a unique-local (private) address'),
  range('fe80::/10', 'a link-local address'),
  range('fec0::/10', 'a site-local address'),
  range('ff00::/8', 'a multicast address'),
];

/** IPv6 prefixes that carry an IPv4 address, and where its four bytes sit. */
const V4_CARRIERS: Array<Range & { at: number }> = [
  { ...range('::ffff:0:0/96', 'IPv4-mapped'), at: 12 },
  { ...range('64:ff9b::/96', 'NAT64'), at: 12 },
  { ...range('2002::/16', '6to4'), at: 2 },
];

/** Cloud metadata services: refused even when the operator allows private upstreams. */
const METADATA_ADDRESSES = new Set(['169.254.169.254', '169.254.170.2', '169.254.169.253', '100.100.100.200', '168.63.129.16', 'fd00:ec2::254']);
const METADATA_NAMES = new Set(['metadata', 'metadata.google.internal', 'metadata.goog', 'metadata.azure.com', 'instance-data', 'instance-data.ec2.internal']);
const PRIVATE_NAME = /(^|\.)(localhost|internal|local|home\.arpa)$|^localhost\.localdomain$|^ip6-(localhost|loopback)$/;

function inRange(bytes: number[], r: Range): boolean {
  if (bytes.length !== r.bytes.length) return false;
  let bits = r.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((bytes[i]! & mask) !== (r.bytes[i]! & mask)) return false;
  }
  return true;
}

const canonicalV6 = (bytes: number[]) => {
  const words = [];
  for (let i = 0; i < 16; i += 2) words.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  return new URL(`http://[${words.join(':')}]/`).hostname.slice(1, -1);
};

/** Why the control plane must not call `ip`, or undefined when it may. */
export function refusedAddress(ip: string, allowPrivate = false): string | undefined {
  const address = ip.replace(/^\[|\]$/g, '');
  const family = isIP(address);
  if (family === 0) return `'${ip}' is not an IP address`;
  if (family === 4) {
    if (METADATA_ADDRESSES.has(address)) return `${address} is a cloud metadata address`;
    if (allowPrivate) return undefined;
    const hit = V4_REFUSED.find((r) => inRange(parseV4(address), r));
    return hit && `${address} is ${hit.reason}`;
  }
  const bytes = parseV6(address);
  for (const carrier of V4_CARRIERS) {
    if (!inRange(bytes, carrier)) continue;
    const v4 = bytes.slice(carrier.at, carrier.at + 4).join('.');
    const inner = refusedAddress(v4, allowPrivate);
    return inner && `${address} is ${carrier.reason}: ${inner}`;
  }
  if (METADATA_ADDRESSES.has(canonicalV6(bytes))) return `${address} is a cloud metadata address`;
  if (allowPrivate) return undefined;
  const hit = V6_REFUSED.find((r) => inRange(bytes, r));
  return hit && `${address} is ${hit.reason}`;
}

/** Why a host name must not be called before it is even resolved, or undefined. */
export function refusedName(hostname: string, allowPrivate = false): string | undefined {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  if (METADATA_NAMES.has(name)) return `${name} is a cloud metadata name`;
  if (!allowPrivate && PRIVATE_NAME.test(name)) return `${name} names this machine or a private network`;
  return undefined;
}

/** Why the URL's host must not be called (checked before any connection), or undefined. */
export function refusedHost(url: URL, allowPrivate = false): string | undefined {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return isIP(host) !== 0 ? refusedAddress(host, allowPrivate) : refusedName(host, allowPrivate);
}

/** A connection refused by the checks; `code` ERR_UPSTREAM_ADDRESS_REFUSED. */
export class UpstreamAddressError extends Error {
  readonly code = 'ERR_UPSTREAM_ADDRESS_REFUSED';
}

export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))));

/**
 * A `lookup` for net/tls.connect that resolves once, refuses the whole name if any address it
 * resolves to is refused, and hands the connection exactly the addresses it checked.
 */
export function guardedLookup(allowPrivate: boolean, resolve: Resolver = systemResolver): LookupFunction {
  return ((hostname: string, options: { all?: boolean; family?: number | string }, callback: (...args: unknown[]) => void) => {
    const named = refusedName(hostname, allowPrivate);
    if (named !== undefined) return void process.nextTick(() => callback(new UpstreamAddressError(named)));
    resolve(hostname).then(
      (addresses) => {
        const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0);
        const fitting = family === 4 || family === 6 ? addresses.filter((a) => a.family === family) : addresses;
        const refused = addresses.map((a) => refusedAddress(a.address, allowPrivate)).find((r) => r !== undefined);
        if (refused !== undefined) return callback(new UpstreamAddressError(`${hostname} resolves to ${refused}`));
        if (fitting.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }));
        if (options.all) callback(null, fitting);
        else callback(null, fitting[0]!.address, fitting[0]!.family);
      },
      (err: unknown) => callback(err),
    );
  }) as LookupFunction;
}

/** Checks and pins the addresses of every connection its dispatcher makes; redirects are never followed. */
export class UpstreamGuard {
  readonly dispatcher: Agent;

  constructor(
    readonly allowPrivate: boolean,
    resolve?: Resolver,
  ) {
    this.dispatcher = new Agent({ connect: { lookup: guardedLookup(allowPrivate, resolve), timeout: 10_000 }, keepAliveTimeout: 1000 });
  }

  /** Why `url` must not be called at all (a refused literal address or name), or undefined. */
  refused(url: URL): string | undefined {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return `${url.protocol} URLs are not called`;
    return refusedHost(url, this.allowPrivate);
  }

  close(): Promise<void> {
    return this.dispatcher.close();
  }
}

/**
 * `path` appended to `base`'s path; the base's query, fragment and user info are dropped, so
 * `http://host/x?y=` cannot turn `/models` into a query value.
 */
export function joinUrl(base: string, path: string, query: Record<string, string> = {}): URL {
  const url = new URL(base);
  url.pathname = withoutTrailingSlashes(url.pathname) + path;
  url.search = '';
  url.hash = '';
  url.username = '';
  url.password = '';
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  return url;
}
