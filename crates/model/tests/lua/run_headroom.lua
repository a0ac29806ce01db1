-- Runs sonic-swss cfgmgr/buffer_headroom_mellanox.lua outside Redis, with redis.call
-- answering from the command line. Used to produce the expected rows in
-- ../sonic_headroom.rs (see the comment there); not run by `cargo test`.
--
-- usage: lua5.1 run_headroom.lua LUA_FILE ASIC_KEY CELL PIPELINE MAC_PHY PEER \
--            LOSSLESS_MTU SMALL_PCT OVER_SUBSCRIBE|nil SHP_XOFF|nil \
--            SPEED_MBPS CABLE(e.g. 5m) PORT_MTU GEARBOX_DELAY|"" LANES
local a = arg
local asic_key = "ASIC_TABLE|" .. a[2]
local asic = { "cell_size", a[3], "pipeline_latency", a[4], "mac_phy_delay", a[5], "peer_response_time", a[6] }
local pattern = { "mtu", a[7], "small_packet_percentage", a[8] }
local function opt(s) if s == "nil" then return nil end return s end
local osr, shp = opt(a[9]), opt(a[10])
redis = {}
function redis.call(cmd, x, y)
  if cmd == "SELECT" then return end
  if cmd == "KEYS" then
    if x == "ASIC_TABLE*" then return { asic_key } end
    if x == "LOSSLESS_TRAFFIC_PATTERN*" then return { "LOSSLESS_TRAFFIC_PATTERN|AZURE" } end
    if x == "DEFAULT_LOSSLESS_BUFFER_PARAMETER*" then return { "DEFAULT_LOSSLESS_BUFFER_PARAMETER|AZURE" } end
  end
  if cmd == "HGETALL" then
    if x == asic_key then return asic end
    return pattern
  end
  if cmd == "HGET" then
    if y == "over_subscribe_ratio" then return osr end
    if y == "xoff" then return shp end
  end
  error("unexpected redis.call " .. cmd .. " " .. tostring(x))
end
KEYS = { "profile" }
ARGV = { a[11], a[12], a[13], a[14], a[15] }
local r = assert(loadfile(a[1]))()
print(table.concat(r, " "))
