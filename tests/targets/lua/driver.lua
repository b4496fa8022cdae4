-- Driver for the Kaitai Lua parsers: `lua5.3 driver.lua JOB.json` (see ../README.md).
-- package.path reaches the official runtime, dkjson (lua-dkjson) and the job's `generated`
-- folder. Objects are walked with the plan; JSON is written here so that 64-bit integers keep
-- all their digits. Lua keeps text and bytes alike as strings: the plan's member type tells
-- which one a value is. An enum value the enum does not list reads as nil in Lua.
local json = require("dkjson")

local function camel(name)
  return (name:gsub("_(%l)", string.upper):gsub("^%l", string.upper))
end

local function slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local job = json.decode(slurp(arg[1]))
local plan = json.decode(slurp(job.plan))
package.path = job.generated .. "/?.lua;" .. package.path
require(plan.root)

-- Class table -> plan class, from each class's path below the root.
local classes = {}
for _, c in pairs(plan.classes) do
  local t = _G[camel(c.path[1])]
  for i = 2, #c.path do t = t[camel(c.path[i])] end
  classes[t] = c
end
local wanted = {}
for _, name in ipairs(job.instances or {}) do wanted[name] = true end

local B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
local function b64(s)
  local out = {}
  for i = 1, #s, 3 do
    local a, b, c = s:byte(i, i + 2)
    local n = a * 65536 + (b or 0) * 256 + (c or 0)
    local q = {}
    for k = 3, 0, -1 do q[#q + 1] = B64:sub((n >> (6 * k)) % 64 + 1, (n >> (6 * k)) % 64 + 1) end
    if not b then q[3], q[4] = "=", "=" elseif not c then q[4] = "=" end
    out[#out + 1] = table.concat(q)
  end
  return table.concat(out)
end

local function quote(s)
  return '"' .. s:gsub('[%c"\\]', function(ch)
    if ch == '"' then return '\\"' elseif ch == "\\" then return "\\\\" end
    return string.format("\\u%04x", ch:byte())
  end) .. '"'
end

-- Values as JSON text, written into `buf`.
local dump
local function plain(v, member, buf)
  local t = type(v)
  if v == nil then buf[#buf + 1] = "null"
  elseif t == "boolean" then buf[#buf + 1] = tostring(v)
  elseif t == "number" then
    if math.type(v) == "integer" then buf[#buf + 1] = string.format("%d", v)
    elseif v ~= v or v == math.huge or v == -math.huge then buf[#buf + 1] = "null"
    else buf[#buf + 1] = string.format("%.17g", v) end
  elseif t == "string" then
    if member.type == "bytes" or member.type == "switch" then buf[#buf + 1] = '{"$b64":"' .. b64(v) .. '"}'
    else buf[#buf + 1] = quote(v) end
  elseif t == "table" then
    local mt = getmetatable(v)
    if mt and classes[mt] then dump(v, buf)
    elseif v.label ~= nil and v.value ~= nil then plain(v.value, member, buf)  -- an enum value
    else
      buf[#buf + 1] = "["
      for i = 1, #v do
        if i > 1 then buf[#buf + 1] = "," end
        plain(v[i], member, buf)
      end
      buf[#buf + 1] = "]"
    end
  else error("cannot print a " .. t .. " for " .. member.name) end
end

dump = function(obj, buf)
  local cls = classes[getmetatable(obj)]
  buf[#buf + 1] = "{"
  local first = true
  for _, m in ipairs(cls.members) do
    local v, skip
    if m.kind == "seq" then
      v = rawget(obj, m.name)
      skip = v == nil  -- absent: its `if` is false
    elseif m.kind == "value" or wanted[m.name] then
      v = obj[m.name]
    else
      skip = true
    end
    if not skip then
      if not first then buf[#buf + 1] = "," end
      first = false
      buf[#buf + 1] = quote(m.name) .. ":"
      plain(v, m, buf)
    end
  end
  buf[#buf + 1] = "}"
end

local Root = _G[camel(plan.root)]
local out = {}
for i, file in ipairs(job.files) do
  local buf = {}
  local ok, err = pcall(function()
    local f = assert(io.open(file.path, "rb"))
    f:seek("set", file.offset or 0)
    local data = (file.length == nil or file.length == json.null) and f:read("a") or f:read(file.length)
    f:close()
    local obj = Root:from_string(data or "")
    local flt = job.filter
    if flt ~= nil and flt ~= json.null then
      local items = obj[flt.array]
      buf[#buf + 1] = "{" .. quote(flt.array) .. ":["
      local n = 0
      for k, x in ipairs(items) do
        if x[flt.where] then
          if n > 0 then buf[#buf + 1] = "," end
          n = n + 1
          buf[#buf + 1] = string.format("[%d,", k - 1)
          dump(x, buf)
          buf[#buf + 1] = "]"
        end
      end
      buf[#buf + 1] = string.format('],"num_%s":%d}', flt.array, #items)
    else
      dump(obj, buf)
    end
  end)
  if ok then out[i] = table.concat(buf)
  else out[i] = '{"_error":' .. quote("LuaError: " .. tostring(err)) .. "}" end
end
io.write("[", table.concat(out, ","), "]")
