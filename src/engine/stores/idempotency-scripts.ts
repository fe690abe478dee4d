/**
 * The Lua scripts behind `RedisIdempotencyStore`, one per method, each atomic in Redis.
 *
 * Time is always the caller's (`now` from the engine's clock), never Redis TIME, so tests on
 * a manual clock stay deterministic. Timestamps travel as the caller's own text (`String(n)`
 * in JS) and the scripts only compare them and store whichever text wins: Lua prints numbers
 * with 14 significant digits, so arithmetic there would round fractional epoch times, and
 * Redis would turn Lua numbers in replies into integers. The only sums the scripts make are
 * `attempts + 1` and the Redis expiry, both integers.
 *
 * A record is a hash with the fields key, status, owner, attempts, createdAt, updatedAt,
 * leaseUntil, expiresAt, and when set receipt (JSON text), error and retryable ('1' | '0').
 * One whose `expiresAt <= now` counts as absent whatever Redis still holds; the real expiry
 * set beside it only lets Redis forget the key eventually.
 */

/**
 * Added to every Redis expiry: it is computed from the caller's clock, and another process's
 * clock may run behind, so Redis must not forget a key before every process's clock says so.
 */
export const EXPIRY_MARGIN_MS = 60_000;

/** Expiries beyond this (about 30,000 years, e.g. an infinite ttl) keep the key for good. */
const MAX_EXPIRY_MS = 1e15;

/**
 * Helpers every script starts with.
 * - `live(h, now)`: the record's fields if it has not expired at `now`, else nil.
 * - `later(a, b)`: whichever of two numeric texts is larger (`Math.max`), as text.
 * - `keep(h, nowText, ttlUntil, leaseUntil)`: sets `expiresAt` to the later of the two
 *   (never before a live lease runs out) and a Redis expiry past it.
 */
const PRELUDE = `
local FIELDS = {'key', 'status', 'owner', 'attempts', 'createdAt', 'updatedAt', 'leaseUntil', 'expiresAt', 'receipt', 'error', 'retryable'}
local function live(h, now)
  local values = redis.call('HMGET', h, unpack(FIELDS))
  local expiresAt = tonumber(values[8])
  if expiresAt == nil or not (now < expiresAt) then return nil end
  local r = {}
  for i, name in ipairs(FIELDS) do r[name] = values[i] end
  return r
end
local function later(a, b)
  if tonumber(b) > tonumber(a) then return b end
  return a
end
local function keep(h, nowText, ttlUntil, leaseUntil)
  local expiresAt = later(ttlUntil, leaseUntil)
  redis.call('HSET', h, 'expiresAt', expiresAt)
  local ms = tonumber(expiresAt) - tonumber(nowText)
  if ms < ${MAX_EXPIRY_MS} then
    redis.call('PEXPIRE', h, string.format('%d', math.max(0, math.ceil(ms)) + ${EXPIRY_MARGIN_MS}))
  else
    redis.call('PERSIST', h)
  end
end
`;

/**
 * begin. KEYS[1]: the record's hash. ARGV: key, owner, now, now + leaseMs, now + ttlMs.
 * Answers { outcome, flat fields }: a fresh record when none is live, a retake (attempts + 1,
 * error cleared) when the lease ran out or the last failure was retryable, else the record
 * as it stands.
 */
export const BEGIN = `${PRELUDE}
local h = KEYS[1]
local now = tonumber(ARGV[3])
local r = live(h, now)
if r == nil then
  redis.call('DEL', h)
  redis.call('HSET', h, 'key', ARGV[1], 'status', 'in_progress', 'owner', ARGV[2], 'attempts', '1',
    'createdAt', ARGV[3], 'updatedAt', ARGV[3], 'leaseUntil', ARGV[4])
  keep(h, ARGV[3], ARGV[5], ARGV[4])
  return {'acquired', redis.call('HGETALL', h)}
end
if r.status == 'succeeded' then return {'succeeded', redis.call('HGETALL', h)} end
local leaseUntil = tonumber(r.leaseUntil)
if r.status == 'in_progress' and leaseUntil ~= nil and now < leaseUntil then
  return {'in_progress', redis.call('HGETALL', h)}
end
if r.status == 'failed' and r.retryable ~= '1' then return {'failed', redis.call('HGETALL', h)} end
redis.call('HSET', h, 'status', 'in_progress', 'owner', ARGV[2], 'attempts', tostring((tonumber(r.attempts) or 0) + 1),
  'updatedAt', ARGV[3], 'leaseUntil', ARGV[4])
redis.call('HDEL', h, 'error', 'retryable')
keep(h, ARGV[3], ARGV[5], ARGV[4])
return {'acquired', redis.call('HGETALL', h)}
`;

/** The record's fields if `owner` holds it at `now` (a lease that ran out but was not retaken still counts). */
const HELD = `
local function held(h, owner, now)
  local r = live(h, now)
  if r == nil or r.status ~= 'in_progress' or r.owner ~= owner then return nil end
  return r
end
`;

/**
 * succeed. KEYS[1]: the record's hash. ARGV: owner, now, now + ttlMs, '1' if there is a
 * receipt (JSON.stringify can answer undefined) else '0', the receipt's JSON text.
 * Answers 1, or 0 (nothing changed) if `owner` does not hold the key.
 */
export const SUCCEED = `${PRELUDE}${HELD}
local h = KEYS[1]
if held(h, ARGV[1], tonumber(ARGV[2])) == nil then return 0 end
redis.call('HSET', h, 'status', 'succeeded', 'updatedAt', ARGV[2], 'leaseUntil', '0')
if ARGV[4] == '1' then redis.call('HSET', h, 'receipt', ARGV[5]) else redis.call('HDEL', h, 'receipt') end
keep(h, ARGV[2], ARGV[3], '0')
return 1
`;

/**
 * fail. KEYS[1]: the record's hash. ARGV: owner, now, now + ttlMs, error text, '1' if
 * retryable else '0'. Answers 1, or 0 (nothing changed) if `owner` does not hold the key.
 */
export const FAIL = `${PRELUDE}${HELD}
local h = KEYS[1]
if held(h, ARGV[1], tonumber(ARGV[2])) == nil then return 0 end
redis.call('HSET', h, 'status', 'failed', 'updatedAt', ARGV[2], 'leaseUntil', '0', 'error', ARGV[4], 'retryable', ARGV[5])
keep(h, ARGV[2], ARGV[3], '0')
return 1
`;

/**
 * renew. KEYS[1]: the record's hash. ARGV: owner, now, now + ttlMs, now + leaseMs.
 * The lease only ever grows. Answers 1, or 0 (nothing changed) if `owner` does not hold the key.
 */
export const RENEW = `${PRELUDE}${HELD}
local h = KEYS[1]
local r = held(h, ARGV[1], tonumber(ARGV[2]))
if r == nil then return 0 end
local leaseUntil = later(r.leaseUntil, ARGV[4])
redis.call('HSET', h, 'updatedAt', ARGV[2], 'leaseUntil', leaseUntil)
keep(h, ARGV[2], ARGV[3], leaseUntil)
return 1
`;

/**
 * get. KEYS[1]: the record's hash. ARGV: now. Answers the flat fields, or nil when no record
 * is live. Reads only: an expired record is left for Redis's own expiry (or the next begin).
 */
export const GET = `${PRELUDE}
local h = KEYS[1]
if live(h, tonumber(ARGV[1])) == nil then return false end
return redis.call('HGETALL', h)
`;
