-- wrk script for the soak: counts 5xx per thread and prints them at the end.
-- MODE=dispatch: a mix of read routes (searches, an incident by id, the start-of-screen values).
-- MODE=callback: each request a new Porto callback for its own proposal S-<n> (thread t sends
-- t*PER_THREAD+1, ...; SEGMENT shifts the range so consecutive runs never repeat a proposal).
local threads = {}

function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end

function init(args)
  mode = os.getenv("MODE")
  per = tonumber(os.getenv("PER_THREAD") or "100000")
  segment = tonumber(os.getenv("SEGMENT") or "0")
  nthreads = tonumber(os.getenv("THREADS") or "1")
  base = (segment * nthreads + tid) * per
  counter = 0
  fivexx = 0
  statuses = {}
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("TOKEN")
  if mode == "callback" then
    wrk.method = "POST"
    wrk.headers["Content-Type"] = "application/json"
  end
  paths = {
    "/health-unit?q=sao%20jose",
    "/user/search?q=ma",
    "/employee/search?query=jo",
    "/incident/mask?q=silva",
    "/shared/default-values",
    "/unallocated?page_size=20",
    "/mobile-unit/options",
  }
end

function request()
  counter = counter + 1
  if mode == "callback" then
    if counter > per then
      error("PER_THREAD exhausted: seed more proposals")
    end
    local n = base + counter
    local body = string.format(
      '{"idProposta":"S-%d","situacao":"APROVADA","dataHora":"2026-11-20T14:03:11-03:00","motivo":null,"protocolo":"soak-%d"}',
      n, n)
    return wrk.format(nil, nil, nil, body)
  end
  local k = counter % (#paths + 1)
  if k == #paths then
    return wrk.format(nil, "/incident/" .. math.random(1, 3000))
  end
  return wrk.format(nil, paths[k + 1])
end

function response(status, headers, body)
  if status >= 500 then
    fivexx = fivexx + 1
  end
  statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
  local total = 0
  local other = {}
  for _, t in ipairs(threads) do
    total = total + t:get("fivexx")
  end
  io.write(string.format("SOAK requests=%d p50_ms=%.2f p99_ms=%.2f max_ms=%.2f errors=%d 5xx=%d\n",
    summary.requests, latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    latency.max / 1000,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    total))
end
