/**
 * Lua run inside Redis, so that a check and its count are one atomic step for every
 * replica. Time is Redis's own clock (TIME), so replicas with skewed clocks agree.
 *
 * Per scope, four keys: `log` (sorted set: request id by admission time), `amt` (hash:
 * request id -> tokens), `tot` (tokens in the window), `run` (sorted set: running request
 * id by lease end). ARGV: id, tokens, window ms, lease ms, then rpm, tpm, concurrency per scope.
 * Returns {admitted 1|0, scope index, dimension 1 requests|2 tokens|3 concurrency, retry ms,
 * {requests, tokens, reset ms} per scope checked}. A tokens refusal's retry looks at the
 * oldest 1,000 entries at most (past them it says the whole window).
 */
export const ADMIT_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local id = ARGV[1]
local tokens = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local lease = tonumber(ARGV[4])
local n = #KEYS / 4
local usage = {}
for i = 0, n - 1 do
  local log, amt, tot, run = KEYS[i*4+1], KEYS[i*4+2], KEYS[i*4+3], KEYS[i*4+4]
  local rpm, tpm, conc = tonumber(ARGV[5+i*3]), tonumber(ARGV[6+i*3]), tonumber(ARGV[7+i*3])
  local cutoff = now - window
  local old = redis.call('ZRANGEBYSCORE', log, '-inf', cutoff)
  if #old > 0 then
    local freed = 0
    for _, m in ipairs(old) do
      local a = redis.call('HGET', amt, m)
      if a then
        freed = freed + tonumber(a)
        redis.call('HDEL', amt, m)
      end
    end
    redis.call('ZREMRANGEBYSCORE', log, '-inf', cutoff)
    redis.call('DECRBY', tot, freed)
  end
  local count = redis.call('ZCARD', log)
  local used = tonumber(redis.call('GET', tot) or '0')
  local reset = 0
  if count > 0 then
    local first = redis.call('ZRANGE', log, 0, 0, 'WITHSCORES')
    reset = tonumber(first[2]) + window - now
  end
  usage[#usage + 1] = {count, used, reset}
  if rpm > 0 and count + 1 > rpm then return {0, i, 1, math.max(1, reset), usage} end
  if tpm > 0 and used + tokens > tpm then
    local retry = window
    if tokens <= tpm then
      local over = used + tokens - tpm
      local entries = redis.call('ZRANGE', log, 0, 999, 'WITHSCORES')
      for j = 1, #entries, 2 do
        over = over - tonumber(redis.call('HGET', amt, entries[j]) or '0')
        if over <= 0 then
          retry = math.max(1, tonumber(entries[j + 1]) + window - now)
          break
        end
      end
    end
    return {0, i, 2, retry, usage}
  end
  if conc > 0 then
    redis.call('ZREMRANGEBYSCORE', run, '-inf', now)
    if redis.call('ZCARD', run) + 1 > conc then return {0, i, 3, 1000, usage} end
  end
end
for i = 0, n - 1 do
  local log, amt, tot, run = KEYS[i*4+1], KEYS[i*4+2], KEYS[i*4+3], KEYS[i*4+4]
  redis.call('ZADD', log, now, id)
  redis.call('HSET', amt, id, tokens)
  redis.call('INCRBY', tot, tokens)
  redis.call('PEXPIRE', log, window + 1000)
  redis.call('PEXPIRE', amt, window + 1000)
  redis.call('PEXPIRE', tot, window + 1000)
  if tonumber(ARGV[7+i*3]) > 0 then
    redis.call('ZADD', run, now + lease, id)
    redis.call('PEXPIRE', run, lease + 1000)
  end
end
return {1, 0, 0, 0, usage}
`;

/**
 * Release a request's slots and settle its tokens. Per scope three keys: `amt`, `tot`,
 * `run`. ARGV: id, real tokens. A reservation that already left the window is not touched.
 * Running it twice is running it once (so a finish whose answer was lost may be sent again).
 */
export const FINISH_LUA = `
local n = #KEYS / 3
for i = 0, n - 1 do
  local amt, tot, run = KEYS[i*3+1], KEYS[i*3+2], KEYS[i*3+3]
  redis.call('ZREM', run, ARGV[1])
  local r = redis.call('HGET', amt, ARGV[1])
  if r then
    redis.call('HSET', amt, ARGV[1], ARGV[2])
    redis.call('INCRBY', tot, tonumber(ARGV[2]) - tonumber(r))
  end
end
return n
`;

/**
 * Undo an admission the gateway gave up on: its command timed out or its connection was lost, so the fail mode
 * decided the request, yet Redis may have run it (a stalled Redis runs it when it wakes). Per scope four keys: `log`,
 * `amt`, `tot`, `run`. ARGV: id. Sent on the same connection after the admission, so it runs after it; an admission
 * that never ran is not found (nothing to undo), and running it twice is running it once.
 */
export const CANCEL_LUA = `
local n = #KEYS / 4
for i = 0, n - 1 do
  local log, amt, tot, run = KEYS[i*4+1], KEYS[i*4+2], KEYS[i*4+3], KEYS[i*4+4]
  redis.call('ZREM', run, ARGV[1])
  redis.call('ZREM', log, ARGV[1])
  local r = redis.call('HGET', amt, ARGV[1])
  if r then
    redis.call('HDEL', amt, ARGV[1])
    redis.call('DECRBY', tot, tonumber(r))
  end
end
return n
`;
