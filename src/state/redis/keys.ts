/**
 * Key layout. Every key of a workspace starts with `svc:{<workspace>}:`; the `{…}` hash tag puts
 * them all in one Redis/Valkey Cluster slot, so each budget script touches a single slot.
 *
 *   svc:{ws}:spend:d:2026-11-21   settled micro-USD of the day     (expire a day after the period)
 *   svc:{ws}:resv:d:2026-11-21    reserved micro-USD of the day
 *   svc:{ws}:spend:m:2026-11      settled micro-USD of the month
 *   svc:{ws}:resv:m:2026-11       reserved micro-USD of the month
 *   svc:{ws}:res                  hash id → record of a reservation not yet settled
 *   svc:{ws}:ids                  sorted set id → when its record in :res expires (ms)
 *   svc:{ws}:settled:<n>          set of the ids settled in time bucket n (a quarter of the settled TTL)
 *   svc:{ws}:cache:<key>          exact-response cache entry (PX TTL)
 *   svc:{ws}:mcpb:<budget>:<period>  MCP tool calls counted against a budget in a period (expire when it ends)
 */
export function workspacePrefix(workspace: string): string {
  return `svc:{${workspace}}:`;
}

export function cacheKey(workspace: string, key: string): string {
  return `${workspacePrefix(workspace)}cache:${key}`;
}
