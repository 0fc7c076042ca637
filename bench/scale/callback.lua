-- wrk: as bench/callback/callback.lua (each request a Porto approval of its own proposal
-- B-<n>, own protocolo), starting after OFFSET so that runs on one database use fresh
-- proposals: thread t sends OFFSET + t*PER_THREAD + 1, + 2, ...
local threads = {}

function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end

function init(args)
  per = tonumber(os.getenv("PER_THREAD") or "20000")
  base = tonumber(os.getenv("OFFSET") or "0") + tid * per
  counter = 0
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("TOKEN")
end

function request()
  counter = counter + 1
  if counter > per then
    error("PER_THREAD exhausted: seed more proposals")
  end
  local n = base + counter
  local body = string.format(
    '{"idProposta":"B-%d","situacao":"APROVADA","dataHora":"2026-11-20T14:03:11-03:00","motivo":null,"protocolo":"scale-%d"}',
    n, n)
  return wrk.format(nil, nil, nil, body)
end
