/**
 * Request headers never sent upstream: hop-by-hop headers, ones the proxy recomputes, the
 * caller's credentials (the proxy sets the provider's own), and the gateway's own headers.
 */
const DROP_REQUEST_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
  'expect',
  'accept-encoding',
  'authorization',
  'x-api-key',
  'api-key',
  'cookie',
  'x-session-id',
  'x-workspace-id',
  'forwarded',
  'x-forwarded-for',
  'x-real-ip',
]);

/** The flat `[name, value, …]` header list undici takes for the upstream request. */
export function upstreamRequestHeaders(
  incoming: ReadonlyArray<readonly [string, string]>,
  auth: ReadonlyArray<readonly [string, string]>,
  defaults: ReadonlyArray<readonly [string, string]>,
): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const [name, value] of incoming) {
    if (DROP_REQUEST_HEADERS.has(name) || name.startsWith('x-svc-')) continue;
    out.push(name, value);
    seen.add(name);
  }
  for (const [name, value] of defaults) if (!seen.has(name)) out.push(name, value);
  for (const [name, value] of auth) out.push(name, value);
  return out;
}
