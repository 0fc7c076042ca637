-- wrk: each request is a new Porto callback (approved) for its own proposal B-<n> (PREFIX-<n>
-- when PREFIX is set), with its
-- own protocolo, so every request is one real transition (no duplicates, no lock waits).
-- Each wrk thread takes its own range of proposal numbers: thread t sends OFFSET + t*PER + 1,
-- + 2, ... (OFFSET, default 0, lets several runs on one database use fresh proposals).
local threads = {}

function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end

function init(args)
  per = tonumber(os.getenv("PER_THREAD") or "100000")
  base = tonumber(os.getenv("OFFSET") or "0") + tid * per
  prefix = os.getenv("PREFIX") or "B"
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
    '{"idProposta":"%s-%d","situacao":"APROVADA","dataHora":"2026-11-20T14:03:11-03:00","motivo":null,"protocolo":"bench-%s-%d"}',
    prefix, n, prefix, n)
  return wrk.format(nil, nil, nil, body)
end
