-- kumo's shared frontier in Redis: a function library (FUNCTION LOAD once, then one FCALL per
-- call), one operation per call, run atomically. Its helpers are made once, when the library
-- is loaded, not on every call. The library and its function are named after a hash of this
-- text (`KUMO_FN`, filled in by `call.rs`), so workers of two kumo versions never replace each
-- other's.
--
-- KEYS[1] is the crawl's key prefix `kumo:{crawl}:` (one hash tag: one slot on a cluster).
-- ARGV: op, incarnation, the id of the crawl the worker joined ('' from outside a crawl), then
-- a prelude every call carries (leases released and host adjustments buffered by the worker
-- since its last call, and its counters), then the op's own arguments.
-- Every time is Redis's clock in milliseconds (TIME): workers' clocks never decide politeness
-- or lease expiry. Every write is idempotent under retry: commits carry a sequence number per
-- incarnation, lease ids are minted by the worker (incarnation:counter), so a call whose reply
-- was lost can be sent again.

-- What every call sets first (`setup`): the key prefix, the arguments, Redis's time.
local P, argv, pos, now, op, inc, INC_PREFIX
local K_STATS, K_READY, K_DL, K_DN, K_ALIVE, K_META, K_POL, K_HOSTS, K_SEEN
-- Lua 5.1 looks a global up on every use: the string functions of the hot paths, once a call
-- (a library may not read globals while it loads).
local sub, find
local function arg()
  local v = argv[pos]
  pos = pos + 1
  return v
end
local function num()
  return tonumber(arg())
end


local function int(x)
  return string.format('%d', x)
end

-- Liveness is a deadline per incarnation in `alive` (its last beat plus its own dead_after).
-- While Redis was away (or nothing called it), nobody could beat: every deadline moves on by
-- the gap, so an outage longer than dead_after kills no worker. `tick` is the last time a
-- lease call or a heartbeat ran; it is looked at before any worker is reaped.
local function mind_the_gap()
  local last = tonumber(redis.call('HGET', K_META, 'tick'))
  if last and now - last > 1000 then
    local all = redis.call('ZRANGE', K_ALIVE, 0, -1, 'WITHSCORES')
    for i = 1, #all, 2 do
      redis.call('ZADD', K_ALIVE, tonumber(all[i + 1]) + (now - last), all[i])
    end
  end
  redis.call('HSET', K_META, 'tick', now)
end

-- One command over many members (HMGET, SMISMEMBER, HDEL, ...), in chunks that Lua's stack
-- takes; the replies of the chunks concatenated, or the last one for a count.
local CHUNK = 1000
local function call_many(cmd, key, list)
  local out = {}
  local last
  for i = 1, #list, CHUNK do
    last = redis.call(cmd, key, unpack(list, i, math.min(i + CHUNK - 1, #list)))
    if type(last) == 'table' then
      for _, v in ipairs(last) do
        out[#out + 1] = v
      end
    end
  end
  return out, last
end

local function hnum(key, field)
  return tonumber(redis.call('HGET', key, field)) or 0
end
-- Changes to hosts' counters (`q`, `inf`, `bo`) and to the crawl's stats are gathered during
-- the call and written once (`flush`), where every host they touched is rescheduled: a commit
-- of dozens of pages touches a host once, not once per page.
local sdelta, hdelta, touched
local function stat(field, by)
  sdelta[field] = (sdelta[field] or 0) + by
end
local function touch(host)
  if not hdelta[host] then
    hdelta[host] = {}
    touched[#touched + 1] = host
  end
end
local function bump(host, field, by)
  touch(host)
  hdelta[host][field] = (hdelta[host][field] or 0) + by
end

-- Leases live in their incarnation's hash `wl:INC`, lease id -> record: batch NUL host NUL
-- level NUL request JSON. A batch is the leases one lease call handed out (`INC:BASE:N`, ids
-- INC:BASE to INC:BASE+N-1): their hard deadline is one member of `dl`, and `dn` counts how
-- many of them are still out, so a completion costs no sorted-set write.
local function batch_and_host(v)
  local a = find(v, '\0', 1, true)
  return sub(v, 1, a - 1), sub(v, a + 1, find(v, '\0', a + 1, true) - 1)
end
local function split_lease(v)
  local a = find(v, '\0', 1, true)
  local b = find(v, '\0', a + 1, true)
  local c = find(v, '\0', b + 1, true)
  return sub(v, a + 1, b - 1), sub(v, b + 1, c - 1), sub(v, c + 1)
end
local function lease_inc(lk)
  return sub(lk, 1, find(lk, ':', 1, true) - 1)
end
local function wl(owner)
  return P .. 'wl:' .. owner
end

-- Hosts ----------------------------------------------------------------------------------

local function hk(host)
  return P .. 'h:' .. host
end

-- Creates the host's record from its rule's policy (`par|delay|random|limits`) if new.
local known
local function host_for(host, rule)
  local k = known[host]
  if k then
    return k
  end
  k = hk(host)
  known[host] = k
  if redis.call('EXISTS', k) == 1 then
    return k
  end
  local spec = redis.call('HGET', K_POL, rule) or redis.call('HGET', K_POL, '0') or '8|0|0|'
  local par, d, rd, rl = string.match(spec, '^([^|]*)|([^|]*)|([^|]*)|(.*)$')
  redis.call('HSET', k, 'par', par, 'd', d, 'rd', rd, 'rl', rl, 'q', 0, 'bo', 0, 'inf', 0,
    'last', 0, 'next', 0, 'pause', 0, 'hold', 0, 'floor', 0, 'learn', -1)
  redis.call('SADD', K_HOSTS, host)
  stat('hosts', 1)
  return k
end

local function delay_of(k)
  local v = redis.call('HMGET', k, 'd', 'floor', 'learn')
  return math.max(tonumber(v[1]) or 0, tonumber(v[2]) or 0, tonumber(v[3]) or 0)
end

-- The margin added to a delay or a rate window: 10 % (at most 50 ms), twice the embedded
-- store's, since a lease handed out here reaches its server through a reply, a worker's
-- scheduler and its downloaders, whose delays the server sees as a shorter gap.
local function margin(d)
  return math.min(math.floor(d / 10), 50)
end

-- The spacing to the next lease: the delay, its margin so the server never sees a shorter
-- gap, and a random share of the random delay.
local rnd_state
local function gap_of(d, rd)
  if d == 0 and rd == 0 then
    return 0
  end
  local r = 0
  if rd > 0 then
    rnd_state = (rnd_state * 1103515245 + 12345) % 2147483648
    r = math.floor(rd * rnd_state / 2147483648)
  end
  return d + margin(d) + r
end

local function gap(k)
  return gap_of(delay_of(k), hnum(k, 'rd'))
end

-- When the host's rate limits next allow a lease (0: now). Limits are `max/per_ms,...`,
-- the window widened as delays are; `rt:` keeps the most recent lease times, newest first.
local function rate_at(host, rl)
  if not rl or rl == '' then
    return 0
  end
  local at = 0
  for max, per in string.gmatch(rl, '(%d+)/(%d+)') do
    max = tonumber(max)
    per = tonumber(per)
    per = per + margin(per)
    local t = redis.call('LINDEX', P .. 'rt:' .. host, max - 1)
    if t then
      at = math.max(at, tonumber(t) + per)
    end
  end
  return at
end

local function note_rate(host, rl)
  if not rl or rl == '' then
    return
  end
  local keep = 0
  for max in string.gmatch(rl, '(%d+)/%d+') do
    keep = math.max(keep, tonumber(max))
  end
  local rk = P .. 'rt:' .. host
  redis.call('LPUSH', rk, now)
  redis.call('LTRIM', rk, 0, keep - 1)
end

-- The one place a host's hand-out time is decided: in `ready` iff it has queued work and a
-- free slot, at the latest of its next paced lease, its pause, its hold, its rate limits and,
-- when all its work backs off, its earliest back-off.
local function place(host, q, bo, inf, par, at, rl)
  if q <= 0 or inf >= par then
    redis.call('ZREM', K_READY, host)
    return
  end
  if q - bo <= 0 then
    local first = redis.call('ZRANGE', P .. 'bo:' .. host, 0, 0, 'WITHSCORES')
    if first[2] then
      at = math.max(at, tonumber(first[2]))
    end
  end
  redis.call('ZADD', K_READY, math.max(at, rate_at(host, rl)), host)
end

local function resched(host)
  local v = redis.call('HMGET', hk(host), 'q', 'bo', 'inf', 'par', 'next', 'pause', 'hold', 'rl')
  local at = math.max(tonumber(v[5]) or 0, tonumber(v[6]) or 0, tonumber(v[7]) or 0)
  place(host, tonumber(v[1]) or 0, tonumber(v[2]) or 0, tonumber(v[3]) or 0, tonumber(v[4]) or 1, at, v[8])
end

-- Requests for the back of their level, gathered (host -> level -> list) and pushed with one
-- RPUSH per level; a level's key is made once per call, not once per request.
local tails, tail_keys

-- Writes the gathered changes and reschedules the hosts they touched.
local function flush()
  for _, t in ipairs(tail_keys) do
    local _, len = call_many('RPUSH', P .. 'q:' .. t.host .. ':' .. t.level, t)
    if len == #t then
      -- The list was empty: its level joins the host's levels.
      redis.call('ZADD', P .. 'lv:' .. t.host, -tonumber(t.level), t.level)
    end
  end
  tails, tail_keys = {}, {}
  for _, host in ipairs(touched) do
    local k = hk(host)
    for field, by in pairs(hdelta[host]) do
      if by ~= 0 then
        redis.call('HINCRBY', k, field, by)
      end
    end
    resched(host)
  end
  hdelta, touched = {}, {}
  for field, by in pairs(sdelta) do
    if by ~= 0 then
      redis.call('HINCRBY', K_STATS, field, by)
    end
  end
  sdelta = {}
end

-- Queues ---------------------------------------------------------------------------------

local function push_level(host, level, json, front)
  if not front then
    local levels = tails[host]
    if not levels then
      levels = {}
      tails[host] = levels
    end
    local t = levels[level]
    if not t then
      t = { host = host, level = level }
      levels[level] = t
      tail_keys[#tail_keys + 1] = t
    end
    t[#t + 1] = json
    return
  end
  if redis.call('LPUSH', P .. 'q:' .. host .. ':' .. level, json) == 1 then
    redis.call('ZADD', P .. 'lv:' .. host, -tonumber(level), level)
  end
end

-- Up to `want` requests from the host's best levels, best first, as { level, JSON } pairs. A
-- level is dropped from `lv:` once it gives fewer than asked (it is empty).
local function pop_many(host, want)
  local lvk = P .. 'lv:' .. host
  local out = {}
  while #out < want do
    local best = redis.call('ZRANGE', lvk, 0, 0)[1]
    if not best then
      break
    end
    local asked = want - #out
    local got = redis.call('LPOP', P .. 'q:' .. host .. ':' .. best, asked)
    if got then
      for _, json in ipairs(got) do
        out[#out + 1] = { best, json }
      end
    end
    if not got or #got < asked then
      redis.call('ZREM', lvk, best)
    end
  end
  return out
end

local function enqueue(host, rule, level, json, front)
  host_for(host, rule)
  push_level(host, level, json, front)
  bump(host, 'q', 1)
  stat('queued', 1)
end

-- Seen-checks a fingerprint (16 bytes), sent split: its first two bytes choose the bucket,
-- the other fourteen are the field.
local function first_seen(bucket, rest)
  return redis.call('HSETNX', K_SEEN .. bucket, rest, '') == 1
end

-- Reads `n` discoveries (fingerprint as bucket and rest, host, rule, level, JSON) from the
-- arguments and queues the new ones. Returns added, seen.
local function push_many(n)
  local added, seen = 0, 0
  for _ = 1, n do
    local bucket, rest, host, rule, level, json = arg(), arg(), arg(), arg(), arg(), arg()
    if first_seen(bucket, rest) then
      enqueue(host, rule, level, json, false)
      added = added + 1
    else
      seen = seen + 1
    end
  end
  return added, seen
end

-- Moves the host's back-offs that are due to the front of their levels, earliest first.
local function wake_due(host)
  local bk = P .. 'bo:' .. host
  local due = redis.call('ZRANGEBYSCORE', bk, '-inf', now)
  for i = #due, 1, -1 do
    local m = due[i]
    local a = find(m, '\0', 1, true)
    local b = find(m, '\0', a + 1, true)
    push_level(host, sub(m, a + 1, b - 1), sub(m, b + 1), true)
    redis.call('ZREM', bk, m)
  end
  if #due > 0 then
    redis.call('HINCRBY', hk(host), 'bo', -#due)
  end
  return #due
end

-- Leases ---------------------------------------------------------------------------------

-- Removes leases that are out, with a few commands for all of them. Returns lease id ->
-- record, and lease id -> host, for those that were out; the others are stale.
local function take_many(lks)
  local by_inc, seen = {}, {}
  for _, lk in ipairs(lks) do
    if not seen[lk] then
      seen[lk] = true
      -- Most are the calling incarnation's own: one search, no new string.
      local owner = (find(lk, INC_PREFIX, 1, true) == 1) and inc or lease_inc(lk)
      local list = by_inc[owner]
      if not list then
        list = {}
        by_inc[owner] = list
      end
      list[#list + 1] = lk
    end
  end
  local found, found_host = {}, {}
  local taken, batches, batch_list = 0, {}, {}
  for owner, list in pairs(by_inc) do
    local vals = call_many('HMGET', wl(owner), list)
    local gone, per_host = {}, {}
    for i, lk in ipairs(list) do
      local v = vals[i]
      if v then
        found[lk] = v
        gone[#gone + 1] = lk
        local b, host = batch_and_host(v)
        found_host[lk] = host
        per_host[host] = (per_host[host] or 0) + 1
        if not batches[b] then
          batches[b] = 0
          batch_list[#batch_list + 1] = b
        end
        batches[b] = batches[b] + 1
      end
    end
    if #gone > 0 then
      call_many('HDEL', wl(owner), gone)
      for host, n in pairs(per_host) do
        redis.call('HINCRBY', P .. 'lh:' .. owner, host, -n)
      end
      taken = taken + #gone
    end
  end
  -- A batch whose leases are all back leaves the deadlines.
  for _, b in ipairs(batch_list) do
    if redis.call('HINCRBY', K_DN, b, -batches[b]) <= 0 then
      redis.call('HDEL', K_DN, b)
      redis.call('ZREM', K_DL, b)
    end
  end
  if taken > 0 then
    stat('leased', -taken)
  end
  return found, found_host
end

-- Puts leases' requests back at the front of their levels (expiry, a dead worker).
local function requeue_many(lks)
  local found = take_many(lks)
  for _, lk in ipairs(lks) do
    local v = found[lk]
    if v then
      found[lk] = nil
      local host, level, json = split_lease(v)
      push_level(host, level, json, true)
      bump(host, 'q', 1)
      stat('queued', 1)
    end
  end
end

-- Hands every lease of a gone incarnation back and forgets it.
local function bury(old)
  requeue_many(redis.call('HKEYS', wl(old)))
  local held = redis.call('HGETALL', P .. 'sl:' .. old)
  for i = 1, #held, 2 do
    bump(held[i], 'inf', -tonumber(held[i + 1]))
  end
  redis.call('DEL', wl(old), P .. 'sl:' .. old, P .. 'lh:' .. old)
  redis.call('ZREM', K_ALIVE, old)
  flush()
end

-- Leases past their hard deadline, and every lease of incarnations past their liveness
-- deadline. At most every 100 ms: lease calls come far more often than leases expire. When
-- this library last reaped each crawl is remembered between calls (it saves a read on most
-- lease calls); `tick` in Redis stays the truth (a reloaded library starts from it).
local reaped_at = {}
local function reap()
  if now - (reaped_at[P] or 0) < 100 or now - hnum(K_META, 'tick') < 100 then
    return
  end
  reaped_at[P] = now
  mind_the_gap()
  for _, b in ipairs(redis.call('ZRANGEBYSCORE', K_DL, '-inf', now, 'LIMIT', 0, 16)) do
    local owner, base, n = string.match(b, '^(.*):(%d+):(%d+)$')
    local lks = {}
    for i = 0, tonumber(n) - 1 do
      lks[#lks + 1] = owner .. ':' .. int(tonumber(base) + i)
    end
    requeue_many(lks)
    redis.call('HDEL', K_DN, b)
    redis.call('ZREM', K_DL, b)
  end
  for _, old in ipairs(redis.call('ZRANGEBYSCORE', K_ALIVE, '-inf', now, 'LIMIT', 0, 16)) do
    bury(old)
  end
end

-- Prelude: releases, then host adjustments --------------------------------------------------

-- Slots a worker gives back: it now holds `n` of the host's (an absolute count, so a call sent
-- again changes nothing more). Only ever lowers what Redis has: slots are granted by leasing.
local function hold_at(host, n)
  local slk = P .. 'sl:' .. inc
  local old = tonumber(redis.call('HGET', slk, host)) or 0
  if n < old then
    bump(host, 'inf', n - old)
    if n > 0 then
      redis.call('HSET', slk, host, n)
    else
      redis.call('HDEL', slk, host)
    end
  end
end

-- Reserved requests a worker hands back unstarted (a host paused or slowed since): to the
-- front of their levels, as a lease of a dead worker would go.
local function give_back(lks)
  local mine = {}
  for _, lk in ipairs(lks) do
    if lease_inc(lk) == inc then
      mine[#mine + 1] = lk
    end
  end
  requeue_many(mine)
end

-- The crawl's politeness epoch (`pe` in stats) moves when a host is paused or slowed from no
-- delay: workers holding requests in reserve for it hand them back.
local function adjust(host, rule, min_delay, pause, learned)
  local k = host_for(host, rule)
  if pause ~= '' or ((min_delay ~= '' or learned ~= '') and delay_of(k) == 0) then
    stat('pe', 1)
  end
  if min_delay ~= '' then
    local floor = hnum(k, 'floor')
    if tonumber(min_delay) > floor then
      redis.call('HSET', k, 'floor', min_delay)
    end
  end
  if pause ~= '' then
    local until_ = now + tonumber(pause)
    if until_ > hnum(k, 'pause') then
      redis.call('HSET', k, 'pause', int(until_))
    end
  end
  if learned ~= '' then
    redis.call('HSET', k, 'learn', int(math.max(tonumber(learned), hnum(k, 'd'))))
  end
  if min_delay ~= '' or learned ~= '' then
    -- A changed delay counts from the last lease at once.
    local last = hnum(k, 'last')
    if last > 0 then
      redis.call('HSET', k, 'next', int(last + gap(k)))
    end
  end
  touch(host)
end


local cid
local function setup(keys, args)
  if keys[1] ~= P then
    P = keys[1]
    K_STATS, K_READY, K_DL, K_DN = P .. 'stats', P .. 'ready', P .. 'dl', P .. 'dn'
    K_ALIVE, K_META, K_POL, K_HOSTS = P .. 'alive', P .. 'meta', P .. 'pol', P .. 'hosts'
    K_SEEN = P .. 's:'
  end
  argv, pos = args, 1
  sub, find = string.sub, string.find
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  op, inc, cid = arg(), arg(), arg()
  INC_PREFIX = inc .. ':'
  sdelta, hdelta, touched, known, tails, tail_keys = {}, {}, {}, {}, {}, {}
  rnd_state = 0
end

-- The workers alive now: at least the caller.
local function live_workers()
  return math.max(1, redis.call('ZCOUNT', K_ALIVE, now, '+inf'))
end

-- A worker's share of a host's slots, so that workers split a busy host: its parallelism
-- (`par`, read from the host's hash when not given) over the live workers, rounded up.
local function share_of(host, live, par)
  par = par or tonumber(redis.call('HGET', hk(host), 'par')) or 1
  return math.ceil(par / live)
end

-- Readiness: 0 now, 1 at +ms, 2 blocked on this worker's own leases, 3 empty (nothing queued
-- and nothing out but this worker's), 4 wait for other workers (poll).
-- `holding`: this worker is known to hold leases (it was just handed some).
-- When the first of the earliest ready hosts this worker may take more slots of is ready;
-- nil if none is listed, or if each listed one gives this worker its share already (workers
-- split a busy host: asking again would only be refused). The second value says whether any
-- host was listed.
local function ready_for_me()
  local first = redis.call('ZRANGE', K_READY, 0, 7, 'WITHSCORES')
  if #first == 0 then
    return nil, false
  end
  local slk, live = P .. 'sl:' .. inc, nil
  for i = 1, #first, 2 do
    local host = first[i]
    local mine = tonumber(redis.call('HGET', slk, host)) or 0
    local full = false
    if mine > 0 then
      live = live or live_workers()
      full = mine >= share_of(host, live)
    end
    if not full then
      return tonumber(first[i + 1]), true
    end
  end
  if #first >= 16 then
    -- More hosts than were looked at: one of them may be.
    return now, true
  end
  return nil, true
end

-- What a worker hears about leasing: 0 now, 1 in ms, 2 blocked (its leases may bring work),
-- 3 empty, 4 others may bring work (ask again at the next poll).
local function readiness(holding)
  local at, listed = ready_for_me()
  if at then
    if at <= now then
      return 0, 0
    end
    return 1, at - now
  end
  if listed then
    return 4, 0
  end
  local st = redis.call('HMGET', K_STATS, 'queued', 'leased')
  local queued, leased = tonumber(st[1]) or 0, tonumber(st[2]) or 0
  if queued > 0 and holding then
    return 2, 0
  end
  local mine = redis.call('HLEN', wl(inc))
  if queued > 0 then
    if mine > 0 then
      return 2, 0
    end
    return 4, 0
  end
  if leased == mine then
    return 3, 0
  end
  return 4, 0
end

-- Operations -------------------------------------------------------------------------------

local function current(worker)
  return redis.call('HGET', P .. 'workers', worker) == inc
end

local function superseded(worker)
  return redis.error_reply('KUMO superseded: worker ' .. worker .. ' is no longer in the crawl')
end

-- A crawl's identity is `id` in `meta`, written by the worker whose registration created it.
-- A worker's calls carry the id it joined; a call that finds none, or another, writes nothing:
-- the crawl its leases and items belong to is gone, and writing would start it over silently.
-- Gone because `--fresh` cleared it: the clearing left `cleared` (the id it cleared) until a
-- new crawl of the name records it as `replaced`. Otherwise its keys vanished (Redis
-- restarted without persistence, a flush).
local function crawl_gone()
  local meta = redis.call('HMGET', K_META, 'id', 'replaced')
  if meta[1] == cid then
    return nil
  end
  local cleared = meta[2]
  if not meta[1] then
    cleared = redis.call('GET', P .. 'cleared')
  end
  if cleared == cid then
    return redis.error_reply('KUMO cleared: ' .. P)
  end
  return redis.error_reply('KUMO lost: ' .. P)
end

local function main(keys, args)
  setup(keys, args)
  if cid ~= '' then
    local gone = crawl_gone()
    if gone then
      return gone
    end
  end
  for _ = 1, num() do
    hold_at(arg(), num())
  end
  do
    local lks = {}
    for i = 1, num() do
      lks[i] = arg()
    end
    give_back(lks)
  end
  for _ = 1, num() do
    adjust(arg(), arg(), arg(), arg(), arg())
  end
  -- A lease call writes the hosts the prelude touched as it reads them for leasing: once.
  if op ~= 'lease' then
    flush()
  end
  -- The worker's counters: a commit's own, as of before its seen checks, or the exact ones of
  -- its last commit (they need that commit's answer). A process another took over keeps its
  -- hands off those of the one that did.
  for _ = 1, num() do
    local worker, counters = arg(), arg()
    if current(worker) then
      redis.call('HSET', P .. 'ctr', worker, counters)
    end
  end

  if op == 'lease' then
    local worker, max, base, ttl = arg(), num(), num(), num()
    rnd_state = num()
    -- Requests a worker may hold per slot of an unpaced host: one runs, the rest wait in its
    -- reserve, so it comes back for more once per many pages, not once per page.
    local depth = math.max(1, num())
    local check = num() == 1
    if not current(worker) then
      -- Taken over (or the crawl was cleared): leases handed to this process would be stranded.
      flush()
      return superseded(worker)
    end
    local slk, lhk = P .. 'sl:' .. inc, P .. 'lh:' .. inc
    local out, out_hosts = {}, {}
    local holdings = {}
    -- Asked after the politeness epoch moved: the hosts this worker held slots of before this
    -- call that are now paced, paused or held, whose reserve it must hand back (what this call
    -- hands out is decided with their politeness as it is now).
    local drop = {}
    if check then
      for _, host in ipairs(redis.call('HKEYS', slk)) do
        local v = redis.call('HMGET', hk(host), 'pause', 'hold', 'rl', 'd', 'floor', 'learn', 'rd')
        local until_ = math.max(tonumber(v[1]) or 0, tonumber(v[2]) or 0)
        local delay = math.max(tonumber(v[4]) or 0, tonumber(v[5]) or 0, tonumber(v[6]) or 0)
        if until_ > now or (v[3] and v[3] ~= '') or delay > 0 or (tonumber(v[7]) or 0) > 0 then
          drop[#drop + 1] = host
        end
      end
    end
    if max > 0 and redis.call('HEXISTS', wl(inc), inc .. ':' .. int(base)) == 1 then
      flush()
      -- The reply to this very call was lost: hand out the same leases again.
      local i = base
      while true do
        local v = redis.call('HGET', wl(inc), inc .. ':' .. int(i))
        if not v then
          break
        end
        local host, _, json = split_lease(v)
        out[#out + 1] = json
        out_hosts[host] = true
        i = i + 1
      end
      local live = live_workers()
      for host in pairs(out_hosts) do
        holdings[#holdings + 1] = host
        holdings[#holdings + 1] = tonumber(redis.call('HGET', slk, host)) or 0
        holdings[#holdings + 1] = share_of(host, live)
      end
    elseif max > 0 then
      reap()
      local new_wl, new_rec = {}, {}
      -- The hosts due, those this call changed (a returned slot, a lease reaped), and those
      -- this worker holds slots of (their reserve may take more): each read once, with its
      -- pending changes, and written once after its leases.
      local hosts = redis.call('ZRANGEBYSCORE', K_READY, '-inf', now, 'LIMIT', 0, max)
      local listed = {}
      for _, host in ipairs(hosts) do
        listed[host] = true
      end
      local held_hosts = redis.call('HKEYS', slk)
      for _, list in ipairs({ touched, held_hosts }) do
        for _, host in ipairs(list) do
          if not listed[host] then
            listed[host] = true
            hosts[#hosts + 1] = host
          end
        end
      end
      local held = #hosts > 0 and call_many('HMGET', slk, hosts) or {}
      local outstanding = #hosts > 0 and call_many('HMGET', lhk, hosts) or {}
      local live = live_workers()
      local seen_hosts = {}
      for hi, host in ipairs(hosts) do
        if #out >= max then
          break
        end
        seen_hosts[host] = true
        local k = hk(host)
        local v = redis.call(
          'HMGET', k, 'inf', 'par', 'next', 'pause', 'hold', 'rl', 'd', 'floor', 'learn', 'rd', 'bo', 'q'
        )
        local pending = hdelta[host] or {}
        hdelta[host] = nil
        if (pending.bo or 0) ~= 0 then
          redis.call('HINCRBY', k, 'bo', pending.bo)
        end
        local bo = (tonumber(v[11]) or 0) + (pending.bo or 0)
        local q = (tonumber(v[12]) or 0) + (pending.q or 0)
        if bo > 0 then
          bo = bo - wake_due(host)
        end
        local inf, par, nxt = (tonumber(v[1]) or 0) + (pending.inf or 0), tonumber(v[2]) or 1, tonumber(v[3]) or 0
        local pause_at, rl = math.max(tonumber(v[4]) or 0, tonumber(v[5]) or 0), v[6]
        local limited = rl and rl ~= ''
        local delay = math.max(tonumber(v[7]) or 0, tonumber(v[8]) or 0, tonumber(v[9]) or 0)
        local rd = tonumber(v[10]) or 0
        local paced = limited or gap_of(delay, 0) > 0 or rd > 0
        local share = share_of(host, live, par)
        local mine, owed = tonumber(held[hi]) or 0, tonumber(outstanding[hi]) or 0
        local mine_before = mine
        local taken = 0
        local function hand_out(got)
          for _, e in ipairs(got) do
            local lk = INC_PREFIX .. int(base + #out)
            new_wl[#new_wl + 1] = lk
            new_rec[#new_rec + 1] = host
            new_rec[#new_rec + 1] = e[1]
            new_rec[#new_rec + 1] = e[2]
            out[#out + 1] = e[2]
            taken = taken + 1
            if limited then
              note_rate(host, rl)
            end
          end
        end
        if not paced then
          if math.max(nxt, pause_at) <= now then
            -- The slots this call's work needs, within the host's free ones and this worker's
            -- share; then up to `depth` requests per slot held.
            local avail = math.max(0, math.min(par - inf, share - mine))
            local grant = math.min(avail, math.max(0, owed + math.min(math.max(0, q - bo), max - #out) - mine))
            mine, inf = mine + grant, inf + grant
            -- At most this worker's share of the host's queue: others may have free slots. A
            -- worker holding more than its share (it was alone) reserves for its share only.
            local room =
              math.min(max - #out, depth * math.min(mine, share) - owed, math.ceil(math.max(0, q - bo) / live))
            if room > 0 then
              hand_out(pop_many(host, room))
            end
            -- Only the slots its requests there can use stay the worker's.
            local back = math.min(grant, math.max(0, mine - (owed + taken)))
            mine, inf = mine - back, inf - back
            nxt = now
          end
        else
          -- One request per slot, one at a time, spaced by the host's gap.
          while #out < max and math.max(nxt, pause_at, rate_at(host, rl)) <= now do
            if mine - owed - taken <= 0 then
              if inf >= par or mine >= share then
                break
              end
              mine, inf = mine + 1, inf + 1
            end
            local g = gap_of(delay, rd)
            local got = pop_many(host, 1)
            if #got == 0 then
              break
            end
            hand_out(got)
            nxt = now + g
            if g > 0 then
              break
            end
          end
          local back = math.max(0, math.min(mine - mine_before, mine - (owed + taken)))
          mine, inf = mine - back, inf - back
        end
        if taken > 0 then
          q = q - taken
          redis.call('HSET', k, 'inf', int(inf), 'q', int(q), 'last', now, 'next', int(nxt))
          redis.call('HINCRBY', lhk, host, taken)
          stat('queued', -taken)
          stat('leased', taken)
        elseif (pending.inf or 0) ~= 0 or (pending.q or 0) ~= 0 then
          redis.call('HSET', k, 'inf', int(inf), 'q', int(q))
        end
        if mine ~= mine_before then
          redis.call('HSET', slk, host, int(mine))
        end
        -- With the share: a worker over it (others joined) lets slots go as its pages end.
        if taken > 0 or mine ~= mine_before or mine > share then
          holdings[#holdings + 1] = host
          holdings[#holdings + 1] = mine
          holdings[#holdings + 1] = share
        end
        place(host, q, bo, inf, par, math.max(nxt, pause_at), rl)
      end
      -- Hosts left for lack of room are written and rescheduled as usual (`flush`).
      local rest = {}
      for _, host in ipairs(touched) do
        if not seen_hosts[host] then
          rest[#rest + 1] = host
        end
      end
      touched = rest
      if #new_wl > 0 then
        -- Ids of a call whose reply was lost and that was partly reaped since: the worker never
        -- had those leases, so they go back before their ids are used again.
        local stale = {}
        for i, v in ipairs(call_many('HMGET', wl(inc), new_wl)) do
          if v then
            stale[#stale + 1] = new_wl[i]
          end
        end
        requeue_many(stale)
        local batch = inc .. ':' .. int(base) .. ':' .. int(#new_wl)
        local new_ld = {}
        for i, lk in ipairs(new_wl) do
          local j = 3 * i - 2
          new_ld[2 * i - 1] = lk
          new_ld[2 * i] = batch .. '\0' .. new_rec[j] .. '\0' .. new_rec[j + 1] .. '\0' .. new_rec[j + 2]
        end
        call_many('HSET', wl(inc), new_ld)
        redis.call('ZADD', K_DL, now + ttl, batch)
        redis.call('HSET', K_DN, batch, #new_wl)
      end
      flush()
    else
      reap()
      flush()
    end
    local code, ms = readiness(#out > 0)
    local reply = { code, ms, hnum(K_STATS, 'pe'), #out }
    for i = 1, #out do
      reply[#reply + 1] = out[i]
    end
    reply[#reply + 1] = #holdings / 3
    for i = 1, #holdings do
      reply[#reply + 1] = holdings[i]
    end
    for i = 1, #drop do
      reply[#reply + 1] = drop[i]
    end
    return reply
  end

  if op == 'commit' then
    local seq, worker = num(), arg()
    local last = tonumber(redis.call('HGET', P .. 'seq', inc)) or 0
    if seq <= last then
      -- Applied already (the reply was lost): the same reply again.
      local r = redis.call('HGET', P .. 'reply', inc) or '0 0 0 -1 0 0 0 0 0 0 0'
      local out = {}
      for w in string.gmatch(r, '%S+') do
        out[#out + 1] = (#out < 11) and tonumber(w) or w
      end
      return out
    end
    if not current(worker) then
      return superseded(worker)
    end
    local added, seen = push_many(num())
    -- The completions read first (a page's discoveries queued as they come), their leases then
    -- taken all at once.
    local comps, lks = {}, {}
    for i = 1, num() do
      local c = { kind = arg(), lk = arg() }
      if c.kind == 'D' then
        -- The page's record for re-crawls (`--recrawl`): its URL and JSON, or '' and ''.
        c.url, c.page = arg(), arg()
        local a, sn = push_many(num())
        added, seen = added + a, seen + sn
      elseif c.kind == 'R' then
        c.after, c.json = num(), arg()
      elseif c.kind == 'E' then
        c.after = num()
      else -- 'F'
        c.failure = arg()
      end
      comps[i] = c
      lks[i] = c.lk
    end
    local found, found_host = take_many(lks)
    local stale = 0
    local stale_leases = {}
    local failures = {}
    local pages = {}
    for _, c in ipairs(comps) do
      local f = found[c.lk]
      found[c.lk] = nil
      if not f then
        stale = stale + 1
        stale_leases[c.lk] = true
      elseif c.kind == 'R' then
        local host, level = split_lease(f)
        if c.after <= 0 then
          push_level(host, level, c.json, true)
        else
          local n = redis.call('HINCRBY', K_META, 'boseq', 1)
          redis.call('ZADD', P .. 'bo:' .. host, now + c.after, int(n) .. '\0' .. level .. '\0' .. c.json)
          bump(host, 'bo', 1)
        end
        bump(host, 'q', 1)
        stat('queued', 1)
      elseif c.kind == 'E' then
        local host, level, json = split_lease(f)
        local k = hk(host)
        local hold = now + c.after
        if hold > hnum(k, 'hold') then
          redis.call('HSET', k, 'hold', int(hold))
          stat('pe', 1)
        end
        push_level(host, level, json, true)
        bump(host, 'q', 1)
        stat('queued', 1)
      elseif c.kind == 'F' then
        failures[#failures + 1] = c.failure
        stat('failed', 1)
      else -- 'D'
        touch(found_host[c.lk])
        if c.page ~= '' then
          pages[#pages + 1] = c.url
          pages[#pages + 1] = c.page
        end
      end
    end
    if #failures > 0 then
      call_many('RPUSH', P .. 'fail', failures)
    end
    if #pages > 0 then
      call_many('HSET', P .. 'pg', pages)
    end
    -- Items of live completions join the worker's journal; a stale page's items are dropped
    -- (the page is handed out again and its items come with that commit).
    local items = {}
    for _ = 1, num() do
      local lk, item = arg(), arg()
      if lk == '' or not stale_leases[lk] then
        items[#items + 1] = item
      end
    end
    local journaled = #items
    local jn = 0
    if journaled > 0 then
      call_many('RPUSH', P .. 'j:' .. worker, items)
      jn = tonumber(redis.call('HGET', P .. 'jn', worker)) or 0
    end
    local upto = -1
    if journaled > 0 then
      jn = jn + journaled
      redis.call('HSET', P .. 'jn', worker, int(jn))
      upto = jn
    end
    flush()
    local st = redis.call('HMGET', K_STATS, 'queued', 'leased', 'hosts', 'failed', 'pe')
    local reply = { added, seen, stale, upto }
    for i = 1, 5 do
      reply[4 + i] = tonumber(st[i]) or 0
    end
    -- When a host is next ready for this worker (0 now, 1 in ms, 2 none, 4 only hosts where
    -- it has its share): the worker asks for leases only then.
    local at, listed = ready_for_me()
    if at then
      reply[10], reply[11] = (at <= now) and 0 or 1, math.max(0, at - now)
    else
      reply[10], reply[11] = listed and 4 or 2, 0
    end
    for lk in pairs(stale_leases) do
      reply[#reply + 1] = lk
    end
    redis.call('HSET', P .. 'seq', inc, int(seq))
    redis.call('HSET', P .. 'reply', inc, table.concat(reply, ' '))
    return reply
  end

  -- Re-crawl rounds (`--recrawl`): numbered in `rd` (`n`), the one being queued in `rd`'s `q`.
  -- A worker opens the next round only when the crawl is drained; one that finds a round
  -- still being queued (its queuer died, or works beside it) joins it. `rv` says, per URL, the
  -- round that queued it last, so no page is queued twice in a round.
  if op == 'round_begin' then
    local worker, counters = arg(), arg()
    local st = redis.call('HMGET', K_STATS, 'queued', 'leased')
    local busy = (tonumber(st[1]) or 0) + (tonumber(st[2]) or 0)
    if busy > 0 then
      return { 2, 0, busy }
    end
    local rd = P .. 'rd'
    local code, round = 1, tonumber(redis.call('HGET', rd, 'q'))
    if not round then
      code, round = 0, redis.call('HINCRBY', rd, 'n', 1)
      redis.call('HSET', rd, 'q', round)
    end
    -- The round's summary counts its own work: this worker's counters start over, but for
    -- where its WARC files end.
    if current(worker) then
      if counters == '' then
        redis.call('HDEL', P .. 'ctr', worker)
      else
        redis.call('HSET', P .. 'ctr', worker, counters)
      end
    end
    return { code, round, 0 }
  end

  if op == 'round_push' then
    local round, n = arg(), num()
    local rv = P .. 'rv'
    local added = 0
    for _ = 1, n do
      local url, host, rule, level, json = arg(), arg(), arg(), arg(), arg()
      if redis.call('HGET', rv, url) ~= round then
        redis.call('HSET', rv, url, round)
        enqueue(host, rule, level, json, false)
        added = added + 1
      end
    end
    flush()
    return added
  end

  if op == 'round_end' then
    local round = arg()
    local rd = P .. 'rd'
    if redis.call('HGET', rd, 'q') == round then
      redis.call('HDEL', rd, 'q')
    end
    return 1
  end

  if op == 'register' then
    local worker, cfg, dead_after, npol = arg(), arg(), num(), num()
    local layout = redis.call('HGET', K_META, 'v')
    if layout and layout ~= '3' then
      return redis.error_reply('KUMO layout: the crawl was started by an older kumo (layout ' .. layout
        .. '); finish it with that version, or start it over with --fresh')
    end
    local have = redis.call('HGET', K_META, 'cfg')
    -- A crawl of start URLs from before settings records (`urls:HASH`): its workers' settings
    -- are now compared by name, beside this call.
    if have and cfg == 'urls' and string.sub(have, 1, 5) == 'urls:' then
      have = cfg
      redis.call('HSET', K_META, 'cfg', cfg)
    end
    if have and have ~= cfg then
      return redis.error_reply('KUMO config: the crawl was started with another configuration (' .. have .. ')')
    end
    -- 0: joined a crawl; 1: created it where Redis had none of that name; 2: created it after
    -- `--fresh` cleared one.
    local created = 0
    if not have then
      created = 1
      redis.call('HSET', K_META, 'v', 3, 'cfg', cfg, 'created', now, 'id', inc)
      local cleared = redis.call('GET', P .. 'cleared')
      if cleared then
        created = 2
        redis.call('HSET', K_META, 'replaced', cleared)
        redis.call('DEL', P .. 'cleared')
      end
      for i = 0, npol - 1 do
        redis.call('HSET', K_POL, i, arg())
      end
    else
      -- A crawl started before crawls had ids takes one now.
      redis.call('HSETNX', K_META, 'id', inc)
    end
    local old = redis.call('HGET', P .. 'workers', worker)
    if old and old ~= inc then
      -- The worker's previous process is gone (or is taken over): its leases go back now.
      bury(old)
      redis.call('HDEL', P .. 'seq', old)
      redis.call('HDEL', P .. 'reply', old)
    end
    redis.call('HSET', P .. 'workers', worker, inc)
    redis.call('ZADD', K_ALIVE, now + dead_after, inc)
    return { old or '', redis.call('HGET', K_META, 'id'), created }
  end

  if op == 'heartbeat' then
    local worker, dead_after = arg(), num()
    if not current(worker) then
      return 'superseded'
    end
    mind_the_gap()
    redis.call('ZADD', K_ALIVE, now + dead_after, inc)
    return 'ok'
  end

  if op == 'leave' then
    -- A worker that ends hands back what it still holds and is no longer counted alive.
    local worker = arg()
    if redis.call('HGET', P .. 'workers', worker) == inc then
      bury(inc)
      redis.call('HDEL', P .. 'workers', worker)
    end
    return 'ok'
  end

  -- robots.txt shared by the crawl's workers: `rb:ORIGIN` holds `status LF body` for its TTL;
  -- `rbl:ORIGIN` is the claim of the worker fetching it.
  if op == 'robots_claim' then
    local origin, claim_ms = arg(), num()
    local v = redis.call('GET', P .. 'rb:' .. origin)
    if v then
      return { 1, v }
    end
    if redis.call('SET', P .. 'rbl:' .. origin, inc, 'NX', 'PX', claim_ms) then
      return { 2 }
    end
    return { 3 }
  end

  if op == 'robots_share' then
    local origin, value, ttl_ms = arg(), arg(), num()
    if value ~= '' then
      redis.call('SET', P .. 'rb:' .. origin, value, 'PX', ttl_ms)
    end
    if redis.call('GET', P .. 'rbl:' .. origin) == inc then
      redis.call('DEL', P .. 'rbl:' .. origin)
    end
    return 'ok'
  end

  -- Requests put in from outside the crawl (`kumo frontier import`, re-queued failures): the
  -- same seen check and queues as discoveries; no worker needed.
  if op == 'import' then
    local added, seen = push_many(num())
    flush()
    return { added, seen }
  end

  -- Failures back to the queue: each named by its stored record (removed only if still there),
  -- its request queued again as given (retry count reset by the caller). No seen check: its
  -- fingerprint is seen already.
  if op == 'requeue' then
    local moved = 0
    for _ = 1, num() do
      local record, host, rule, level, json = arg(), arg(), arg(), arg(), arg()
      if redis.call('LREM', P .. 'fail', 1, record) == 1 then
        enqueue(host, rule, level, json, false)
        stat('failed', -1)
        moved = moved + 1
      end
    end
    flush()
    return moved
  end

  if op == 'sync' then
    return 'ok' -- the prelude was the work
  end

  if op == 'stats' then
    local v = redis.call('HMGET', K_STATS, 'queued', 'leased', 'hosts', 'failed')
    return { tonumber(v[1]) or 0, tonumber(v[2]) or 0, tonumber(v[3]) or 0, tonumber(v[4]) or 0 }
  end

  -- One host's queue: its counts (queued, in flight, backing off; none if the host is not
  -- known), then up to `max` requests as (JSON, not-before ms, 0 if none) pairs in the order
  -- they go out: its best level first, then those backing off, soonest first.
  if op == 'queue' then
    local host, max = arg(), num()
    local k = hk(host)
    if redis.call('EXISTS', k) == 0 then
      return {}
    end
    local v = redis.call('HMGET', k, 'q', 'inf', 'bo')
    local out = { tonumber(v[1]) or 0, tonumber(v[2]) or 0, tonumber(v[3]) or 0 }
    local left = max
    for _, level in ipairs(redis.call('ZRANGE', P .. 'lv:' .. host, 0, -1)) do
      if left <= 0 then
        break
      end
      for _, json in ipairs(redis.call('LRANGE', P .. 'q:' .. host .. ':' .. level, 0, left - 1)) do
        out[#out + 1] = json
        out[#out + 1] = 0
        left = left - 1
      end
    end
    if left > 0 then
      local bo = redis.call('ZRANGE', P .. 'bo:' .. host, 0, left - 1, 'WITHSCORES')
      for i = 1, #bo, 2 do
        local m = bo[i]
        local a = find(m, '\0', 1, true)
        local b = find(m, '\0', a + 1, true)
        out[#out + 1] = sub(m, b + 1)
        out[#out + 1] = tonumber(bo[i + 1])
      end
    end
    return out
  end

  if op == 'hosts' then
    local out = {}
    for _, host in ipairs(redis.call('SMEMBERS', K_HOSTS)) do
      local k = hk(host)
      local v = redis.call('HMGET', k, 'q', 'bo', 'pause')
      local pause = tonumber(v[3]) or 0
      out[#out + 1] = host
      out[#out + 1] = tonumber(v[1]) or 0
      out[#out + 1] = tonumber(v[2]) or 0
      out[#out + 1] = delay_of(k)
      out[#out + 1] = (pause > now) and (pause - now) or -1
    end
    return out
  end

  if op == 'cap' then
    local max, n = num(), num()
    local hosts = {}
    if n == 0 then
      hosts = redis.call('SMEMBERS', K_HOSTS)
    else
      for i = 1, n do
        hosts[i] = arg()
      end
    end
    local limit = now + max
    local out = {}
    for _, host in ipairs(hosts) do
      local k = hk(host)
      local pause = hnum(k, 'pause')
      if pause > limit then
        redis.call('HSET', k, 'pause', (max > 0) and int(limit) or 0)
        out[#out + 1] = host
        out[#out + 1] = pause - now
        resched(host)
      end
    end
    return out
  end

  if op == 'learned' then
    local out = {}
    for _, host in ipairs(redis.call('SMEMBERS', K_HOSTS)) do
      local learn = hnum(hk(host), 'learn')
      if learn >= 0 then
        out[#out + 1] = host
        out[#out + 1] = learn
      end
    end
    return out
  end

  if op == 'failures' then
    return redis.call('LRANGE', P .. 'fail', 0, -1)
  end

  if op == 'counters' then
    return redis.call('HGET', P .. 'ctr', arg()) or ''
  end
  if op == 'all_counters' then
    return redis.call('HGETALL', P .. 'ctr')
  end

  -- The worker's item journal: where its outputs stand, and the items committed after that.
  if op == 'resume' then
    local worker = arg()
    local upto = tonumber(redis.call('HGET', P .. 'cpupto', worker)) or 0
    local reply = { upto }
    local pending = redis.call('LRANGE', P .. 'j:' .. worker, 0, -1)
    reply[2] = #pending
    for i = 1, #pending do
      reply[#reply + 1] = pending[i]
    end
    for _, cp in ipairs(redis.call('LRANGE', P .. 'cp:' .. worker, 0, -1)) do
      reply[#reply + 1] = cp
    end
    return reply
  end

  -- The worker's checkpoints folded into one at resume, so the list stays short however long
  -- the worker runs. Only if nothing was added since the worker read them.
  if op == 'compact_checkpoints' then
    local worker, n, folded = arg(), num(), arg()
    local key = P .. 'cp:' .. worker
    if redis.call('LLEN', key) ~= n then
      return 0
    end
    redis.call('DEL', key)
    redis.call('RPUSH', key, folded)
    return 1
  end

  if op == 'checkpoint' then
    local worker, upto, cp = arg(), num(), arg()
    local done = tonumber(redis.call('HGET', P .. 'cpupto', worker)) or 0
    if upto < done then
      return 'old' -- a retried call that already ran: checkpoints never move backwards
    end
    if upto == done and redis.call('LINDEX', P .. 'cp:' .. worker, -1) == cp then
      return 'old' -- the same checkpoint again (a retry whose reply was lost)
    end
    if upto > done then
      redis.call('LTRIM', P .. 'j:' .. worker, upto - done, -1)
      redis.call('HSET', P .. 'cpupto', worker, int(upto))
    end
    redis.call('RPUSH', P .. 'cp:' .. worker, cp)
    return 'ok'
  end

  return redis.error_reply('KUMO unknown op ' .. tostring(op))
end

redis.register_function('KUMO_FN', main)
