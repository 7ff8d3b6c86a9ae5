// The Lua behind ChannelBreaker. The breaker's rules are TypeScript (breaker-policy.ts); Redis only
// makes each write atomic: a new state is written only over the version it was computed from.

// KEYS: the channel's hash, the set of tracked channels. ARGV: channel id, expected version, 1 to track
// (not plainly closed) or 0, then field/value pairs. Returns 1 when written, 0 when the version moved.
export const BREAKER_CAS_SCRIPT = `
local version = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
if version ~= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], 'version', version + 1, unpack(ARGV, 4))
if ARGV[3] == '1' then redis.call('SADD', KEYS[2], ARGV[1]) else redis.call('SREM', KEYS[2], ARGV[1]) end
return 1`;

// KEYS: the probe key. ARGV: the holder's token. Frees the probe only if this holder still has it.
export const RELEASE_PROBE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1`;
