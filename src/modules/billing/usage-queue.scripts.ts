import {
  CLOSE_HOLD,
  KEY_SPEND_PREFIX,
  REDIS_NOW_MS,
  SYNC_KEY_SPENT,
  SYNC_SNAPSHOT,
} from 'src/modules/ledger/balance-gate.scripts';

// The Lua scripts behind UsageQueueService. Each runs atomically on Redis, in one round trip.
//
// Keys: usage recorded and not settled yet {requestId: payload JSON} per account, one index of it
// scored by when it may be claimed (Redis's clock), and the failed settlement attempts per usage
// (for the backoff). Members of both indexes are `accountId:requestId`, as in the index of holds.

// Closes a hold and the usage recorded for it together. KEYS: the hold's keys (holdKeys: snapshot,
// holds, hold index, epoch), then the usage hash, the usage index and the attempts. Settlement's
// release (ARGV[5] = '0') closes both and pushes the settled balance (ARGV[3], version ARGV[4]).
// Giving an unused hold back (ARGV[5] = '1') refuses once usage is recorded for it: that hold is
// settlement's, even if the request failed after a recording whose reply was lost. Settlement also
// pushes the key's settled spent (ARGV[8], key id ARGV[7]; '' for none), after the hold left its
// 'reserved', in the same step: the key's limit never sees the charge twice or not at all.
export const RELEASE_SCRIPT = `${SYNC_SNAPSHOT}
${SYNC_KEY_SPENT}
${CLOSE_HOLD}
if ARGV[5] == '1' and redis.call('HEXISTS', KEYS[5], ARGV[1]) == 1 then return 0 end
local closed = closeHold(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2])
redis.call('HDEL', KEYS[5], ARGV[1])
redis.call('ZREM', KEYS[6], ARGV[2])
redis.call('HDEL', KEYS[7], ARGV[2])
if ARGV[3] ~= '' then sync(KEYS[1], KEYS[4], ARGV[3], ARGV[4], ARGV[6]) end
if ARGV[8] ~= '' then syncKeySpent('${KEY_SPEND_PREFIX}' .. ARGV[7], KEYS[4], ARGV[8], ARGV[6]) end
return closed`;

// Claimable at once. NX: a recording replayed after a reconnect must not cut a worker's lease short.
export const RECORD_SCRIPT = `${REDIS_NOW_MS}
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], 'NX', now, ARGV[3])
return 1`;

// Claims up to ARGV[1] recorded usages claimable now by moving them ARGV[2] ms into the future: a
// worker that dies holding them only delays them. The per-account hash key is derived
// here (not declared), as the member names its account; fine on one Redis, not on a cluster.
export const CLAIM_SCRIPT = `${REDIS_NOW_MS}
local members = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
local payloads = {}
for _, member in ipairs(members) do
  local separator = string.find(member, ':', 1, true)
  local payload = redis.call('HGET', ARGV[3] .. string.sub(member, 1, separator - 1), string.sub(member, separator + 1))
  if payload then
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), member)
    payloads[#payloads + 1] = payload
  else
    redis.call('ZREM', KEYS[1], member)
    redis.call('HDEL', KEYS[2], member)
  end
end
return payloads`;

// A failed settlement gives its claim back early: claimable again after ARGV[1] ms doubling per
// failed attempt up to ARGV[2] ms, times the member's jitter factor (0.5 to 1); past ARGV[3]
// attempts (minutes of them: a payload that can never be stored, not an outage) only every ARGV[4]
// ms. A failure because the database was unavailable (flag '1') says nothing about the payload: it
// backs off up to ARGV[2] ms but never counts past ARGV[3], however long the outage lasts.
// XX: usage settled meanwhile stays gone. Returns the shortest delay set, or -1.
export const RETRY_LATER_SCRIPT = `${REDIS_NOW_MS}
local soonest = -1
for index = 5, #ARGV, 3 do
  local member = ARGV[index]
  if redis.call('ZSCORE', KEYS[1], member) then
    local attempts = redis.call('HINCRBY', KEYS[2], member, 1)
    if ARGV[index + 2] == '1' and attempts > tonumber(ARGV[3]) then
      attempts = tonumber(ARGV[3])
      redis.call('HSET', KEYS[2], member, attempts)
    end
    local delay = math.min(tonumber(ARGV[2]), tonumber(ARGV[1]) * 2 ^ math.min(attempts - 1, 30))
    if attempts > tonumber(ARGV[3]) then delay = tonumber(ARGV[4]) end
    delay = math.floor(delay * tonumber(ARGV[index + 1]) / 1000)
    redis.call('ZADD', KEYS[1], 'XX', now + delay, member)
    if soonest < 0 or delay < soonest then soonest = delay end
  end
end
return soonest`;

// For the worker's metrics: how many usages wait (ZCARD) and, among the 500 next to be claimed and
// the 500 last (claimed, or waiting for a retry), the oldest recording time (a payload's
// recordedAtMs; older records have none and are skipped). Bounded: at most ARGV[1] * 2 reads however
// long the backlog. Returns { count, age in ms of the oldest seen, or -1 }. Hash keys are derived from
// the members, as in CLAIM_SCRIPT.
export const BACKLOG_SCRIPT = `${REDIS_NOW_MS}
local count = redis.call('ZCARD', KEYS[1])
local oldest = -1
local function scan(members)
  for _, member in ipairs(members) do
    local separator = string.find(member, ':', 1, true)
    local payload = redis.call('HGET', ARGV[2] .. string.sub(member, 1, separator - 1), string.sub(member, separator + 1))
    local recorded = payload and tonumber(string.match(payload, '"recordedAtMs":(%d+)'))
    if recorded and (oldest < 0 or recorded < oldest) then oldest = recorded end
  end
end
local sample = tonumber(ARGV[1])
scan(redis.call('ZRANGE', KEYS[1], 0, sample - 1))
if count > sample then scan(redis.call('ZRANGE', KEYS[1], math.max(sample, count - sample), -1)) end
if oldest < 0 then return { count, -1 } end
return { count, math.max(0, now - oldest) }`;
