-- wrk: GET /incident/{id} over the 3,000 demo incidents, like incident_detail.sql.
request = function()
  return wrk.format("GET", "/incident/" .. math.random(1, 3000))
end
