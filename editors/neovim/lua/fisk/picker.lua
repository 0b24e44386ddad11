-- Search results → picker items, and the choice of picker backend.
local config = require("fisk.config")
local location = require("fisk.location")

local M = {}

---@class fisk.Item
---@field citation string  relpath#ordinal
---@field section string   heading path of the chunk
---@field snippet string   one line
---@field score number
---@field filename string  absolute path
---@field relpath string   path relative to the project root
---@field lnum integer     first cited line (1-based)
---@field end_lnum integer last cited line
---@field location table   the LSP LocationLink
---@field label string     "section  relpath:line  snippet" (line: where the match starts)

M.snippet_width = 120

local function one_line(text, width)
  text = vim.trim((text or ""):gsub("%s+", " "))
  if vim.fn.strchars(text) > width then
    text = vim.fn.strcharpart(text, 0, width - 1) .. "…"
  end
  return text
end

--- Turn the server's results into items every backend understands.
---@param results table[] `results` of fisk.knowledge.search
---@return fisk.Item[]
function M.items(results)
  local items = {}
  for _, r in ipairs(results or {}) do
    local link = r.location
    if type(link) == "table" and (link.targetUri or link.uri) then
      local filename = location.filename(link)
      local first, last = location.lines(link)
      local item = {
        citation = r.citation or "",
        section = one_line(r.section, 80),
        snippet = one_line(r.snippet, M.snippet_width),
        score = tonumber(r.score) or 0,
        filename = filename,
        -- the last `#` splits a citation, so a path may itself contain `#`
        relpath = (r.citation or ""):match("^(.*)#[^#]*$") or vim.fn.fnamemodify(filename, ":~:."),
        lnum = first,
        end_lnum = last,
        location = link,
      }
      -- the line a jump lands on: where the match starts (targetSelectionRange), else the chunk's first
      local selection = link.targetSelectionRange
      local where = ("%s:%d"):format(item.relpath, selection and selection.start.line + 1 or first)
      item.label = table.concat(
        item.section ~= "" and { item.section, where, item.snippet } or { where, item.snippet },
        "  "
      )
      items[#items + 1] = item
    end
  end
  return items
end

--- The project root a result lives in (its file path minus the relpath of its citation).
---@param item fisk.Item
---@return string?
function M.root(item)
  local rel = "/" .. item.relpath
  if item.filename:sub(-#rel) == rel then
    return item.filename:sub(1, #item.filename - #rel)
  end
end

--- Quickfix entries: filename, lnum, end_lnum, text.
---@param items fisk.Item[]
function M.qf_items(items)
  return vim.tbl_map(function(item)
    return {
      filename = item.filename,
      lnum = item.lnum,
      end_lnum = item.end_lnum,
      col = 1,
      text = item.section ~= "" and (item.section .. " │ " .. item.snippet) or item.snippet,
      user_data = { citation = item.citation },
    }
  end, items)
end

local available = {
  telescope = function()
    return (pcall(require, "telescope"))
  end,
  fzf_lua = function()
    return (pcall(require, "fzf-lua"))
  end,
  snacks = function()
    return rawget(_G, "Snacks") ~= nil and _G.Snacks.picker ~= nil
  end,
  mini = function()
    return rawget(_G, "MiniPick") ~= nil
  end,
  select = function()
    return true
  end,
}

M.order = { "telescope", "fzf_lua", "snacks", "mini", "select" }

--- The backend to use: the configured one, or the first installed one.
---@return string
function M.backend()
  local wanted = config.options.picker
  if wanted ~= "auto" then
    return wanted
  end
  for _, name in ipairs(M.order) do
    if available[name]() then
      return name
    end
  end
  return "select"
end

--- Show items in the picker; on_choice(item) runs in the window the user came from.
---@param items fisk.Item[]
---@param opts {title: string}
---@param on_choice fun(item: fisk.Item)
function M.pick(items, opts, on_choice)
  local name = M.backend()
  local backend_opts = vim.tbl_extend("force", {}, opts, {
    options = config.options.picker_options[name] or {},
  })
  local ok, err = pcall(function()
    require("fisk.pickers." .. name).pick(items, backend_opts, on_choice)
  end)
  if not ok and name ~= "select" then
    require("fisk.notify").warn(("picker %s failed (%s); using vim.ui.select"):format(name, err))
    require("fisk.pickers.select").pick(items, backend_opts, on_choice)
  elseif not ok then
    error(err, 0)
  end
end

return M
