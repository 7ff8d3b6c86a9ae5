// Lua fragments for rate windows, shared by the scripts that count in them: the throttler storage's
// own script, and the completion admission's, which counts a request's windows in the same step as
// its balance hold (balance-gate.scripts.ts). Each takes its keys and limits as Lua tables, so one
// script can hold several families of windows.

// Request windows: fixed windows that start with their first request. Every window is checked
// before any is counted, so a request refused by one (say, its end user's) counts in none, and
// "used" in a 429 message is exactly what was served.
// requestsRefusedBy returns the index of the first full window, its hits and its ms left; or nil.
// countRequests counts in every window (each one's ttl set by its first request) and returns the
// first window's hits and ms left.
export const REQUEST_WINDOWS = `
local function requestsRefusedBy(keys, limits)
  for i, key in ipairs(keys) do
    local hits = tonumber(redis.call('GET', key) or '0')
    if hits >= tonumber(limits[i]) then return i, hits, redis.call('PTTL', key) end
  end
  return nil, 0, 0
end
local function countRequests(keys, ttls)
  local first, firstTtl = 0, 0
  for i, key in ipairs(keys) do
    local hits = redis.call('INCR', key)
    if hits == 1 then redis.call('PEXPIRE', key, ttls[i]) end
    if i == 1 then first, firstTtl = hits, redis.call('PTTL', key) end
  end
  return first, firstTtl
end`;

// Token windows: aligned to the clock (the key names the window), so the correction at the end of a
// request finds the very window its admission counted in. tokensRefusedBy returns the index of the
// first window that `amount` would take past its limit and what it has used; or nil and what the
// first window has used. countTokens adds `amount` to every window and returns the first's total.
export const TOKEN_WINDOWS = `
local function tokensRefusedBy(keys, limits, amount)
  local firstUsed = 0
  for i, key in ipairs(keys) do
    local used = tonumber(redis.call('GET', key) or '0')
    if i == 1 then firstUsed = used end
    if used + amount > tonumber(limits[i]) then return i, used end
  end
  return nil, firstUsed
end
local function countTokens(keys, amount, ttl)
  local first = 0
  for i, key in ipairs(keys) do
    local used = redis.call('INCRBY', key, amount)
    redis.call('PEXPIRE', key, ttl)
    if i == 1 then first = used end
  end
  return first
end`;

/** Tokens to give to (or, negative, take back from) windows counted at admission: CORRECT_TOKENS. */
export interface WindowCorrection {
  keys: string[];
  delta: number;
}

// Gives `delta` tokens to the windows that still exist (a negative one takes them back); never below
// zero. The correction once a request's real usage is known.
export const CORRECT_TOKENS = `
local function correctTokens(keys, delta)
  for _, key in ipairs(keys) do
    if redis.call('EXISTS', key) == 1 then
      local value = redis.call('INCRBY', key, delta)
      if value < 0 then redis.call('SET', key, 0, 'KEEPTTL') end
    end
  end
end`;
