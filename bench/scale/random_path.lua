-- wrk: GET a path made of PATH_FMT (a string.format pattern with one %s) and a random value
-- from VALUES_FILE (a Lua file returning a list: incident ids, phone numbers...).
local values = dofile(os.getenv("VALUES_FILE"))
local fmt = os.getenv("PATH_FMT")

request = function()
  return wrk.format("GET", string.format(fmt, values[math.random(#values)]))
end
