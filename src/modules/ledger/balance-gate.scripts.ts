// The Lua scripts behind BalanceGateService. Each runs atomically on Redis, in one round trip.
//
// Keys: one snapshot hash per account {balance, version, epoch, reserved}, its open holds
// {requestId: 'amount:keyId'}, and one index of all holds by when they were opened (Redis's clock), for the
// sweeper. The epoch hash {id, runId} names the Redis data set the snapshots were loaded into.
// Billing's usage queue closes holds in its own scripts, beside the usage recorded for them, with
// the fragments CLOSE_HOLD and SYNC_SNAPSHOT below.

// Amounts are passed as strings and moved with HINCRBY so the arithmetic stays exact 64-bit; only the
// admission comparison goes through Lua numbers (exact below 2^53 nano-dollars, about $9 million).

// A key with a spend limit has its own snapshot hash {spent, epoch, reserved} (KEY_SPEND_PREFIX +
// key id): what settlement has charged through it (Postgres's api_keys.spent, which only grows) and
// its open holds. Every hold adds to its key's 'reserved', limit or not, so a limit set later counts
// the holds already open; a hold's value names its key ('amount:keyId') so that closing it can
// give the key's share back without the caller knowing the key.
export const KEY_SPEND_PREFIX = 'gw:keyspend:';

// Process clocks never matter: every time stored or compared is Redis's own.
export const REDIS_NOW_MS = `local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)`;

// A snapshot counts only if it was loaded into this data set: after a restart (or a restore from an
// older copy) the epoch changes, and every snapshot reloads from Postgres on its next admission.
// A key with a limit (ARGV[6], nano-dollars; '' for none) must fit its spent + open holds + this hold
// in the same step as the balance, so concurrent requests can never overrun either (-3: the key's
// snapshot is not of this epoch and loads first; -4: over the limit, with what is left).
// The hold checks the server's run id itself (returning -2 after making a new epoch, ARGV[4]) rather
// than trusting the client's check after a reconnect: the client re-sends a hold that was in flight
// when the connection dropped before that check runs, and it must not pass against restored data.
export const HOLD_SCRIPT = `${REDIS_NOW_MS}
local runId = string.match(redis.call('INFO', 'server'), 'run_id:(%w+)')
if redis.call('HGET', KEYS[4], 'runId') ~= runId then
  redis.call('HSET', KEYS[4], 'id', ARGV[4], 'runId', runId)
  return {-2, '0'}
end
local snapshot = redis.call('HMGET', KEYS[1], 'balance', 'reserved', 'epoch')
local epoch = redis.call('HGET', KEYS[4], 'id')
if (not snapshot[1]) or (not epoch) or snapshot[3] ~= epoch then return {-1, '0'} end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return {1, '0'} end
local available = tonumber(snapshot[1]) - tonumber(snapshot[2] or '0')
if available < tonumber(ARGV[2]) then return {0, tostring(available)} end
if ARGV[6] ~= '' then
  local key = redis.call('HMGET', KEYS[5], 'spent', 'reserved', 'epoch')
  if (not key[1]) or key[3] ~= epoch then return {-3, '0'} end
  local left = tonumber(ARGV[6]) - tonumber(key[1]) - tonumber(key[2] or '0')
  if left < tonumber(ARGV[2]) then return {-4, tostring(left)} end
end
redis.call('HINCRBY', KEYS[1], 'reserved', ARGV[2])
redis.call('HINCRBY', KEYS[5], 'reserved', ARGV[2])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2] .. ':' .. ARGV[5])
redis.call('ZADD', KEYS[3], now, ARGV[3])
return {1, '0'}`;

// A balance read from Postgres replaces the snapshot if it is newer, or if the snapshot belongs to
// another epoch (its version may be ahead of the truth: a restore rewinds nothing in Postgres).
// 'reserved' stays: it moves only with the holds beside it, and both came back together.
export const SYNC_SNAPSHOT = `
local function sync(key, epochKey, balance, version, newEpoch)
  local epoch = redis.call('HGET', epochKey, 'id')
  if not epoch then
    epoch = newEpoch
    redis.call('HSET', epochKey, 'id', epoch)
  end
  local current = redis.call('HMGET', key, 'version', 'epoch')
  if (not current[1]) or current[2] ~= epoch or tonumber(version) > tonumber(current[1]) then
    redis.call('HSET', key, 'balance', balance, 'version', version, 'epoch', epoch)
    return 1
  end
  return 0
end`;

export const SYNC_SCRIPT = `${SYNC_SNAPSHOT}
sync(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3])
return 1`;

// A key's spent read from Postgres (or pushed by settlement) replaces the snapshot when it is higher
// (spent only grows, so higher is newer) or when the snapshot belongs to another epoch.
export const SYNC_KEY_SPENT = `
local function syncKeySpent(key, epochKey, spent, newEpoch)
  local epoch = redis.call('HGET', epochKey, 'id')
  if not epoch then
    epoch = newEpoch
    redis.call('HSET', epochKey, 'id', epoch)
  end
  local current = redis.call('HMGET', key, 'spent', 'epoch')
  if (not current[1]) or current[2] ~= epoch or tonumber(spent) > tonumber(current[1]) then
    redis.call('HSET', key, 'spent', spent, 'epoch', epoch)
  end
end`;

export const SYNC_KEY_SCRIPT = `${SYNC_KEY_SPENT}
syncKeySpent(KEYS[1], KEYS[2], ARGV[1], ARGV[2])
return 1`;

// Balances read from Postgres (ARGV: prefix, new epoch id, then accountId, balance, version per
// account) pushed where Redis has a snapshot that is older; an account without one loads on its next
// admission anyway. Keys derived here, as in CLAIM_SCRIPT. Returns how many snapshots were behind.
export const RESYNC_SCRIPT = `${SYNC_SNAPSHOT}
local behind = 0
for index = 3, #ARGV, 3 do
  local key = ARGV[1] .. ARGV[index]
  if redis.call('EXISTS', key) == 1 then
    behind = behind + sync(key, KEYS[1], ARGV[index + 1], ARGV[index + 2], ARGV[2])
  end
end
return behind`;

// A new epoch once per Redis start: a run id other than the one the epoch was made under means
// Redis restarted since, and its data may be older than Postgres (restored, or an AOF behind).
export const CHECK_EPOCH_SCRIPT = `
if redis.call('HGET', KEYS[1], 'runId') == ARGV[1] and redis.call('HEXISTS', KEYS[1], 'id') == 1 then return 0 end
redis.call('HSET', KEYS[1], 'id', ARGV[2], 'runId', ARGV[1])
return 1`;

// Closes a hold (idempotent): its amount leaves the account's 'reserved' and its key's, it leaves
// the index. The key's snapshot is derived from the hold's value (as CLAIM_SCRIPT derives keys):
// fine on one Redis, not on a cluster. Holds opened before keys were tracked carry no key.
// Returns 1 if it was open.
export const CLOSE_HOLD = `
local function closeHold(snapshotKey, holdsKey, holdIndex, requestId, member)
  local held = redis.call('HGET', holdsKey, requestId)
  if held then
    local separator = string.find(held, ':', 1, true)
    local amount = separator and string.sub(held, 1, separator - 1) or held
    redis.call('HDEL', holdsKey, requestId)
    redis.call('HINCRBY', snapshotKey, 'reserved', '-' .. amount)
    if separator then
      redis.call('HINCRBY', '${KEY_SPEND_PREFIX}' .. string.sub(held, separator + 1), 'reserved', '-' .. amount)
    end
  end
  redis.call('ZREM', holdIndex, member)
  return held and 1 or 0
end`;

// Holds opened before ARGV[1] ms ago by Redis's clock, the clock that opened them.
export const STALE_HOLDS_SCRIPT = `${REDIS_NOW_MS}
return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]), 'LIMIT', tonumber(ARGV[2]), tonumber(ARGV[3]))`;
