-- Load of `chomp serve` over frontier tables: random positions of 100 to 140
-- tiles (the top levels, where the tables are largest), one full query each.
--   chomp serve --tables DIR --addr 127.0.0.1:18080 &
--   wrk -t2 -c16 -d600s --latency -s scripts/load-frontier.lua http://127.0.0.1:18080
-- Prints the count of non-200 answers at the end (it must be 0).
local counter = 0
local errors = 0
setup = function(thread)
  counter = counter + 1
  thread:set("id", counter)
end
init = function(args)
  math.randomseed(1000 + id)
end
request = function()
  -- A random partition of n (100..140) into rows no longer than the row above.
  local n = math.random(100, 140)
  local rows = {}
  local left, cap = n, math.random(10, 40)
  while left > 0 do
    local r = math.random(1, math.min(cap, left))
    rows[#rows + 1] = r
    left = left - r
    cap = r
  end
  return wrk.format("GET", "/v1/query?position=" .. table.concat(rows, ","))
end
response = function(status, headers, body)
  if status ~= 200 then errors = errors + 1 end
end
done = function(summary, latency, requests)
  io.write(string.format("non-200 answers: %d of %d; socket errors: %d connect, %d read, %d write, %d timeout\n",
    summary.errors.status, summary.requests, summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.timeout))
end
