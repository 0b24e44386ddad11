-- Indexing progress ($/progress via the LspProgress autocmd) and the degraded tier, told once.
local lsp = require("fisk.lsp")
local notify = require("fisk.notify")

local M = {}

---@type table<integer, {title: string, message: string?, percentage: integer?, active: boolean}>
M.state = {}

local function is_degraded(tier)
  return type(tier) == "string" and tier:lower():find("degraded", 1, true) ~= nil
end

--- Why the last search of each project root ran degraded (root → reason), for :checkhealth.
---@type table<string, string>
M.degraded = {}

--- Warn once per project root when search runs in the degraded tier.
---@param client vim.lsp.Client
---@param result table a search or status result
function M.note_tier(client, result)
  if type(result) ~= "table" then
    return
  end
  local key = client.root_dir or tostring(client.id)
  local degraded = result.degraded == true or (result.degraded == nil and is_degraded(result.tier))
  require("fisk.semantic").consider(client, result)
  if not degraded then
    if result.degraded == false then
      M.degraded[key] = nil
    end
    return
  end
  local reason = type(result.reason) == "string" and result.reason or tostring(result.tier)
  M.degraded[key] = reason
  notify.warn_once(
    "degraded:" .. key,
    ("search is degraded (%s); results are lexical only until that is fixed"):format(reason)
  )
end

-- After indexing ends, ask for the tier so a degraded one (or the semantic search offer) shows
-- before the first search; again a little later while the server still reports the run.
local function check_tier(client, tries)
  local params = { command = require("fisk.api").commands.status, arguments = {} }
  lsp.request(client, "workspace/executeCommand", params, function(err, result)
    if err then
      return
    end
    M.note_tier(client, result)
    tries = (tries or 0) + 1
    if type(result) == "table" and result.indexing and tries < 20 then
      vim.defer_fn(function()
        if not lsp.is_stopped(client) then
          check_tier(client, tries)
        end
      end, 500)
    end
  end)
end

---@param ev {data: {client_id: integer, params: {token: any, value: table}}}
---@param opts fisk.Options
function M.on_progress(ev, opts)
  local data = ev.data or {}
  local client = data.client_id and vim.lsp.get_client_by_id(data.client_id)
  local value = data.params and data.params.value
  if not client or client.name ~= lsp.name or type(value) ~= "table" then
    return
  end
  local state = M.state[client.id] or { title = "Indexing docs", active = false }
  M.state[client.id] = state
  if value.kind == "begin" then
    state.title, state.active = value.title or state.title, true
  end
  state.message, state.percentage = value.message or state.message, value.percentage
  if value.kind == "begin" and opts.progress then
    notify.info(state.title .. "…" .. (value.message and (" " .. value.message) or ""))
  elseif value.kind == "end" then
    state.active = false
    if opts.progress then
      notify.info(("%s: %s"):format(state.title, value.message or "done"))
    end
    check_tier(client)
  end
end

---@param opts fisk.Options
function M.setup(opts)
  local group = vim.api.nvim_create_augroup("fisk.progress", { clear = true })
  vim.api.nvim_create_autocmd("LspProgress", {
    group = group,
    callback = function(ev)
      M.on_progress(ev, opts)
    end,
  })
end

--- "Indexing docs 120/480 files" while the current buffer's server indexes, else "".
---@return string
function M.statusline()
  local client = lsp.find(0)
  local state = client and M.state[client.id]
  if not (state and state.active) then
    return ""
  end
  return vim.trim(("%s %s"):format(state.title, state.message or ""))
end

return M
