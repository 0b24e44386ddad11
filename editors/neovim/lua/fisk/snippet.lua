-- A search result's snippet on one line, with the words the index matched: as byte ranges (for
-- pickers that highlight) and wrapped in «» (for plain-text lists: vim.ui.select, quickfix text).
-- The server gives `highlights` as [start, end) ranges of Unicode code points in `snippet`
-- (docs/lsp-protocol.md); nothing here decides what matched.
local M = {}

M.open, M.close = "«", "»"

-- Code point index -> byte offset (0-based) in s; composing characters count as code points.
local function byte_at(s, index)
  if index <= 0 then
    return 0
  end
  local b = vim.fn.byteidxcomp(s, index)
  return b < 0 and #s or b
end

-- Valid ranges in order: integers, inside the snippet, not overlapping an earlier one.
local function ranges(highlights, count)
  local ok = {}
  for _, r in ipairs(type(highlights) == "table" and highlights or {}) do
    local a, b = type(r) == "table" and r[1], type(r) == "table" and r[2]
    if type(a) == "number" and type(b) == "number" and a % 1 == 0 and b % 1 == 0 and a >= 0 and a < b and b <= count then
      ok[#ok + 1] = { a, b }
    end
  end
  table.sort(ok, function(x, y)
    return x[1] < y[1]
  end)
  return ok
end

--- The snippet as segments {text, marked}, whitespace collapsed to single spaces (also across
--- segments), trimmed.
---@param snippet string
---@param highlights? integer[][]
---@return {text: string, marked: boolean}[]
function M.segments(snippet, highlights)
  snippet = type(snippet) == "string" and snippet or ""
  local raw, at = {}, 0
  for _, r in ipairs(ranges(highlights, vim.fn.strchars(snippet, true))) do
    if r[1] >= at then
      raw[#raw + 1] = { text = snippet:sub(byte_at(snippet, at) + 1, byte_at(snippet, r[1])), marked = false }
      raw[#raw + 1] = { text = snippet:sub(byte_at(snippet, r[1]) + 1, byte_at(snippet, r[2])), marked = true }
      at = r[2]
    end
  end
  raw[#raw + 1] = { text = snippet:sub(byte_at(snippet, at) + 1), marked = false }
  local out, space = {}, true
  for _, seg in ipairs(raw) do
    local text = seg.text:gsub("%s+", " ")
    if space then
      text = text:gsub("^ ", "")
    end
    if text ~= "" then
      space = text:sub(-1) == " "
      out[#out + 1] = { text = text, marked = seg.marked }
    end
  end
  if #out > 0 then
    out[#out].text = out[#out].text:gsub(" $", "")
    if out[#out].text == "" then
      out[#out] = nil
    end
  end
  return out
end

--- The snippet cut to about `width` display characters at a word boundary (a matched word is
--- kept whole or dropped), as plain text with the byte ranges of the matched words, and with them
--- wrapped in «».
---@param snippet string
---@param highlights? integer[][]
---@param width integer
---@return {plain: string, marked: string, spans: integer[][]}
function M.render(snippet, highlights, width)
  local segments = M.segments(snippet, highlights)
  local total = 0
  for _, seg in ipairs(segments) do
    total = total + vim.fn.strchars(seg.text) + (seg.marked and 2 or 0)
  end
  local budget = total > width and width - 1 or math.huge
  local plain, marked, spans, used = {}, {}, {}, 0
  local plen = 0
  local function add(text, is_marked)
    if is_marked then
      spans[#spans + 1] = { plen, plen + #text }
      marked[#marked + 1] = M.open .. text .. M.close
    else
      marked[#marked + 1] = text
    end
    plain[#plain + 1] = text
    plen = plen + #text
  end
  local cut = false
  for _, seg in ipairs(segments) do
    local n, extra = vim.fn.strchars(seg.text), seg.marked and 2 or 0
    if used + n + extra <= budget then
      add(seg.text, seg.marked)
      used = used + n + extra
    else
      local room = budget - used - extra
      if room > 0 then
        local part = vim.fn.strcharpart(seg.text, 0, room)
        if vim.fn.strcharpart(seg.text, room, 1) ~= " " then
          local space = part:match(".*() ")
          if seg.marked then
            part = space and space > 1 and part:sub(1, space - 1) or ""
          elseif space and space > #part / 2 then
            part = part:sub(1, space - 1)
          end
        end
        part = part:gsub(" $", "")
        if part ~= "" then
          add(part, seg.marked)
        end
      end
      cut = true
      break
    end
  end
  local p, m = table.concat(plain):gsub(" $", ""), table.concat(marked):gsub(" $", "")
  if cut then
    p, m = p .. "…", m .. "…"
  end
  return { plain = p, marked = m, spans = spans }
end

return M
