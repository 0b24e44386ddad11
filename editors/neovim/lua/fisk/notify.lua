-- One place that talks to the user: every message starts with "fisk: ".
local M = {}

local levels = vim.log.levels
local said = {}

---@param msg string
---@param level? integer vim.log.levels.*
function M.notify(msg, level)
  vim.notify("fisk: " .. msg, level or levels.INFO, { title = "fisk" })
end

function M.info(msg)
  M.notify(msg, levels.INFO)
end

function M.warn(msg)
  M.notify(msg, levels.WARN)
end

function M.error(msg)
  M.notify(msg, levels.ERROR)
end

--- Warn once per key for the whole session (e.g. the degraded tier of one project root).
---@param key string
---@param msg string
function M.warn_once(key, msg)
  if said[key] then
    return
  end
  said[key] = true
  M.warn(msg)
end

return M
