"""The Lua scripts: every multi-key write is one script over keys of one hash tag.

Each script checks everything first and writes last (a failing script keeps the writes it
already made): before its first write it checks the type of every key it writes or reads
(:data:`CHECK_TYPES`: a key read before the first write is checked by that read, ``qh_read``;
a key only written by ``qh_wrong``'s ``TYPE`` call or an ``XREAD`` of nothing, or by being the
first write, made with ``pcall``: an error there has written nothing; a key of another type is
the error ``QH_WRONGTYPE`` naming the key and both types, and nothing is written), and, where a
write could fail on what a key holds, that key's content (the append script refuses a stream
already holding a version it would add: ``QH_STREAM_AHEAD``). Scripts are run through redis-py ``Script`` objects, which answer
``NOSCRIPT`` (after ``SCRIPT FLUSH`` or a restart) by loading the script again and retrying.
"""

# A Lua prelude of every script: ``qh_wrong({key, type, key, type, ...})`` is nil when every
# key is missing or of its type ('string', 'hash', 'list', 'set', 'zset', 'stream'), else the
# error text for the first one that is not.
CHECK_TYPES = r"""
local function qh_wrong(spec)
  for i = 1, #spec, 2 do
    local t = redis.call('TYPE', spec[i])['ok']
    if t ~= 'none' and t ~= spec[i + 1] then
      return 'QH_WRONGTYPE key ' .. spec[i] .. ' holds a ' .. t .. ', not a ' .. spec[i + 1]
    end
  end
  return nil
end
-- qh_read(spec, command, ...): the reply of a read command, or (nil, error text) naming the first
-- key of spec() (a function: the list is built only then) of the wrong type:
-- a read of a key of the wrong type errors, and then qh_wrong names it (a read is its own check)
local function qh_read(spec, ...)
  local r = redis.pcall(...)
  if type(r) == 'table' and r.err then return nil, qh_wrong(spec()) or r.err end
  return r
end
"""

# KEYS: 1 meta, 2 events, 3 log, 4 outcome, 5 command stream, 6 the sender's reply inbox in
#       this partition, 7 games set, 8 secret, 9 accepted-commands stream of the game,
#       10 the game's archived marker (only read: a first append to an id whose game was archived
#       answers a conflict, and the worker's load refuses it: ``game_archived``)
# ARGV: 1 expected version, 2 group, 3 message id ('' = none), 4 outcome, 5 game id,
#       6 last hash, 7 status, 8 title, 9 inbox ttl (s; 0 = no inbox: nothing pushed; set when a
#       push makes the list: one the reader empties is deleted and made again by the next push),
#       10 secret seed hex ('' = none),
#       11 the accepted command (msgpack envelope), 12 the game's last hash decided on,
#       13.. event payloads in version order
# The game must be at the version *and* hash decided on: a replica whose cache holds a history
# Redis lost (fsync window) and another replica rewrote must not append on it (a fork).
APPEND = CHECK_TYPES + r"""
local function spec()
  return {KEYS[1], 'hash', KEYS[2], 'stream', KEYS[3], 'stream', KEYS[4], 'string', KEYS[5], 'stream',
          KEYS[6], 'list', KEYS[7], 'set', KEYS[8], 'hash', KEYS[9], 'stream'}
end
-- the outcome and meta keys are read before any write (a read of a wrong type errors: qh_read), the
-- streams only written by one XREAD (below), the inbox and a new game's set and secret hash by TYPE,
-- and the game stream by its first XADD
local existing, bad = qh_read(spec, 'GET', KEYS[4])
if bad then return redis.error_reply(bad) end
local ttl = tonumber(ARGV[9])
if existing then
  local w = {}
  if ARGV[3] ~= '' then w[#w + 1] = KEYS[5]; w[#w + 1] = 'stream' end
  if ttl > 0 then w[#w + 1] = KEYS[6]; w[#w + 1] = 'list' end
  bad = qh_wrong(w)
  if bad then return redis.error_reply(bad) end
  if ARGV[3] ~= '' then redis.call('XACK', KEYS[5], ARGV[2], ARGV[3]) end
  if ttl > 0 then
    if redis.call('RPUSH', KEYS[6], existing) == 1 then redis.call('EXPIRE', KEYS[6], ARGV[9]) end
  end
  return {'dup', existing}
end
local ver
ver, bad = qh_read(spec, 'HMGET', KEYS[1], 'version', 'hash')
if bad then return redis.error_reply(bad) end
local curs = ver[1] or '0'  -- as stored (a number formatted by Redis)
local cur = tonumber(curs)
if cur ~= tonumber(ARGV[1]) or (cur > 0 and ver[2] ~= ARGV[12]) then
  return {'conflict', tostring(cur)}
end
local n = #ARGV - 12
if cur == 0 and n > 0 and ARGV[10] == '' then
  return redis.error_reply('QH_NO_SEED a new game needs its secret seed')
end
if cur == 0 and n > 0 and redis.call('EXISTS', KEYS[10]) == 1 then
  return {'conflict', 'archived'}
end
-- the streams only written, and the accepted-commands stream's content, by one XREAD before any
-- write: the log and the command stream from '$' (nothing: a read of a key of the wrong type
-- errors), the accepted-commands stream from the last version before the ones this call adds (an
-- entry there: it is ahead). The game stream is checked by its first XADD (pcall, below): an error
-- there has written nothing, and it also refuses a stream whose last id is ahead of its entries
-- (an XDEL or XTRIM left it there; an XREAD sees entries only)
if n > 0 or ARGV[3] ~= '' then
  local xr, ids = {'XREAD', 'COUNT', 1, 'STREAMS'}, {}
  if n > 0 then
    xr[5], xr[6] = KEYS[3], KEYS[9]
    ids[1], ids[2] = '$', tostring(cur + n - 1) .. '-0'
  end
  if ARGV[3] ~= '' then xr[#xr + 1] = KEYS[5]; ids[#ids + 1] = '$' end
  for i = 1, #ids do xr[#xr + 1] = ids[i] end
  local got
  got, bad = qh_read(spec, unpack(xr))
  if bad then return redis.error_reply(bad) end
  if got then
    local top = redis.call('XREVRANGE', KEYS[9], '+', '-', 'COUNT', '1')
    return redis.error_reply('QH_STREAM_AHEAD ' .. KEYS[9] .. ' already holds ' .. top[1][1] .. ' (game at version ' .. cur .. ')')
  end
end
local w = {}
if ttl > 0 then w[1] = KEYS[6]; w[2] = 'list' end
if cur == 0 and n > 0 then
  w[#w + 1] = KEYS[7]; w[#w + 1] = 'set'; w[#w + 1] = KEYS[8]; w[#w + 1] = 'hash'
end
bad = qh_wrong(w)
if bad then return redis.error_reply(bad) end
for i = 1, n do
  local v = cur + i
  local vs = tostring(v)  -- each number formatted once (Lua formats it with sprintf)
  if i == 1 then
    local r = redis.pcall('XADD', KEYS[2], vs .. '-0', 'e', ARGV[13])
    if type(r) == 'table' and r.err then
      bad = qh_wrong(spec())
      if bad then return redis.error_reply(bad) end
      if not string.find(r.err, 'equal or smaller', 1, true) then return r end
      local top = redis.call('XREVRANGE', KEYS[2], '+', '-', 'COUNT', '1')
      return redis.error_reply('QH_STREAM_AHEAD ' .. KEYS[2] .. ' already holds ' .. (top[1] and top[1][1] or 'no entry, its last id is ahead') .. ' (game at version ' .. cur .. ')')
    end
  else
    redis.call('XADD', KEYS[2], vs .. '-0', 'e', ARGV[12 + i])
  end
  redis.call('XADD', KEYS[3], '*', 'g', ARGV[5], 't', ARGV[8], 'v', vs, 'e', ARGV[12 + i])
end
local news = n > 0 and tostring(cur + n) or curs
if n > 0 then
  redis.call('XADD', KEYS[9], news .. '-0', 'c', ARGV[11], 'from', curs)
  redis.call('HSET', KEYS[1], 'version', news, 'hash', ARGV[6], 'status', ARGV[7], 'title', ARGV[8])
  if cur == 0 then
    redis.call('SADD', KEYS[7], ARGV[5])
    redis.call('HSET', KEYS[8], 'seed', ARGV[10])
  end
end
redis.call('SET', KEYS[4], ARGV[4])
if ARGV[3] ~= '' then redis.call('XACK', KEYS[5], ARGV[2], ARGV[3]) end
if ttl > 0 then
  if redis.call('RPUSH', KEYS[6], ARGV[4]) == 1 then redis.call('EXPIRE', KEYS[6], ARGV[9]) end
end
return {'ok', news}
"""

# Store a rejection (or reply a stored outcome) and acknowledge; optionally park in dead letters.
# A rejection decided on a state that is no longer current is not stored: ('conflict', version).
# KEYS: 1 outcome, 2 command stream, 3 the sender's reply inbox in this partition, 4 dead-letter
#       stream, 5 game meta
# ARGV: 1 group, 2 message id ('' = none), 3 outcome, 4 inbox ttl (0 = no inbox),
#       5 dead-letter payload ('' = none),
#       6 error text, 7 version the rejection was decided on ('' = any), 8 the game's last hash
#       decided on (checked with 7 when the version is > 0), 9 seconds the rejection is kept
#       ('' or 0: for good; a retry after that is decided again)
REJECT = CHECK_TYPES + r"""
local bad = qh_wrong({KEYS[1], 'string', KEYS[2], 'stream', KEYS[3], 'list', KEYS[4], 'stream', KEYS[5], 'hash'})
if bad then return redis.error_reply(bad) end
local existing = redis.call('GET', KEYS[1])
local out = ARGV[3]
if not existing and ARGV[7] ~= '' then
  local cur = tonumber(redis.call('HGET', KEYS[5], 'version') or '0')
  if cur ~= tonumber(ARGV[7]) or (cur > 0 and redis.call('HGET', KEYS[5], 'hash') ~= ARGV[8]) then
    return {'conflict', tostring(cur)}
  end
end
if existing then
  out = existing
else
  if tonumber(ARGV[9] or '0') > 0 then
    redis.call('SET', KEYS[1], ARGV[3], 'EX', tonumber(ARGV[9]))
  else
    redis.call('SET', KEYS[1], ARGV[3])
  end
  if ARGV[5] ~= '' then
    redis.call('XADD', KEYS[4], '*', 'c', ARGV[5], 'error', ARGV[6], 'id', ARGV[2])
  end
end
if ARGV[2] ~= '' then redis.call('XACK', KEYS[2], ARGV[1], ARGV[2]) end
if tonumber(ARGV[4]) > 0 then
  if redis.call('RPUSH', KEYS[3], out) == 1 then redis.call('EXPIRE', KEYS[3], tonumber(ARGV[4])) end
end
if existing then return {'dup', existing} end
return {'ok', out}
"""

# Park an entry that cannot even be decoded (no command id to answer): dead-letter + ack.
# KEYS: 1 command stream, 2 dead-letter stream; ARGV: 1 group, 2 message id, 3 payload, 4 error
PARK = CHECK_TYPES + r"""
local bad = qh_wrong({KEYS[1], 'stream', KEYS[2], 'stream'})
if bad then return redis.error_reply(bad) end
redis.call('XADD', KEYS[2], '*', 'c', ARGV[3], 'error', ARGV[4], 'id', ARGV[2])
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
return 1
"""

# Apply read-model writes for a game up to a version, idempotently, and acknowledge the log entry.
# KEYS: 1 applied, 2 log stream, then view keys (n_views), then feed keys to delete (n_feeds: the
#       game ended, and feeds are derived from its events, services/runtime/feeds.py; only a
#       feed stored before feeds were derived is left to delete), then the partition's change stream
# ARGV: 1 expected applied version, 2 new version, 3 group, 4 message id ('' = none),
#       5 n_views, 6 n_feeds, then n_views view payloads; then the game id and the change stream's
#       approximate length cap (the gateway's one reader wakes the game's sockets from it)
PROJECT = CHECK_TYPES + r"""
local function spec()
  local s = {KEYS[1], 'string', KEYS[2], 'stream'}
  for i = 3, 2 + tonumber(ARGV[5]) do s[#s + 1] = KEYS[i]; s[#s + 1] = 'string' end
  for i = 3 + tonumber(ARGV[5]), #KEYS do s[#s + 1] = KEYS[i]; s[#s + 1] = 'stream' end
  return s
end
-- the applied key is read before any write (qh_read)
local got, bad = qh_read(spec, 'GET', KEYS[1])
if bad then return redis.error_reply(bad) end
local applied = tonumber(got or '0')
local newv = tonumber(ARGV[2])
if applied >= newv then
  if ARGV[4] ~= '' then
    bad = qh_wrong({KEYS[2], 'stream'})
    if bad then return redis.error_reply(bad) end
    redis.call('XACK', KEYS[2], ARGV[3], ARGV[4])
  end
  return {'skip', tostring(applied)}
end
if applied ~= tonumber(ARGV[1]) then
  return {'conflict', tostring(applied)}
end
local nv = tonumber(ARGV[5])
-- the keys written: the streams (the log acknowledged, the feeds deleted, the change stream) by
-- one XREAD of nothing, the views (overwritten by MSET) with TYPE
local xr = {'XREAD', 'COUNT', 1, 'STREAMS', KEYS[2]}
for i = 3 + nv, #KEYS do xr[#xr + 1] = KEYS[i] end
for i = 5, #xr do xr[#xr + 1] = '$' end
local _
_, bad = qh_read(spec, unpack(xr))
if bad then return redis.error_reply(bad) end
local w = {}
for i = 3, 2 + nv do w[#w + 1] = KEYS[i]; w[#w + 1] = 'string' end
bad = qh_wrong(w)
if bad then return redis.error_reply(bad) end
local nf = tonumber(ARGV[6])
if nf > 0 then redis.call('DEL', unpack(KEYS, 3 + nv, 2 + nv + nf)) end
local ms = {'MSET'}
for i = 1, nv do ms[#ms + 1] = KEYS[2 + i]; ms[#ms + 1] = ARGV[6 + i] end
ms[#ms + 1] = KEYS[1]; ms[#ms + 1] = ARGV[2]
redis.call(unpack(ms))
if ARGV[4] ~= '' then redis.call('XACK', KEYS[2], ARGV[3], ARGV[4]) end
redis.call('XADD', KEYS[#KEYS], 'MAXLEN', '~', ARGV[8 + nv], '*', 'g', ARGV[7 + nv], 'v', ARGV[2])
return {'ok', ARGV[2]}
"""

# Lobby and results (global slot), idempotent by the game's version.
# KEYS: 1 applied, 2 lobby game hash, 3 result key, then index keys: 4 new index,
#       5.. every other status index of the title (removed from)
# ARGV: 1 version, 2 game id, 3 score (created_at ms), 4 result JSON ('' = none),
#       then field/value pairs for the lobby hash
LOBBY = CHECK_TYPES + r"""
local spec = {KEYS[1], 'string', KEYS[2], 'hash', KEYS[3], 'string'}
for i = 4, #KEYS do spec[#spec + 1] = KEYS[i]; spec[#spec + 1] = 'zset' end
local bad = qh_wrong(spec)
if bad then return redis.error_reply(bad) end
local applied = tonumber(redis.call('GET', KEYS[1]) or '0')
local v = tonumber(ARGV[1])
if applied >= v then return 0 end
for i = 5, #KEYS do redis.call('ZREM', KEYS[i], ARGV[2]) end
redis.call('ZADD', KEYS[4], tonumber(ARGV[3]), ARGV[2])
local fields = {}
for i = 5, #ARGV do fields[#fields + 1] = ARGV[i] end
if #fields > 0 then redis.call('HSET', KEYS[2], unpack(fields)) end
if ARGV[4] ~= '' then redis.call('SET', KEYS[3], ARGV[4]) end
redis.call('SET', KEYS[1], ARGV[1])
return 1
"""

# Keep entries a consumer is working on from being claimed: reset the idle time of each id
# still pending with this consumer (XCLAIM ... JUSTID: the delivery count is not raised), skip
# an id another consumer holds or that is no longer pending. Returns how many were refreshed.
# KEYS: 1 stream; ARGV: 1 group, 2 consumer, 3.. message ids
TOUCH = CHECK_TYPES + r"""
local bad = qh_wrong({KEYS[1], 'stream'})
if bad then return redis.error_reply(bad) end
local n = 0
for i = 3, #ARGV do
  local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1)
  if #p > 0 and p[1][2] == ARGV[2] then
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'JUSTID')
    n = n + 1
  end
end
return n
"""

# Delete consumers that hold no pending entries and have been idle long (never one with pending).
# KEYS: 1 stream; ARGV: 1 group, 2 min idle ms, 3 own consumer name
REAP_CONSUMERS = CHECK_TYPES + r"""
local bad = qh_wrong({KEYS[1], 'stream'})
if bad then return redis.error_reply(bad) end
local ok, infos = pcall(redis.call, 'XINFO', 'CONSUMERS', KEYS[1], ARGV[1])
if not ok then return 0 end
local n = 0
for _, info in ipairs(infos) do
  local name, pending, idle
  for i = 1, #info, 2 do
    if info[i] == 'name' then name = info[i + 1]
    elseif info[i] == 'pending' then pending = tonumber(info[i + 1])
    elseif info[i] == 'idle' then idle = tonumber(info[i + 1]) end
  end
  if name ~= ARGV[3] and pending == 0 and idle >= tonumber(ARGV[2]) then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], name)
    n = n + 1
  end
end
return n
"""

# Trim a command stream below everything its one consumer group may still need: the oldest
# pending entry, else the last delivered one (so no pending or undelivered entry is ever
# trimmed; a trimmed pending entry would be dropped by XAUTOCLAIM, i.e. lost). Outcomes and
# accepted commands are kept elsewhere, so acknowledged entries are not needed any more.
# With KEYS[2] (the stream's in-flight index), fields of ids no longer pending (below the oldest
# pending id; everything delivered when nothing is pending) are deleted too: the records a
# worker that died between handling and cleaning up left behind.
# Does nothing unless the stream has exactly the one group ARGV[1].
# KEYS: 1 stream, 2 in-flight index (optional); ARGV: 1 group
TRIM_ACKED = CHECK_TYPES + r"""
local bad = qh_wrong({KEYS[1], 'stream', KEYS[2] or KEYS[1], KEYS[2] and 'hash' or 'stream'})
if bad then return redis.error_reply(bad) end
local ok, groups = pcall(redis.call, 'XINFO', 'GROUPS', KEYS[1])
if not ok or #groups ~= 1 then return 0 end
local name, last
local g = groups[1]
for i = 1, #g, 2 do
  if g[i] == 'name' then name = g[i + 1] elseif g[i] == 'last-delivered-id' then last = g[i + 1] end
end
if name ~= ARGV[1] or not last then return 0 end
local p = redis.call('XPENDING', KEYS[1], ARGV[1])
local cut = last
local pending = tonumber(p[1]) > 0
if pending then cut = p[2] end
if KEYS[2] then
  local cm, cs = string.match(cut, '^(%d+)-(%d+)$')
  cm, cs = tonumber(cm), tonumber(cs)
  for _, f in ipairs(redis.call('HKEYS', KEYS[2])) do
    local fm, fs = string.match(f, '^(%d+)-(%d+)$')
    fm, fs = tonumber(fm), tonumber(fs)
    if fm and (fm < cm or (fm == cm and (fs < cs or (fs == cs and not pending)))) then
      redis.call('HDEL', KEYS[2], f)
    end
  end
end
return redis.call('XTRIM', KEYS[1], 'MINID', cut)
"""

# Keep a partition's deadlines (the clock service, group ``clock`` on the partition log): replace
# a game's deadlines by those of a newer ``clock_updated`` (or drop them when it ended), and
# acknowledge the log entry. An entry older than what was applied only acknowledges.
# KEYS: 1 deadlines zset, 2 deadline-games hash, 3 log stream
# ARGV: 1 group, 2 message id, 3 game id, 4 version, 5 n (-1: the game ended), then n pairs
#       (score, member)
DEADLINES = CHECK_TYPES + r"""
local bad = qh_wrong({KEYS[1], 'zset', KEYS[2], 'hash', KEYS[3], 'stream'})
if bad then return redis.error_reply(bad) end
local cur = redis.call('HGET', KEYS[2], ARGV[3])
if cur then
  local bar = string.find(cur, '|', 1, true)
  if tonumber(string.sub(cur, 1, bar - 1)) >= tonumber(ARGV[4]) then
    redis.call('XACK', KEYS[3], ARGV[1], ARGV[2])
    return 0
  end
  for m in string.gmatch(string.sub(cur, bar + 1), '[^ ]+') do redis.call('ZREM', KEYS[1], m) end
end
local n = tonumber(ARGV[5])
if n < 0 then
  redis.call('HDEL', KEYS[2], ARGV[3])
else
  local members = {}
  for i = 1, n do
    redis.call('ZADD', KEYS[1], ARGV[4 + 2 * i], ARGV[5 + 2 * i])
    members[i] = ARGV[5 + 2 * i]
  end
  redis.call('HSET', KEYS[2], ARGV[3], ARGV[4] .. '|' .. table.concat(members, ' '))
end
redis.call('XACK', KEYS[3], ARGV[1], ARGV[2])
return 1
"""

# Trim a stream read by several consumer groups (a partition log: projector, clock) below what
# every group may still need: each group's oldest pending entry, else its last delivered one.
# Nothing if the stream has no group. Only for streams whose every reader is a consumer group.
# KEYS: 1 stream
TRIM_BELOW_GROUPS = r"""
local ok, groups = pcall(redis.call, 'XINFO', 'GROUPS', KEYS[1])
if not ok or #groups == 0 then return 0 end
local cut, cms, cseq
for _, g in ipairs(groups) do
  local name, last
  for i = 1, #g, 2 do
    if g[i] == 'name' then name = g[i + 1] elseif g[i] == 'last-delivered-id' then last = g[i + 1] end
  end
  if not name or not last then return 0 end
  local p = redis.call('XPENDING', KEYS[1], name)
  local c = last
  if tonumber(p[1]) > 0 then c = p[2] end
  local a, b = string.match(c, '^(%d+)-(%d+)$')
  if not a then return 0 end
  local ms, seq = tonumber(a), tonumber(b)
  if cut == nil or ms < cms or (ms == cms and seq < cseq) then cut, cms, cseq = c, ms, seq end
end
return redis.call('XTRIM', KEYS[1], 'MINID', cut)
"""
