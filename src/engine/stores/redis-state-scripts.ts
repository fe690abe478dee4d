/**
 * The Lua scripts behind `RedisStore`. Each runs atomically in Redis. Time is always the
 * caller's (`now` from the engine's clock), never Redis TIME, so tests on a manual clock stay
 * deterministic. Numbers go back as strings: Redis turns Lua numbers in replies into integers.
 */

/**
 * Window sync. KEYS[1]: the window's hash, one field per `bucketId:field`.
 * ARGV: minId (oldest bucket id inside the window), ttlMs, then triples id, field, amount.
 * Adds the triples (skipping buckets already out of the window), drops buckets that left the
 * window, and answers every remaining field and value, flat.
 */
export const WINDOW_SYNC = `
local key = KEYS[1]
local minId = tonumber(ARGV[1])
for i = 3, #ARGV, 3 do
  if tonumber(ARGV[i]) >= minId then
    redis.call('HINCRBYFLOAT', key, ARGV[i] .. ':' .. ARGV[i + 1], ARGV[i + 2])
  end
end
local all = redis.call('HGETALL', key)
local out = {}
for i = 1, #all, 2 do
  local id = tonumber(string.match(all[i], '^(-?%d+):'))
  if id == nil or id < minId then
    redis.call('HDEL', key, all[i])
  else
    out[#out + 1] = all[i]
    out[#out + 1] = all[i + 1]
  end
end
if #out > 0 then redis.call('PEXPIRE', key, ARGV[2]) end
return out
`;

/**
 * Bucket sync. KEYS[1]: the bucket's hash (t tokens, o debt, l last refill time);
 * KEYS[2]: a sorted set of the processes that drew on it, scored by when.
 * ARGV: now, capacity, refill per ms, initial tokens, spent, refunded, member id,
 * activeMs, ttlMs, join ('1' on a process's first sync or after a refusal), since (when the
 * first of `spent` was spent; `now` if nothing was).
 *
 * The spend is taken as spread over [since, now], with that span's refill beside it: refilled
 * to `since` (capped at capacity as usual), then level + refill over the span − spent, capped
 * only at the end. Synced every 100 ms this is the plain bucket; after an outage, when a
 * process paced itself on its own share for longer than the bucket holds, it keeps that
 * spending from turning into debt the bucket never had to give (a capped refill would credit
 * at most one bucketful for the whole outage). A bucket Redis does not have (first use, or
 * expired) starts full at `since`. The refund is applied first; a shortfall becomes debt.
 *
 * ARGV[12], lastSync: when this process last synced the bucket, if it may have been lost
 * since (a sync failed after it, or it is younger than the key's TTL), else -1. A bucket
 * missing then was lost with Redis (a restart, a flush), not expired: it starts **empty** at
 * `now` (field `r`, rejoined at, set to now) and this process's spend since lastSync is not
 * charged — it was paced on its own share meanwhile — so no process is handed a fresh
 * bucketful the others spent already. A process whose lastSync is older than the bucket's `r`
 * was also away: only the part of its spend after `r` is charged (the spend taken as even over
 * [since, now]), and its refund is dropped. The answer's fourth field is '1' in both cases.
 *
 * The bound this gives: after a loss, the processes that had synced the bucket are granted,
 * over any span T, at most rate × T between them (it starts empty). A process that never
 * synced it (lastSync -1: started while Redis was away) cannot tell a lost bucket from a new
 * one; if it is the first back, the bucket starts full as on first use, so that window grants
 * at most capacity + rate × T — one bucketful more, once per loss.

 * Marks the member active if it drew or asks to join, forgets members idle for activeMs, and
 * answers { tokens, debt, sharers } where sharers counts the active members plus this one if
 * it is not among them.
 */
export const BUCKET_SYNC = `
local now = tonumber(ARGV[1])
local cap = tonumber(ARGV[2])
local rate = tonumber(ARGV[3])
local spent = tonumber(ARGV[5])
local refunded = tonumber(ARGV[6])
local member = ARGV[7]
local since = math.min(tonumber(ARGV[11]), now)
local lastSync = tonumber(ARGV[12])
local h = redis.call('HMGET', KEYS[1], 't', 'o', 'l', 'r')
local t = tonumber(h[1]) or tonumber(ARGV[4])
local o = tonumber(h[2]) or 0
local l = tonumber(h[3]) or since
local r = tonumber(h[4])
local rejoined = '0'
if h[1] == false and lastSync >= 0 then
  t = 0
  o = 0
  l = now
  r = now
  spent = 0
  refunded = 0
  rejoined = '1'
elseif r ~= nil and lastSync >= 0 and lastSync < r then
  if since < r and now > since then spent = spent * (now - r) / (now - since) end
  refunded = 0
  rejoined = '1'
end
local function credit(n)
  if o > 0 then
    local paid = math.min(n, o)
    o = o - paid
    n = n - paid
  end
  t = math.min(cap, t + n)
end
if since > l then
  credit((since - l) * rate)
  l = since
end
if refunded > 0 then credit(refunded) end
local gain = 0
if now > l then
  gain = (now - l) * rate
  l = now
end
if o > 0 then
  local paid = math.min(gain, o)
  o = o - paid
  gain = gain - paid
end
local level = t + gain - spent
if level >= 0 then
  t = math.min(cap, level)
else
  t = 0
  o = o - level
end
local fmt = '%.17g'
redis.call('HSET', KEYS[1], 't', string.format(fmt, t), 'o', string.format(fmt, o), 'l', string.format(fmt, l))
if r ~= nil then redis.call('HSET', KEYS[1], 'r', string.format(fmt, r)) end
redis.call('PEXPIRE', KEYS[1], ARGV[9])
if spent > 0 or refunded > 0 or ARGV[10] == '1' then redis.call('ZADD', KEYS[2], now, member) end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. string.format(fmt, now - tonumber(ARGV[8])))
local n = redis.call('ZCARD', KEYS[2])
if redis.call('ZSCORE', KEYS[2], member) == false then n = n + 1 end
redis.call('PEXPIRE', KEYS[2], ARGV[9])
return { string.format(fmt, t), string.format(fmt, o), tostring(n), rejoined }
`;
