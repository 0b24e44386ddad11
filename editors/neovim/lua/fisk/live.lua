-- Live search with Neovim's own UI: a one-line input window, the results below it and a preview
-- of the focused result's matched lines beside them. Each change of the input (after a short
-- pause) sends a search; a newer one cancels the older. No third-party plugin.
local M = {}

--- ms without typing before the input is searched
M.debounce_ms = 150
--- results asked for when neither the call nor the `top_k` option says: the most the server gives
M.top_k = 20

local ns = vim.api.nvim_create_namespace("fisk.live")

--- `text` cut to `width` display cells with an ellipsis when longer (the list never wraps).
---@param text string
---@param width integer
---@return string
function M.fit(text, width)
  if vim.fn.strdisplaywidth(text) <= width then
    return text
  end
  if width < 1 then
    return ""
  end
  local n = vim.fn.strchars(text)
  local lo, hi = 0, n -- the most characters whose width fits in width - 1, by bisection
  while lo < hi do
    local mid = math.floor((lo + hi + 1) / 2)
    if vim.fn.strdisplaywidth(vim.fn.strcharpart(text, 0, mid)) <= width - 1 then
      lo = mid
    else
      hi = mid - 1
    end
  end
  return vim.fn.strcharpart(text, 0, lo) .. "…"
end

local function scratch()
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = "wipe"
  return buf
end

local function float(buf, cfg, enter)
  local win = vim.api.nvim_open_win(buf, enter, vim.tbl_extend("force", {
    relative = "editor",
    style = "minimal",
    border = "rounded",
  }, cfg))
  vim.wo[win].wrap = false
  return win
end

---@class fisk.Live
---@field items fisk.Item[] the results shown
---@field selected integer the focused row (0: none)
---@field query string the text last searched
---@field message string? what the list says instead of results
---@field searches integer searches answered
---@field bufs {input: integer, list: integer, preview: integer}
---@field wins {input: integer, list: integer, preview: integer}

--- The live search open now (nil when closed).
---@type fisk.Live?
M.current = nil

--- Open the live search. `opts.query`: text to start with; `paths`, `tags`: its scope (as
--- fisk.api.search takes them); `top_k`: how many results (default: the `top_k` option, else 20).
---@param opts? {query?: string, paths?: string[], tags?: string[], top_k?: integer, title?: string}
---@return fisk.Live
function M.open(opts)
  opts = opts or {}
  if M.current then
    M.current.close()
  end
  local api = require("fisk.api")
  local config = require("fisk.config")
  local picker = require("fisk.picker")
  local origin = vim.api.nvim_get_current_win()

  local columns, lines = vim.o.columns, vim.o.lines - vim.o.cmdheight
  local width = math.max(40, math.floor(columns * 0.9))
  local height = math.max(12, math.floor(lines * 0.8))
  local row, col = math.max(0, math.floor((lines - height) / 2)), math.max(0, math.floor((columns - width) / 2))
  local list_width = math.max(20, math.floor(width * 0.5) - 2)
  local body = math.max(3, height - 5)

  local self = { items = {}, selected = 0, query = "", searches = 0, bufs = {}, wins = {} }
  self.bufs.input, self.bufs.list, self.bufs.preview = scratch(), scratch(), scratch()
  local scope = opts.title and vim.trim(opts.title) ~= "" and (" " .. vim.trim(opts.title) .. " ") or ""
  self.wins.list = float(self.bufs.list, { row = row + 3, col = col, width = list_width, height = body, focusable = false }, false)
  self.wins.preview = float(self.bufs.preview, {
    row = row + 3,
    col = col + list_width + 2,
    width = math.max(10, width - list_width - 2),
    height = body,
    focusable = false,
  }, false)
  self.wins.input = float(self.bufs.input, {
    row = row,
    col = col,
    width = width,
    height = 1,
    title = " Fisk search" .. scope,
    title_pos = "left",
  }, true)
  vim.wo[self.wins.list].cursorline = true
  vim.wo[self.wins.preview].number = true
  vim.wo[self.wins.preview].cursorline = true

  local timer = (vim.uv or vim.loop).new_timer()
  local request, generation, closed = nil, 0, false

  local function set_lines(buf, text)
    vim.bo[buf].modifiable = true
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, text)
    vim.bo[buf].modifiable = false
  end

  local function preview()
    vim.api.nvim_buf_clear_namespace(self.bufs.preview, ns, 0, -1)
    local item = self.items[self.selected]
    if not item then
      return set_lines(self.bufs.preview, {})
    end
    local ok, text = pcall(vim.fn.readfile, item.filename)
    set_lines(self.bufs.preview, ok and text or { ("cannot read %s"):format(item.filename) })
    if not ok then
      return
    end
    local last = math.min(item.end_lnum or item.lnum, #text)
    for lnum = item.lnum, last do
      vim.api.nvim_buf_set_extmark(self.bufs.preview, ns, lnum - 1, 0, { line_hl_group = "Visual" })
    end
    if item.lnum >= 1 and item.lnum <= #text then
      vim.api.nvim_win_set_cursor(self.wins.preview, { item.lnum, 0 })
      vim.api.nvim_win_call(self.wins.preview, function()
        vim.cmd("normal! zz")
      end)
    end
  end

  local function render()
    local width = vim.api.nvim_win_get_width(self.wins.list)
    local rows = {}
    for i, item in ipairs(self.items) do
      rows[i] = M.fit(item.plain_label, width)
    end
    if #rows == 0 then
      rows = { self.message or "" }
    end
    set_lines(self.bufs.list, rows)
    vim.api.nvim_buf_clear_namespace(self.bufs.list, ns, 0, -1)
    if self.selected > 0 then
      vim.api.nvim_win_set_cursor(self.wins.list, { self.selected, 0 })
    end
    preview()
  end

  --- Move the focus by `n` rows (wrapping around).
  function self.move(n)
    if #self.items == 0 then
      return
    end
    self.selected = (self.selected - 1 + n) % #self.items + 1
    render()
  end

  function self.close()
    if closed then
      return
    end
    closed = true
    timer:stop()
    timer:close()
    if request then
      request.cancel()
    end
    for _, win in pairs(self.wins) do
      pcall(vim.api.nvim_win_close, win, true)
    end
    if M.current == self then
      M.current = nil
    end
    vim.cmd("stopinsert")
    if vim.api.nvim_win_is_valid(origin) then
      vim.api.nvim_set_current_win(origin)
    end
  end

  --- Open the focused result (the file on its matched lines) and close the search.
  function self.accept()
    local item = self.items[self.selected]
    local client = self.client
    self.close()
    if item then
      require("fisk.commands").open_item(item, client)
    end
  end

  --- Search `query` now (what a change of the input does after the pause).
  function self.search(query)
    query = vim.trim(query or "")
    self.query = query
    generation = generation + 1
    local mine = generation
    if request then
      request.cancel()
      request = nil
    end
    if query == "" then
      self.items, self.selected, self.message = {}, 0, nil
      return render()
    end
    request = api.search(query, {
      paths = opts.paths,
      tags = opts.tags,
      top_k = opts.top_k or config.options.top_k or M.top_k,
    }, function(err, result, client)
      if closed or mine ~= generation then
        return
      end
      request = nil
      self.searches = self.searches + 1
      self.client = client
      if err then
        self.items, self.selected, self.message = {}, 0, "search failed: " .. tostring(err)
        return render()
      end
      local was = self.items[self.selected] and self.items[self.selected].citation
      self.items = picker.items(result.results, client and client.offset_encoding)
      self.selected = #self.items > 0 and (picker.index_of(self.items, was) or 1) or 0
      self.message = #self.items == 0 and (result.note or ("no results for %q"):format(query)) or nil
      render()
    end)
  end

  --- Set the input's text and search it after the pause (as typing does).
  function self.set_query(text)
    vim.api.nvim_buf_set_lines(self.bufs.input, 0, -1, false, { text })
    self.changed()
  end

  function self.changed()
    local text = vim.api.nvim_buf_get_lines(self.bufs.input, 0, 1, false)[1] or ""
    timer:stop()
    timer:start(M.debounce_ms, 0, vim.schedule_wrap(function()
      if not closed then
        self.search(text)
      end
    end))
  end

  vim.api.nvim_create_autocmd({ "TextChanged", "TextChangedI" }, {
    buffer = self.bufs.input,
    callback = self.changed,
  })
  vim.api.nvim_create_autocmd({ "BufLeave", "WinLeave" }, {
    buffer = self.bufs.input,
    once = true,
    callback = function()
      vim.schedule(self.close)
    end,
  })
  local function key(modes, lhs, fn)
    vim.keymap.set(modes, lhs, fn, { buffer = self.bufs.input, nowait = true })
  end
  key({ "i", "n" }, "<CR>", self.accept)
  key({ "i", "n" }, "<C-c>", self.close)
  key("n", "<Esc>", self.close)
  key("n", "q", self.close)
  for _, lhs in ipairs({ "<Down>", "<C-n>", "<Tab>" }) do
    key({ "i", "n" }, lhs, function()
      self.move(1)
    end)
  end
  for _, lhs in ipairs({ "<Up>", "<C-p>", "<S-Tab>" }) do
    key({ "i", "n" }, lhs, function()
      self.move(-1)
    end)
  end

  M.current = self
  render()
  if opts.query and opts.query ~= "" then
    self.set_query(opts.query)
  end
  vim.cmd("startinsert!")
  return self
end

return M
