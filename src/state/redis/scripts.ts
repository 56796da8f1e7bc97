import { LuaScript } from './lua.js';

/**
 * The budget scripts. Each runs atomically inside Redis, which is what makes a reserve's check
 * and hold indivisible across every proxy sharing the server.
 *
 * KEYS[1] is always the workspace prefix `svc:{ws}:` (keys.ts). Other keys are built from it
 * inside the script because a reservation's period is only known from its record; they all carry
 * the prefix's hash tag, so they share its Cluster slot.
 *
 * Amounts are integer micro-USD; times are ms since the epoch by the proxy's clock (`now` is
 * always an argument, never Redis's TIME, so tests can inject it and clock skew between Redis and
 * the proxies does not matter). Amounts are passed to Redis as the argument strings, never
 * re-formatted by Lua, so large integers keep every digit.
 *
 * A reservation record is `'<micros> <day> <month> <dayExpiresAt> <monthExpiresAt>'`; its expiry
 * is its score in the `ids` sorted set. Settling deletes the record and adds the id to the settled
 * set of its time bucket (see SETTLE), which holds it, and nothing else, for the settled TTL.
 */
const PRELUDE = `
local P = KEYS[1]
local function num(v) return tonumber(v) or 0 end

-- the day's and month's counters: {spentDay, reservedDay, spentMonth, reservedMonth}
local function counters(day, month)
  local v = redis.call('MGET', P..'spend:d:'..day, P..'resv:d:'..day, P..'spend:m:'..month, P..'resv:m:'..month)
  return {num(v[1]), num(v[2]), num(v[3]), num(v[4])}
end

-- add micros (a string) to counter k, which expires at expires_at; a period already expired takes nothing
local function add(k, micros, expires_at, now)
  local ttl = tonumber(expires_at) - now
  if ttl > 0 then
    redis.call('INCRBY', k, micros)
    redis.call('PEXPIRE', k, ttl)
  end
end

-- subtract micros from counter k, never below zero and never re-creating an expired counter
local function take(k, micros)
  local v = num(redis.call('GET', k))
  if v > tonumber(micros) then redis.call('DECRBY', k, micros)
  elseif v > 0 then redis.call('SET', k, 0, 'KEEPTTL') end
end

-- release what a reservation record holds; returns the record's period
local function unreserve(rec)
  local micros, day, month, day_exp, month_exp = string.match(rec, '^(%d+) (%S+) (%S+) (%d+) (%d+)$')
  take(P..'resv:d:'..day, micros)
  take(P..'resv:m:'..month, micros)
  return day, month, day_exp, month_exp
end

-- drop up to 100 records whose time is up, releasing what expired reservations held
local function expire(now)
  local ids = redis.call('ZRANGEBYSCORE', P..'ids', '-inf', now, 'LIMIT', 0, 100)
  if #ids == 0 then return end
  for _, id in ipairs(ids) do
    local rec = redis.call('HGET', P..'res', id)
    -- 'S': a settled id as recorded by earlier releases, in this hash until its expiry
    if rec and rec ~= 'S' then unreserve(rec) end
  end
  redis.call('HDEL', P..'res', unpack(ids))
  redis.call('ZREM', P..'ids', unpack(ids))
end

-- hold id's reservation record until expires_at; the two bookkeeping keys live as long as their newest record
local function remember(id, rec, expires_at, keep_ms)
  redis.call('HSET', P..'res', id, rec)
  redis.call('ZADD', P..'ids', expires_at, id)
  redis.call('PEXPIRE', P..'res', keep_ms)
  redis.call('PEXPIRE', P..'ids', keep_ms)
end
`;

/**
 * RESERVE: refuse at a hard cap, or hold the amount for the request.
 * ARGV: 1 id, 2 micros, 3 day, 4 month, 5 dayExpiresAt, 6 monthExpiresAt (the period's counters),
 *       7 now, 8 reservation TTL ms, 9 daily cap micros (-1: none), 10 monthly cap micros (-1: none),
 *       11 enforce ('1' | '0').
 * Returns {reached (0 none, 1 daily, 2 monthly), held (1 | 0), spentDay, reservedDay, spentMonth, reservedMonth},
 * the counters including this reservation when held. A cap is reached when settled + reserved is at
 * or over it (the monthly one reported first); an id still held is held already and changes nothing.
 */
export const RESERVE = new LuaScript(`${PRELUDE}
local now = tonumber(ARGV[7])
expire(now)
local c = counters(ARGV[3], ARGV[4])
local daily_cap, monthly_cap = tonumber(ARGV[9]), tonumber(ARGV[10])
local reached = 0
if monthly_cap >= 0 and c[3] + c[4] >= monthly_cap then reached = 2
elseif daily_cap >= 0 and c[1] + c[2] >= daily_cap then reached = 1 end
if redis.call('HEXISTS', P..'res', ARGV[1]) == 1 then return {reached, 1, c[1], c[2], c[3], c[4]} end
if reached > 0 and ARGV[11] == '1' then return {reached, 0, c[1], c[2], c[3], c[4]} end
add(P..'resv:d:'..ARGV[3], ARGV[2], ARGV[5], now)
add(P..'resv:m:'..ARGV[4], ARGV[2], ARGV[6], now)
remember(ARGV[1], table.concat({ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]}, ' '), now + tonumber(ARGV[8]), ARGV[8])
local micros = tonumber(ARGV[2])
return {reached, 1, c[1], c[2] + micros, c[3], c[4] + micros}
`);

/**
 * SETTLE: replace a reservation by the actual cost, once. The cost is charged to the reservation's
 * own period (a request reserved before midnight counts against that day); an unknown or expired id
 * is charged to the period in ARGV. A settled id is remembered for the settled TTL, so repeats and
 * replays add nothing.
 *
 * It is remembered in the set `settled:<n>` of its settle time's bucket n (a quarter of the TTL
 * long), which lives until the TTL has passed for its last member: one small set entry per request,
 * where a hash field and a sorted-set entry per request took 2.5 times the memory. A replay
 * carries the time of the settle it repeats, so it is found in the same bucket, and a repeat at
 * another time in the buckets the TTL before it spans (six at most); an id whose reservation is
 * still held needs no look.
 * ARGV: 1 id, 2 actual micros, 3 day, 4 month, 5 dayExpiresAt, 6 monthExpiresAt, 7 now, 8 settled TTL ms.
 * Returns {spentDay, reservedDay, spentMonth, reservedMonth} of ARGV's period.
 */
export const SETTLE = new LuaScript(`${PRELUDE}
local id, now, ttl = ARGV[1], tonumber(ARGV[7]), tonumber(ARGV[8])
local span = math.ceil(ttl / 4)
local bucket = math.floor(now / span)
local function settled_set(n) return P..'settled:'..string.format('%d', n) end
local function was_settled()
  for n = math.floor((now - ttl) / span), bucket + 1 do
    if redis.call('SISMEMBER', settled_set(n), id) == 1 then return true end
  end
  return false
end
local rec = redis.call('HGET', P..'res', id)
-- a reservation still held was never settled: settling deletes it
if rec ~= 'S' and (rec or not was_settled()) then
  local day, month, day_exp, month_exp = ARGV[3], ARGV[4], ARGV[5], ARGV[6]
  if rec then
    day, month, day_exp, month_exp = unreserve(rec)
    redis.call('HDEL', P..'res', id)
    redis.call('ZREM', P..'ids', id)
  end
  add(P..'spend:d:'..day, ARGV[2], day_exp, now)
  add(P..'spend:m:'..month, ARGV[2], month_exp, now)
  local set = settled_set(bucket)
  redis.call('SADD', set, id)
  redis.call('PEXPIRE', set, (bucket + 1) * span + ttl - now)
end
return counters(ARGV[3], ARGV[4])
`);

/**
 * SNAPSHOT: the counters of a day and its month, after releasing expired reservations.
 * ARGV: 1 day, 2 month, 3 now. Returns {spentDay, reservedDay, spentMonth, reservedMonth}.
 */
export const SNAPSHOT = new LuaScript(`${PRELUDE}
expire(tonumber(ARGV[3]))
return counters(ARGV[1], ARGV[2])
`);

/**
 * MCP call budgets. KEYS[1] is the workspace prefix; ARGV[1] is now, then per counter its key
 * suffix, limit and expiry. Nothing is counted when one counter is at its limit: `{index, counts…}`
 * (1-based); otherwise every counter is incremented: `{0, counts…}`.
 */
export const COUNT_CALL = new LuaScript(`
local P = KEYS[1]
local now = tonumber(ARGV[1])
local n = (#ARGV - 1) / 3
local counts = {}
for i = 1, n do
  local c = tonumber(redis.call('GET', P..'mcpb:'..ARGV[3*i-1]) or '0')
  counts[i] = c
  if c >= tonumber(ARGV[3*i]) then return {i, unpack(counts)} end
end
for i = 1, n do
  local k = P..'mcpb:'..ARGV[3*i-1]
  counts[i] = redis.call('INCR', k)
  local ttl = tonumber(ARGV[3*i+1]) - now
  if ttl > 0 then redis.call('PEXPIRE', k, ttl) end
end
return {0, unpack(counts)}
`);
