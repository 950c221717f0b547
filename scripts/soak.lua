-- The soak load of `chomp serve` (README, "Front ends"): wrk -t1 -c8 -d600s --latency -s scripts/soak.lua http://127.0.0.1:18080
-- Random positions of the 8x15 box (and larger ones for losses-100), 5 ms apart per connection.
math.randomseed(7)
request = function()
  local n = math.random(1, 10)
  local rows = {}
  local w = (n <= 8) and 15 or 22
  local h = (n <= 8) and 8 or 11
  for i = 1, h do rows[i] = math.random(0, w) end
  table.sort(rows, function(a, b) return a > b end)
  local parts = {}
  for i = 1, h do if rows[i] > 0 then parts[#parts + 1] = rows[i] end end
  if #parts == 0 then parts[1] = 1 end
  local path = "/v1/query?position=" .. table.concat(parts, ",")
  if n == 10 then path = "/v1/play?position=" .. table.concat(parts, ",") .. "&level=hard&seed=" .. math.random(1, 1000) end
  return wrk.format("GET", path)
end
delay = function() return 5 end
