-- LSP LocationLinks from the server → quickfix lines and jumps to the cited lines.
local M = {}

local ns = vim.api.nvim_create_namespace("fisk.cited")

M.flash_ms = 1200

--- 1-based first and last line of the chunk a LocationLink cites.
--- targetRange ends exclusive at the start of the line after the chunk.
---@param link table LocationLink
---@return integer first, integer last
function M.lines(link)
  local range = link.targetRange or link.range
  local first = range.start.line + 1
  local last = range["end"].line
  if range["end"].character > 0 then
    last = last + 1
  end
  return first, math.max(first, last)
end

--- 1-based first and last line a LocationLink selects (targetSelectionRange: for a search hit the
--- lines that matched); the chunk's lines when it has none.
---@param link table LocationLink
---@return integer first, integer last
function M.selection(link)
  if link.targetSelectionRange then
    return M.lines({ targetRange = link.targetSelectionRange })
  end
  return M.lines(link)
end

---@param link table LocationLink
---@return string
function M.filename(link)
  return vim.uri_to_fname(link.targetUri or link.uri)
end

--- The text of line `lnum` (1-based) of a file: from its buffer when loaded, else from disk; "" when
--- the file cannot be read or is shorter.
---@param filename string
---@param lnum integer
---@return string
function M.line_text(filename, lnum)
  local bufnr = vim.fn.bufnr(filename)
  if bufnr > 0 and vim.api.nvim_buf_is_loaded(bufnr) then
    return vim.api.nvim_buf_get_lines(bufnr, lnum - 1, lnum, false)[1] or ""
  end
  local ok, lines = pcall(vim.fn.readfile, filename, "", lnum)
  return ok and lines[lnum] or ""
end

--- The byte index of UTF-`encoding` position `index` in `line` (0-based; the line's length when
--- past its end).
local function byteindex(line, encoding, index)
  if encoding == "utf-8" then
    return math.min(index, #line)
  end
  local ok, col
  if vim.fn.has("nvim-0.11") == 1 then
    ok, col = pcall(vim.str_byteindex, line, encoding, index, false)
  else
    ok, col = pcall(vim.str_byteindex, line, index, encoding == "utf-16")
  end
  return ok and math.min(col, #line) or #line
end

--- 1-based byte column where a LocationLink's selection starts (for a search hit: its first
--- matched word), its `character` read in the client's position `encoding`; 1 at a line start.
---@param link table LocationLink
---@param encoding? string "utf-8", "utf-16" (default) or "utf-32"
---@return integer
function M.col(link, encoding)
  local range = link.targetSelectionRange or link.targetRange or link.range
  local character = range and range.start.character or 0
  if type(character) ~= "number" or character <= 0 then
    return 1
  end
  local line = M.line_text(M.filename(link), range.start.line + 1)
  return byteindex(line, encoding or "utf-16", character) + 1
end

-- Briefly highlight the cited lines so the eye finds the whole chunk.
local function flash(bufnr, first, last)
  local count = vim.api.nvim_buf_line_count(bufnr)
  first, last = math.min(first, count), math.min(last, count)
  vim.api.nvim_set_hl(0, "FiskCitedLines", { link = "Visual", default = true })
  vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
  vim.api.nvim_buf_set_extmark(bufnr, ns, first - 1, 0, {
    end_row = last - 1,
    end_col = #(vim.api.nvim_buf_get_lines(bufnr, last - 1, last, false)[1] or ""),
    hl_group = "FiskCitedLines",
    hl_eol = true,
  })
  vim.defer_fn(function()
    if vim.api.nvim_buf_is_valid(bufnr) then
      vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
    end
  end, M.flash_ms)
end

--- Open the cited file in the current window (the previous one when in the quickfix window),
--- pushed on the jumplist and tagstack, cursor at the link's targetSelectionRange: for a search
--- hit the part of the chunk that matched, for a citation the chunk's first line
--- (docs/lsp-protocol.md). The whole chunk flashes, or with `opts.matched` the matched lines.
---@param link table LocationLink
---@param client? vim.lsp.Client for its position encoding
---@param opts? {matched?: boolean}
---@return boolean ok
function M.jump(link, client, opts)
  if vim.bo.buftype == "quickfix" then
    vim.cmd("wincmd p")
  end
  local encoding = client and client.offset_encoding or "utf-16"
  if not vim.lsp.util.show_document(link, encoding, { focus = true }) then
    return false
  end
  local first, last
  if opts and opts.matched then
    first, last = M.selection(link)
  else
    first, last = M.lines(link)
  end
  flash(vim.api.nvim_get_current_buf(), first, last)
  return true
end

return M
