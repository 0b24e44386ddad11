-- Search results → picker items and quickfix entries; the picker (vim.ui.select).
local config = require("fisk.config")
local location = require("fisk.location")

local M = {}

---@class fisk.Other
---@field citation string  relpath#ordinal of a near-identical copy of the result's text
---@field filename string
---@field lnum integer     first matched line in that copy
---@field col integer      1-based byte column of the first matched word on it
---@field end_lnum integer
---@field location table   its LSP LocationLink

---@class fisk.Item
---@field citation string  relpath#ordinal
---@field section string   heading path of the part that matched
---@field snippet string   one line around the match, plain
---@field marked string    the same with the matched words in «»
---@field spans integer[][] byte ranges [start, end) of the matched words in `snippet`
---@field score number
---@field found_by string[] the search strings that found it: "query", "also[0]", ... (foundBy)
---@field filename string  absolute path
---@field relpath string   path relative to the project root
---@field lnum integer     first matched line (1-based; targetSelectionRange)
---@field col integer      1-based byte column of the first matched word on it (1 without one)
---@field end_lnum integer last matched line
---@field chunk integer[]  {first, last} line of the whole cited chunk (targetRange)
---@field copies fisk.Other[] the other copies of the text (other versions of the page), best first
---@field location table   the LSP LocationLink
---@field label string     "section  relpath:line  snippet" with the matched words in «»
---@field plain_label string the same without the «» (for fuzzy filtering)

M.snippet_width = 120

local function one_line(text, width)
  text = vim.trim((text or ""):gsub("%s+", " "))
  if vim.fn.strchars(text) > width then
    text = vim.fn.strcharpart(text, 0, width - 1) .. "…"
  end
  return text
end

-- "relpath#3" -> "relpath" (the last `#` splits, so a path may itself contain `#`)
local function relpath_of(citation, filename)
  return (citation or ""):match("^(.*)#[^#]*$") or vim.fn.fnamemodify(filename, ":~:.")
end

--- "also in 2 files" (or "in 2 more places" when a copy is in the result's own file); nil without copies.
---@param item fisk.Item
---@return string?
function M.copies_text(item)
  local n = #item.copies
  if n == 0 then
    return nil
  end
  local files, same = {}, false
  for _, other in ipairs(item.copies) do
    local rel = relpath_of(other.citation, other.filename)
    same = same or rel == item.relpath or files[rel] ~= nil
    files[rel] = true
  end
  if same then
    return ("in %d more %s"):format(n, n == 1 and "place" or "places")
  end
  return ("also in %d %s"):format(n, n == 1 and "file" or "files")
end

-- `copies` of a result; `also` from a server older than the rename.
local function others(r, encoding)
  local copies = r.copies
  if copies == nil then
    copies = r.also
  end
  local out = {}
  for _, a in ipairs(type(copies) == "table" and copies or {}) do
    local link = type(a) == "table" and a.location
    if type(link) == "table" and (link.targetUri or link.uri) and type(a.citation) == "string" then
      local first, last = location.selection(link)
      out[#out + 1] = {
        citation = a.citation,
        filename = location.filename(link),
        lnum = first,
        col = location.col(link, encoding),
        end_lnum = last,
        location = link,
      }
    end
  end
  return out
end

--- Turn the server's results into items every backend understands.
---@param results table[] `results` of fisk.knowledge.search
---@param encoding? string the client's position encoding (`client.offset_encoding`; default utf-16)
---@return fisk.Item[]
function M.items(results, encoding)
  local items = {}
  for _, r in ipairs(results or {}) do
    local link = r.location
    if type(link) == "table" and (link.targetUri or link.uri) then
      local filename = location.filename(link)
      local first, last = location.selection(link)
      local snippet = require("fisk.snippet").render(r.snippet, r.highlights, M.snippet_width)
      local item = {
        citation = r.citation or "",
        section = one_line(r.section, 80),
        snippet = snippet.plain,
        marked = snippet.marked,
        spans = snippet.spans,
        score = tonumber(r.score) or 0,
        found_by = type(r.foundBy) == "table" and r.foundBy or {},
        filename = filename,
        relpath = relpath_of(r.citation, filename),
        lnum = first,
        col = location.col(link, encoding),
        end_lnum = last,
        chunk = { location.lines(link) },
        copies = others(r, encoding),
        location = link,
      }
      -- the line a jump lands on: where the match starts
      local where = ("%s:%d"):format(item.relpath, first)
      local copies = M.copies_text(item)
      if copies then
        where = where .. " (" .. copies .. ")"
      end
      local head = item.section ~= "" and (item.section .. "  " .. where) or where
      item.label = head .. "  " .. item.marked
      item.plain_label = head .. "  " .. item.snippet
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

--- Quickfix entries on the matched lines: filename, lnum, col (the first matched word),
--- end_lnum, text (section │ the snippet with the matched words in «»). With `copies`, each
--- result's copies follow it.
---@param items fisk.Item[]
---@param copies? boolean
function M.qf_items(items, copies)
  local out = {}
  for _, item in ipairs(items) do
    local text = item.section ~= "" and (item.section .. " │ " .. item.marked) or item.marked
    out[#out + 1] = {
      filename = item.filename,
      lnum = item.lnum,
      col = item.col or 1,
      end_lnum = item.end_lnum,
      text = text,
      user_data = { citation = item.citation },
    }
    for _, other in ipairs(copies and item.copies or {}) do
      out[#out + 1] = {
        filename = other.filename,
        lnum = other.lnum,
        col = other.col or 1,
        end_lnum = other.end_lnum,
        text = ("(copy of %s) %s"):format(item.relpath, text),
        user_data = { citation = other.citation, copy_of = item.citation },
      }
    end
  end
  return out
end

--- The first item with `citation`, and its index.
---@param items table[] entries or items
---@param citation string?
---@param get? fun(entry: table): fisk.Item the item of an entry (default: the entry itself)
---@return integer?
function M.index_of(items, citation, get)
  for i, entry in ipairs(citation and items or {}) do
    local item = get and get(entry) or entry
    if item and item.citation == citation then
      return i
    end
  end
end

--- Show items with vim.ui.select (which telescope-ui-select, fzf-lua's register_ui_select, snacks'
--- ui_select, mini.pick's ui_select or dressing.nvim may replace); on_choice(item) runs in the
--- window the user came from.
---@param items fisk.Item[]
---@param opts {title: string}
---@param on_choice fun(item: fisk.Item)
function M.pick(items, opts, on_choice)
  require("fisk.pickers.select").pick(items, {
    title = opts.title,
    options = config.options.picker_options.select or {},
  }, on_choice)
end

return M
