import { FunctionSource } from 'src/common/redis/encoded-function';
import { REQUEST_WINDOWS, TOKEN_WINDOWS } from 'src/common/redis/window-scripts';

// The Lua scripts behind BalanceGateService. Each runs atomically on Redis, in one round trip, and
// touches only keys it is given, all in one account's slot (balance-gate.keys.ts): the account's
// snapshot hash, its open holds and their opened-at index, its epoch hash and its keys' spend hash.
// Billing's usage queue closes holds in its own scripts, beside the usage recorded for them, with
// the fragments CLOSE_HOLDS and SYNC_SNAPSHOT below.

// Amounts are passed as strings and moved with HINCRBY so the arithmetic stays exact 64-bit; only the
// admission comparison goes through Lua numbers (exact below 2^53 nano-dollars, about $9 million).

// A key with a spend limit has its fields in the account's keySpend hash ('<keyId>:spent',
// ':epoch', ':reserved'): what settlement has charged through it (Postgres's api_keys.spent, which
// only grows) and its open holds. Every hold adds to its key's 'reserved', limit or not, so a limit
// set later counts the holds already open; a hold's value names its key ('amount:keyId') so that
// closing it can give the key's share back without the caller knowing the key.

// Process clocks never matter: every time stored or compared is Redis's own.
export const REDIS_NOW_MS = `local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)`;

// The run id of the server running the script: it changes whenever that server restarts.
const READ_RUN_ID = `string.match(redis.call('INFO', 'server'), 'run_id:(%w+)')`;
const RUN_ID = `local function runId() return ${READ_RUN_ID} end`;

// The same, read once per load of a function library (encoded-function.ts) rather than on every
// call: reading it is a quarter of the admission's time in Redis (docs/performance.md, "Admission:
// one script, then a Redis function"). A library's state lives in the server process that loaded it
// and dies with it; a run id never changes within a process, so the value kept is always the running
// server's.
const LIBRARY_RUN_ID = `local serverRunId
local function runId()
  if not serverRunId then serverRunId = ${READ_RUN_ID} end
  return serverRunId
end`;

// A snapshot counts only if it was loaded into this data set. Each account has its own epoch,
// stamped with the run id of the server holding the account's slot: after that server restarts (or
// is restored from an older copy) the run id differs, the account's epoch changes on its next hold,
// and its snapshots reload from Postgres. On a cluster only the restarted master's accounts reload.
// The hold checks the run id itself rather than trusting a client's check after a reconnect: the
// client re-sends a hold that was in flight when the connection dropped, and it must not pass
// against restored data.
//
// The admission's counters are counted in the same step as the hold, all in the account's slot
// (window-scripts.ts): requests per minute, then tokens per minute, then the hold, the first refusal
// answering. Nothing is counted before the snapshots are known to be of this epoch, so that the
// caller may load them and run the script again. A request refused by its tokens or its balance
// stays counted in its request windows (it reached the counting); its tokens are counted only with
// the hold. A repeat of a request whose hold is open (a re-send after a reconnect) counts nothing.
//
// KEYS: snapshot, holds, opened, epoch, keySpend, then the request windows, then the token windows.
// ARGV: request id, amount, a new epoch id, the key's id, the key's limit (nano-dollars; '' for
// none), the number of request windows, the number of token windows, the request windows' ttl, the
// tokens counted, the token windows' ttl, then the request windows' limits, then the token windows'.
// Returns {status, amount, first, requests refused by, requests hits, requests ms left, tokens
// refused by, tokens used}. Status: 1 held (first = 1 when it is the account's only open hold: the
// caller registers the account for the sweeper), 0 insufficient (with what is available), -1 no
// snapshot of this epoch, -2 a new epoch (the server restarted), -3 the key's spend is not of this
// epoch and loads first, -4 over the key's limit (with what is left), -5 a window refused (its index
// among the request or the token windows, 1-based). Hits and ms left are the first request window's,
// or the refusing one's; tokens used are the first token window's, or the refusing one's, after this
// request's when held.
const ADMIT = `${REDIS_NOW_MS}
${REQUEST_WINDOWS}
${TOKEN_WINDOWS}
local requestCount, tokenCount = tonumber(ARGV[6]), tonumber(ARGV[7])
local requestKeys = {unpack(KEYS, 6, 5 + requestCount)}
local tokenKeys = {unpack(KEYS, 6 + requestCount, 5 + requestCount + tokenCount)}
local requestLimits = {unpack(ARGV, 11, 10 + requestCount)}
local tokenLimits = {unpack(ARGV, 11 + requestCount, 10 + requestCount + tokenCount)}
local requestTtls = {}
for i = 1, requestCount do requestTtls[i] = ARGV[8] end
local tokens = tonumber(ARGV[9])
local server = runId()
local stamped = redis.call('HGET', KEYS[4], 'runId')
if stamped ~= server then
  redis.call('HSET', KEYS[4], 'id', ARGV[3], 'runId', server)
  return {stamped and -2 or -1, '0', 0, 0, 0, 0, 0, 0}
end
local snapshot = redis.call('HMGET', KEYS[1], 'balance', 'reserved', 'epoch')
local epoch = redis.call('HGET', KEYS[4], 'id')
if (not snapshot[1]) or (not epoch) or snapshot[3] ~= epoch then return {-1, '0', 0, 0, 0, 0, 0, 0} end
local key = nil
if ARGV[5] ~= '' then
  key = redis.call('HMGET', KEYS[5], ARGV[4] .. ':spent', ARGV[4] .. ':reserved', ARGV[4] .. ':epoch')
  if (not key[1]) or key[3] ~= epoch then return {-3, '0', 0, 0, 0, 0, 0, 0} end
end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then
  local hits = requestCount > 0 and tonumber(redis.call('GET', requestKeys[1]) or '0') or 0
  local ttl = requestCount > 0 and redis.call('PTTL', requestKeys[1]) or 0
  local used = tokenCount > 0 and tonumber(redis.call('GET', tokenKeys[1]) or '0') or 0
  return {1, '0', 0, 0, hits, ttl, 0, used}
end
local refused, hits, ttl = requestsRefusedBy(requestKeys, requestLimits)
if refused then return {-5, '0', 0, refused, hits, ttl, 0, 0} end
hits, ttl = countRequests(requestKeys, requestTtls)
local over, used = tokensRefusedBy(tokenKeys, tokenLimits, tokens)
if over then return {-5, '0', 0, 0, hits, ttl, over, used} end
local available = tonumber(snapshot[1]) - tonumber(snapshot[2] or '0')
if available < tonumber(ARGV[2]) then return {0, tostring(available), 0, 0, hits, ttl, 0, used} end
if key then
  local left = tonumber(ARGV[5]) - tonumber(key[1]) - tonumber(key[2] or '0')
  if left < tonumber(ARGV[2]) then return {-4, tostring(left), 0, 0, hits, ttl, 0, used} end
end
if tokenCount > 0 then used = countTokens(tokenKeys, ARGV[9], ARGV[10]) end
redis.call('HINCRBY', KEYS[1], 'reserved', ARGV[2])
redis.call('HINCRBY', KEYS[5], ARGV[4] .. ':reserved', ARGV[2])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2] .. ':' .. ARGV[4])
redis.call('ZADD', KEYS[3], now, ARGV[1])
return {1, '0', redis.call('HLEN', KEYS[2]) == 1 and 1 or 0, 0, hits, ttl, 0, used}`;

/** The admission as a script (EVAL), reading the run id on every call. */
export const ADMIT_SCRIPT = `${RUN_ID}
${ADMIT}`;

/** The admission as a function (FCALL), where Redis has them: the run id read once per library load. */
export const ADMIT_FUNCTION: FunctionSource = { library: LIBRARY_RUN_ID, body: ADMIT };

// The account's epoch, made (stamped with this server's run id) when it has none.
const EPOCH_OF = `${RUN_ID}
local function epochOf(epochKey, newEpoch)
  local epoch = redis.call('HGET', epochKey, 'id')
  if not epoch then
    epoch = newEpoch
    redis.call('HSET', epochKey, 'id', epoch, 'runId', runId())
  end
  return epoch
end`;

// A balance read from Postgres replaces the snapshot if it is newer, or if the snapshot belongs to
// another epoch (its version may be ahead of the truth: a restore rewinds nothing in Postgres).
// 'reserved' stays: it moves only with the holds beside it, and both came back together.
export const SYNC_SNAPSHOT = `${EPOCH_OF}
local function sync(key, epochKey, balance, version, newEpoch)
  local epoch = epochOf(epochKey, newEpoch)
  local current = redis.call('HMGET', key, 'version', 'epoch')
  if (not current[1]) or current[2] ~= epoch or tonumber(version) > tonumber(current[1]) then
    redis.call('HSET', key, 'balance', balance, 'version', version, 'epoch', epoch)
    return 1
  end
  return 0
end`;

// KEYS: snapshot, epoch. ARGV: balance, version, a new epoch id.
export const SYNC_SCRIPT = `${SYNC_SNAPSHOT}
sync(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3])
return 1`;

// A key's spent read from Postgres (or pushed by settlement) replaces the snapshot when it is higher
// (spent only grows, so higher is newer) or when the snapshot belongs to another epoch. Needs EPOCH_OF
// (SYNC_SNAPSHOT brings it).
export const SYNC_KEY_SPENT = `
local function syncKeySpent(keySpendKey, keyId, epochKey, spent, newEpoch)
  local epoch = epochOf(epochKey, newEpoch)
  local current = redis.call('HMGET', keySpendKey, keyId .. ':spent', keyId .. ':epoch')
  if (not current[1]) or current[2] ~= epoch or tonumber(spent) > tonumber(current[1]) then
    redis.call('HSET', keySpendKey, keyId .. ':spent', spent, keyId .. ':epoch', epoch)
  end
end`;

// KEYS: keySpend, epoch. ARGV: key id, spent, a new epoch id.
export const SYNC_KEY_SCRIPT = `${EPOCH_OF}
${SYNC_KEY_SPENT}
syncKeySpent(KEYS[1], ARGV[1], KEYS[2], ARGV[2], ARGV[3])
return 1`;

// A balance read from Postgres pushed where Redis has a snapshot that is older; an account without
// one loads on its next admission anyway. KEYS: snapshot, epoch. ARGV: balance, version, a new
// epoch id. Returns 1 when the snapshot was behind.
export const RESYNC_SCRIPT = `${SYNC_SNAPSHOT}
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
return sync(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3])`;

// Closes holds (idempotent): each open one's amount leaves the account's 'reserved' and its key's,
// and each leaves the opened-at index. Holds opened before keys were tracked carry no key. A few
// commands for all of them rather than five per hold: settlement closes up to a hundred at once, and
// Redis runs nothing else meanwhile (one hold at a time cost 7-9 µs each, docs/performance.md,
// "Settlement's Redis and Postgres work"). The amounts are summed in Lua numbers only while the sum
// stays an exact integer (below 2^53); an amount that would break that goes back by itself, with
// HINCRBY's 64-bit arithmetic.
// A request id given twice closes its hold once. Returns how many of the holds were open.
export const CLOSE_HOLDS = `
local MAX_EXACT = 9007199254740991
local function addExact(hashKey, field, sum, amount)
  local n = tonumber(amount)
  if n and n >= 0 and n == math.floor(n) and sum + n <= MAX_EXACT then return sum + n end
  redis.call('HINCRBY', hashKey, field, '-' .. amount)
  return sum
end
local function closeHolds(snapshotKey, holdsKey, openedKey, keySpendKey, requestIds)
  local held = redis.call('HMGET', holdsKey, unpack(requestIds))
  local open, seen, reserved, keyReserved, keyFields = {}, {}, 0, {}, {}
  for i = 1, #requestIds do
    local value = held[i]
    if value and not seen[requestIds[i]] then
      seen[requestIds[i]] = true
      open[#open + 1] = requestIds[i]
      local separator = string.find(value, ':', 1, true)
      local amount = separator and string.sub(value, 1, separator - 1) or value
      reserved = addExact(snapshotKey, 'reserved', reserved, amount)
      if separator then
        local field = string.sub(value, separator + 1) .. ':reserved'
        if not keyReserved[field] then
          keyReserved[field] = 0
          keyFields[#keyFields + 1] = field
        end
        keyReserved[field] = addExact(keySpendKey, field, keyReserved[field], amount)
      end
    end
  end
  if #open > 0 then
    redis.call('HDEL', holdsKey, unpack(open))
    if reserved > 0 then redis.call('HINCRBY', snapshotKey, 'reserved', string.format('-%d', reserved)) end
    for _, field in ipairs(keyFields) do
      if keyReserved[field] > 0 then
        redis.call('HINCRBY', keySpendKey, field, string.format('-%d', keyReserved[field]))
      end
    end
  end
  redis.call('ZREM', openedKey, unpack(requestIds))
  return #open
end`;

// One account's holds opened before ARGV[1] ms ago by Redis's clock, the clock that opened them.
// KEYS: opened, holds. Returns {open holds, requestId, opened at, requestId, opened at, …}.
export const STALE_HOLDS_SCRIPT = `${REDIS_NOW_MS}
local stale = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]), 'WITHSCORES')
table.insert(stale, 1, redis.call('HLEN', KEYS[2]))
return stale`;
