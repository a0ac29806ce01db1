-- Runs sonic-swss cfgmgr/buffer_pool_mellanox.lua outside Redis, over a small in-memory
-- CONFIG_DB / APPL_DB / STATE_DB built from the command line. Used to produce the expected
-- rows in ../sonic_pool.rs and crates/plan/tests/roce.rs (see the comments there); not run
-- by `cargo test`.
--
-- usage: lua5.1 run_pool.lua LUA_FILE ASIC_KEY CELL PIPELINE MMU_SIZE \
--            OVER_SUBSCRIBE|nil SHP_XOFF|nil PG_RANGE GROUP [GROUP ...]
-- GROUP = LANES:PORTS:XON:XOFF:SIZE, that many admin-up ports with that many lanes, whose
-- BUFFER_PG PG_RANGE (e.g. 3-4) uses one lossless profile with those values.
-- Prints the Lua's result list, one item per line.
local a = arg
local function opt(s) if s == "nil" then return nil end return s end
local db = { ["0"] = {}, ["4"] = {}, ["6"] = {} }
local function set(n, key, t) db[n][key] = t end

-- CONFIG_DB
set("4", "DEVICE_METADATA|localhost", { platform = "x86_64-mlnx_msn4600c-r0" })
set("4", "BUFFER_POOL|ingress_lossless_pool", { type = "ingress", mode = "dynamic", xoff = opt(a[7]) })
set("4", "BUFFER_POOL|egress_lossless_pool", { type = "egress", mode = "dynamic", size = a[5] })
set("4", "BUFFER_POOL|egress_lossy_pool", { type = "egress", mode = "dynamic" })
set("4", "DEFAULT_LOSSLESS_BUFFER_PARAMETER|AZURE", { default_dynamic_th = "0", over_subscribe_ratio = opt(a[6]) })
-- STATE_DB
set("6", "BUFFER_MAX_PARAM_TABLE|global", { mmu_size = a[5] })
set("6", "ASIC_TABLE|" .. a[2], { cell_size = a[3], pipeline_latency = a[4] })

local port = 0
for g = 9, #a do
  local lanes, count, xon, xoff, size = string.match(a[g], "^(%d+):(%d+):(%d+):(%d+):(%d+)$")
  assert(lanes, "bad group " .. a[g])
  local profile = "pg_lossless_group" .. g
  set("0", "BUFFER_PROFILE_TABLE:" .. profile, { pool = "ingress_lossless_pool", xon = xon, xoff = xoff, size = size, dynamic_th = "0" })
  for _ = 1, tonumber(count) do
    local name = "Ethernet" .. (port * 8)
    local l = {}
    for k = 0, tonumber(lanes) - 1 do table.insert(l, tostring(port * 8 + k)) end
    set("4", "PORT|" .. name, { lanes = table.concat(l, ","), admin_status = "up" })
    set("0", "BUFFER_PG_TABLE:" .. name .. ":" .. a[8], { profile = profile })
    port = port + 1
  end
end

-- Redis KEYS glob: only '*' is used by the script.
local function glob(p)
  return "^" .. string.gsub(p, "[%^%$%(%)%%%.%[%]%+%-%?]", "%%%0"):gsub("%*", ".*") .. "$"
end

local current = "0"
redis = {}
function redis.call(cmd, x, y)
  if cmd == "SELECT" then current = x return "OK" end
  if cmd == "KEYS" then
    local out, pat = {}, glob(x)
    for k in pairs(db[current]) do
      if string.match(k, pat) then table.insert(out, k) end
    end
    table.sort(out)
    return out
  end
  if cmd == "HGET" then
    local h = db[current][x]
    -- Redis turns a nil bulk reply into false.
    if h == nil or h[y] == nil then return false end
    return h[y]
  end
  error("unexpected redis.call " .. cmd .. " " .. tostring(x))
end
KEYS = {}
ARGV = {}
local r = assert(loadfile(a[1]))()
for _, line in ipairs(r) do print(line) end
