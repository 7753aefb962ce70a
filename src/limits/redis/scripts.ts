/**
 * The Lua scripts of the Redis gate. Each runs atomically on the Redis
 * server and reads the time from the server's `TIME`, so runners' clocks
 * never matter. Key layout (every key shares one `{accountKey}` hash tag, so
 * a Redis Cluster keeps an account on one node):
 *
 *   KEYS[1] queue    ZSET ticket -> sequence number (arrival order, breaks ties)
 *   KEYS[2] tickets  HASH ticket -> its start tag and buckets, e.g. "7.25@1,2"
 *   KEYS[3] leases   ZSET ticket -> lease expiry (a dead runner's tickets lapse)
 *   KEYS[4] pause    STRING ms epoch until which every bucket is paused (429)
 *   KEYS[5] seq      STRING ticket counter
 *   KEYS[6..9]   log:<bucket>      ZSET member -> slot expiry (grants)
 *   KEYS[10..13] phantom:<bucket>  ZSET member -> slot expiry (others' use)
 *   KEYS[14] fair    HASH "v" -> the virtual time (latest start tag granted);
 *                    "<runner>" -> the runner's next start tag
 *   KEYS[15..18] vtag:<bucket>    ZSET granted member -> its start tag (read only
 *                while the member is in log:<bucket>: any script may drop a slot)
 *   KEYS[19] runners ZSET runner -> last seen (its fair fields go when it is long gone)
 *
 * Buckets are numbered 1..4 in `BUCKETS` order.
 *
 * The keys carry the layout's version (`KEY_LAYOUT`): bump it whenever a
 * key or a stored form changes, so runners of another layout use other keys
 * instead of misreading these (the first layout stored a ticket as "1,2",
 * read as bucket digits; a tag there breaks it, and "1,2" breaks `parse`).
 *
 * Fair sharing is start-time fair queuing: each ticket takes its runner's
 * tag as its start tag, and the runner's tag advances by the ticket's cost
 * (the part of each bucket's window it takes, 1/count per bucket, divided
 * by the runner's share). Tickets wait in (start tag, arrival) order, one
 * order for every bucket, so a ticket never waits for one that waits for it.
 * A runner whose tag is behind joins at the tag of the oldest grant still in
 * the windows of its ticket's buckets: it gets back, before the others go
 * on, what each of them took in the window it missed (so runs started a
 * moment apart finish together), never more than one window of it.
 */
import { BUCKETS, type Bucket } from '../../contract/index.js';

/** The version of this key layout, in every key after the prefix. */
export const KEY_LAYOUT = 'v2:';

/** The 19 keys of one account, in the order the scripts expect. */
export function accountKeys(prefix: string): string[] {
  return [
    `${prefix}queue`,
    `${prefix}tickets`,
    `${prefix}leases`,
    `${prefix}pause`,
    `${prefix}seq`,
    ...BUCKETS.map((bucket) => `${prefix}log:${bucket}`),
    ...BUCKETS.map((bucket) => `${prefix}phantom:${bucket}`),
    `${prefix}fair`,
    ...BUCKETS.map((bucket) => `${prefix}vtag:${bucket}`),
    `${prefix}runners`,
  ];
}

/** "1,2" for ['requests', 'generations']. */
export function bucketMask(buckets: readonly Bucket[]): string {
  return buckets.map((bucket) => BUCKETS.indexOf(bucket) + 1).join(',');
}

const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/**
 * ARGV: 1 ticket, 2 bucket mask, 3 lease ms, 4 "1" to return the live slots,
 * then per bucket (1..4): count, slot life (window + margin) in ms; 13 the
 * runner, 14 its share (weight).
 *
 * Enqueues the ticket if new (with its start tag, see above), then grants
 * iff no pause is active and every bucket of the ticket has a free slot
 * beyond one claimed slot per waiting ticket ahead of it using that bucket
 * (all-or-nothing, never holding a slot while waiting). Returns {granted,
 * now, pausedUntil, wakeAt, [8 expiry lists: log 1..4, phantom 1..4]};
 * wakeAt is when enough slots will have expired for this ticket (a lower
 * bound when tickets ahead must be served first; 0 when granted or paused).
 */
export const ACQUIRE_SCRIPT = `${NOW}
local ticket = ARGV[1]
local leaseMs = tonumber(ARGV[3])
local runner, share = ARGV[13], tonumber(ARGV[14])
local count, life = {}, {}
local maxLife = 0
for b = 1, 4 do
  count[b] = tonumber(ARGV[3 + 2 * b])
  life[b] = tonumber(ARGV[4 + 2 * b])
  if life[b] > maxLife then maxLife = life[b] end
  redis.call('ZREMRANGEBYSCORE', KEYS[5 + b], '-inf', now)
  redis.call('ZREMRANGEBYSCORE', KEYS[9 + b], '-inf', now)
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
  redis.call('ZREM', KEYS[3], id)
end
-- Runners gone for longer than any slot or lease: their tags no longer matter.
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[19], '-inf', now - maxLife - leaseMs)) do
  redis.call('HDEL', KEYS[14], id)
  redis.call('ZREM', KEYS[19], id)
end
redis.call('ZADD', KEYS[19], now, runner)

local function tag(x) return string.format('%.17g', x) end
-- The start tag of the oldest grant whose slot is still in bucket i's log.
-- Entries whose slot left the log (expired here, or removed by SHRINK) go first.
local function oldest(i)
  while true do
    local head = redis.call('ZRANGE', KEYS[14 + i], 0, 0, 'WITHSCORES')
    if not head[1] then return nil end
    if redis.call('ZSCORE', KEYS[5 + i], head[1]) then return tonumber(head[2]) end
    redis.call('ZREM', KEYS[14 + i], head[1])
  end
end
local seq = tonumber(redis.call('ZSCORE', KEYS[1], ticket))
local spec = redis.call('HGET', KEYS[2], ticket)
if not seq or not spec then
  seq = redis.call('INCR', KEYS[5])
  local join, cost = nil, 0
  for b in string.gmatch(ARGV[2], '%d') do
    local i = tonumber(b)
    local at = oldest(i) or tonumber(redis.call('HGET', KEYS[14], 'v') or '0')
    if not join or at > join then join = at end
    cost = cost + 1 / math.max(1, count[i])
  end
  local start = math.max(join or 0, tonumber(redis.call('HGET', KEYS[14], runner) or '0'))
  redis.call('HSET', KEYS[14], runner, tag(start + cost / share))
  spec = tag(start) .. '@' .. ARGV[2]
  redis.call('ZADD', KEYS[1], seq, ticket)
  redis.call('HSET', KEYS[2], ticket, spec)
end
redis.call('ZADD', KEYS[3], now + leaseMs, ticket)
for _, k in ipairs({1, 2, 3, 4, 5, 14, 19}) do redis.call('PEXPIRE', KEYS[k], maxLife + leaseMs) end

local function parse(text)
  local at = string.find(text, '@', 1, true)
  return tonumber(string.sub(text, 1, at - 1)), string.sub(text, at + 1)
end
local start, mask = parse(spec)
local mine = {}
for b in string.gmatch(mask, '%d') do mine[#mine + 1] = tonumber(b) end
local pause = tonumber(redis.call('GET', KEYS[4]) or '0')

local free = {}
for b = 1, 4 do
  free[b] = count[b] - redis.call('ZCARD', KEYS[5 + b]) - redis.call('ZCARD', KEYS[9 + b])
end
-- Ahead: a smaller start tag, or the same tag and an earlier arrival.
local ahead = {0, 0, 0, 0}
local queue = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
for q = 1, #queue, 2 do
  local theirs = queue[q] ~= ticket and redis.call('HGET', KEYS[2], queue[q])
  if theirs then
    local t, buckets = parse(theirs)
    if t < start or (t == start and tonumber(queue[q + 1]) < seq) then
      for b in string.gmatch(buckets, '%d') do
        local i = tonumber(b)
        ahead[i] = ahead[i] + 1
      end
    end
  end
end

local granted = 0
local wakeAt = 0
if pause <= now then
  local fits = true
  for _, b in ipairs(mine) do
    if free[b] - ahead[b] < 1 then fits = false end
  end
  if fits then
    for _, b in ipairs(mine) do
      redis.call('ZADD', KEYS[5 + b], now + life[b], ticket)
      redis.call('PEXPIRE', KEYS[5 + b], life[b])
      redis.call('ZADD', KEYS[14 + b], tag(start), ticket)
      redis.call('PEXPIRE', KEYS[14 + b], life[b])
    end
    if start > tonumber(redis.call('HGET', KEYS[14], 'v') or '0') then
      redis.call('HSET', KEYS[14], 'v', tag(start))
    end
    redis.call('ZREM', KEYS[1], ticket)
    redis.call('HDEL', KEYS[2], ticket)
    redis.call('ZREM', KEYS[3], ticket)
    granted = 1
  else
    for _, b in ipairs(mine) do
      local short = ahead[b] + 1 - free[b]
      if short > 0 then
        -- when the short-th slot frees: a live slot's expiry, or beyond them a
        -- lower bound assuming every freed slot is taken again at once
        local all = {}
        for _, k in ipairs({5 + b, 9 + b}) do
          local entries = redis.call('ZRANGE', KEYS[k], 0, -1, 'WITHSCORES')
          for i = 2, #entries, 2 do all[#all + 1] = tonumber(entries[i]) end
        end
        table.sort(all)
        local at
        if short <= #all then
          at = all[short]
        else
          local cycle = {}
          for i = 1, count[b] - #all do cycle[#cycle + 1] = now end
          for i = 1, #all do cycle[#cycle + 1] = all[i] end
          local j = short - #all - 1
          if #cycle == 0 then
            at = now + life[b]
          else
            at = cycle[(j % #cycle) + 1] + life[b] * (math.floor(j / #cycle) + 1)
          end
        end
        if at > wakeAt then wakeAt = at end
      end
    end
  end
end

local reply = {granted, now, pause, wakeAt}
for k = 6, 13 do
  if ARGV[4] == '1' then
    local scores = {}
    local entries = redis.call('ZRANGE', KEYS[k], 0, -1, 'WITHSCORES')
    for i = 2, #entries, 2 do scores[#scores + 1] = entries[i] end
    reply[#reply + 1] = scores
  else
    reply[#reply + 1] = {}
  end
end
return reply
`;

/** ARGV: tickets to forget (an aborted wait, a closed gate). */
export const CANCEL_SCRIPT = `
for i = 1, #ARGV do
  redis.call('ZREM', KEYS[1], ARGV[i])
  redis.call('HDEL', KEYS[2], ARGV[i])
  redis.call('ZREM', KEYS[3], ARGV[i])
end
return #ARGV
`;

/**
 * KEYS[1] pause. ARGV: 1 "rel" (ms from the server's now) or "abs" (server
 * ms epoch), 2 the value. The later pause wins. Returns {pausedUntil, now}.
 */
export const PAUSE_SCRIPT = `${NOW}
local untilMs = tonumber(ARGV[2])
if ARGV[1] == 'rel' then untilMs = now + untilMs end
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if untilMs > current and untilMs > now then
  redis.call('SET', KEYS[1], untilMs, 'PX', untilMs - now + 1000)
  current = untilMs
end
return {current, now}
`;

/**
 * KEYS: log, phantom of one bucket. ARGV: 1 count, 2 slot life, 3 the
 * service's X-RateLimit-Remaining, 4 member prefix. Adds phantom slots so the
 * shared free count is no more than what the service says remains.
 * Returns {added, phantoms, now}.
 */
export const SHRINK_SCRIPT = `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local free = tonumber(ARGV[1]) - redis.call('ZCARD', KEYS[1]) - redis.call('ZCARD', KEYS[2])
local remaining = tonumber(ARGV[3])
if remaining < 0 then remaining = 0 end
local added = free - remaining
if added < 0 then added = 0 end
for i = 1, added do
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[4] .. i)
end
if added > 0 then redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[2])) end
return {added, redis.call('ZCARD', KEYS[2]), now}
`;

/**
 * KEYS: the log of each bucket of one grant. ARGV: 1 the grant's member,
 * 2.. slot life per key. Re-stamps the slot from the server's now (the
 * response time): the request surely arrived before its response, so the
 * slot now outlives the service's window whatever the request's delay.
 */
export const EXTEND_SCRIPT = `${NOW}
for i = 1, #KEYS do
  local life = tonumber(ARGV[i + 1])
  redis.call('ZADD', KEYS[i], 'GT', now + life, ARGV[1])
  redis.call('PEXPIRE', KEYS[i], life)
end
return now
`;
