import { CORRECT_TOKENS } from 'src/common/redis/window-scripts';
import { CLOSE_HOLDS, REDIS_NOW_MS, SYNC_KEY_SPENT, SYNC_SNAPSHOT } from 'src/modules/ledger/balance-gate.scripts';

// The Lua scripts behind UsageQueueService. Each runs atomically on Redis, in one round trip, on
// one account's keys (usage-queue.keys.ts and balance-gate.keys.ts), all in the account's slot.

// Gives an unused hold back (a request that failed before any token was delivered; idempotent). It
// is refused once usage is recorded for the hold: that hold is settlement's, even if the request failed
// after a recording whose reply was lost. KEYS: the hold's keys (holdKeys: snapshot, holds, opened,
// epoch, keySpend), then the usage hash. ARGV: request id. Returns 1 if the hold was open.
export const RELEASE_UNUSED_SCRIPT = `${CLOSE_HOLDS}
if redis.call('HEXISTS', KEYS[6], ARGV[1]) == 1 then return 0 end
return closeHolds(KEYS[1], KEYS[2], KEYS[3], KEYS[5], {ARGV[1]})`;

// Closes settled holds of one account and the usage recorded for them together, then pushes the
// account's settled balance and its keys' settled spent, once for all of them: the keys' spent after
// the holds left their 'reserved', in the same step, so a key's limit never sees a charge twice or not
// at all. One script for a batch's holds of one account, not one per hold: each call costs Redis more
// than the few commands it runs. KEYS: the hold's keys (holdKeys), then the usage hash, its due index
// and the attempts. ARGV: settled balance and version ('' for none), a new epoch id, the number of
// keys with a settled spent, each such key's id and spent, then the request ids.
export const RELEASE_SETTLED_SCRIPT = `${SYNC_SNAPSHOT}
${SYNC_KEY_SPENT}
${CLOSE_HOLDS}
local first = 5 + 2 * tonumber(ARGV[4])
local requestIds = {unpack(ARGV, first)}
closeHolds(KEYS[1], KEYS[2], KEYS[3], KEYS[5], requestIds)
redis.call('HDEL', KEYS[6], unpack(requestIds))
redis.call('ZREM', KEYS[7], unpack(requestIds))
redis.call('HDEL', KEYS[8], unpack(requestIds))
if ARGV[1] ~= '' then sync(KEYS[1], KEYS[4], ARGV[1], ARGV[2], ARGV[3]) end
for i = 5, first - 1, 2 do syncKeySpent(KEYS[5], ARGV[i], KEYS[4], ARGV[i + 1], ARGV[3]) end
return 1`;

// Claimable at once. NX: a recording replayed after a reconnect must not cut a worker's lease short.
// The request's token windows are corrected to its real usage in the same step, once: only by the
// copy that adds the usage while the request's hold is open. A replay finds the usage there, or,
// once settlement has closed both, no hold. KEYS: usage, due, the account's holds, then the token
// windows. ARGV: request id, payload, the tokens to add to the windows (negative: to take back).
// Returns how many usages the account has waiting: 1 means the account may have had none, and the
// caller registers it (account-registry.ts).
export const RECORD_SCRIPT = `${REDIS_NOW_MS}
${CORRECT_TOKENS}
local new = redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], 'NX', now, ARGV[1])
if new == 1 and #KEYS > 3 and ARGV[3] ~= '0' and redis.call('HEXISTS', KEYS[3], ARGV[1]) == 1 then
  correctTokens({unpack(KEYS, 4)}, ARGV[3])
end
return redis.call('ZCARD', KEYS[2])`;

// Claims up to ARGV[1] of the account's recorded usages claimable now by moving them ARGV[2] ms
// into the future: a worker that dies holding them only delays them. KEYS: usage, due, attempts.
// Returns {usages left in the due index (claimed ones included), payload, payload, …}.
export const CLAIM_SCRIPT = `${REDIS_NOW_MS}
local requests = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
local payloads = {0}
for _, request in ipairs(requests) do
  local payload = redis.call('HGET', KEYS[1], request)
  if payload then
    redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), request)
    payloads[#payloads + 1] = payload
  else
    redis.call('ZREM', KEYS[2], request)
    redis.call('HDEL', KEYS[3], request)
  end
end
payloads[1] = redis.call('ZCARD', KEYS[2])
return payloads`;

// A failed settlement gives its claim back early: claimable again after ARGV[1] ms doubling per
// failed attempt up to ARGV[2] ms, times the request's jitter factor (0.5 to 1); past ARGV[3]
// attempts (minutes of them: a payload that can never be stored, not an outage) only every ARGV[4]
// ms. A failure because the database was unavailable (flag '1') says nothing about the payload: it
// backs off up to ARGV[2] ms but never counts past ARGV[3], however long the outage lasts.
// XX: usage settled meanwhile stays gone. KEYS: due, attempts (one account's). ARGV[5…]: request
// id, jitter, flag per usage. Returns the shortest delay set, or -1.
export const RETRY_LATER_SCRIPT = `${REDIS_NOW_MS}
local soonest = -1
for index = 5, #ARGV, 3 do
  local request = ARGV[index]
  if redis.call('ZSCORE', KEYS[1], request) then
    local attempts = redis.call('HINCRBY', KEYS[2], request, 1)
    if ARGV[index + 2] == '1' and attempts > tonumber(ARGV[3]) then
      attempts = tonumber(ARGV[3])
      redis.call('HSET', KEYS[2], request, attempts)
    end
    local delay = math.min(tonumber(ARGV[2]), tonumber(ARGV[1]) * 2 ^ math.min(attempts - 1, 30))
    if attempts > tonumber(ARGV[3]) then delay = tonumber(ARGV[4]) end
    delay = math.floor(delay * tonumber(ARGV[index + 1]) / 1000)
    redis.call('ZADD', KEYS[1], 'XX', now + delay, request)
    if soonest < 0 or delay < soonest then soonest = delay end
  end
end
return soonest`;

// For the worker's metrics: how many usages of the account wait (ZCARD) and, among the ARGV[1] next
// to be claimed and the ARGV[1] last (claimed, or waiting for a retry), the oldest recording time (a
// payload's recordedAtMs; older records have none and are skipped). Bounded: at most ARGV[1] * 2
// reads however long the backlog. KEYS: usage, due. Returns { count, age in ms of the oldest seen, or -1 }.
export const BACKLOG_SCRIPT = `${REDIS_NOW_MS}
local count = redis.call('ZCARD', KEYS[2])
local oldest = -1
local function scan(requests)
  for _, request in ipairs(requests) do
    local payload = redis.call('HGET', KEYS[1], request)
    local recorded = payload and tonumber(string.match(payload, '"recordedAtMs":(%d+)'))
    if recorded and (oldest < 0 or recorded < oldest) then oldest = recorded end
  end
end
local sample = tonumber(ARGV[1])
scan(redis.call('ZRANGE', KEYS[2], 0, sample - 1))
if count > sample then scan(redis.call('ZRANGE', KEYS[2], math.max(sample, count - sample), -1)) end
if oldest < 0 then return { count, -1 } end
return { count, math.max(0, now - oldest) }`;

// Replaces the admission's token estimate with the real count, outside a usage record (nothing
// billed, or the hold given back). KEYS: the token windows; ARGV[1]: the difference.
export const CORRECT_TOKENS_SCRIPT = `${CORRECT_TOKENS}
correctTokens(KEYS, ARGV[1])
return 1`;
