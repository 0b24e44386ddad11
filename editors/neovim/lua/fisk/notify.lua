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

local by_type = { levels.ERROR, levels.WARN, levels.INFO, levels.DEBUG }

--- The language server's window/showMessage, shown as it wrote it (its messages start with
--- "fisk: "): among them its one message naming every bad setting, which the plugin does not
--- check itself. The handler of that notification (fisk.lsp's client configuration).
---@param result? { type: integer, message: string }
function M.server_message(_, result)
  if type(result) ~= "table" or type(result.message) ~= "string" then
    return
  end
  local text = result.message:gsub("^fisk: ", "")
  M.notify(text, by_type[result.type] or levels.INFO)
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
