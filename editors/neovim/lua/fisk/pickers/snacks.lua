-- snacks.nvim picker: file items with the matched lines as pos..end_pos, so its file previewer
-- highlights them (SnacksPickerSearch); the matched words are highlighted in the list.
local location = require("fisk.location")

local M = {}

local function entries(items)
  return vim.tbl_map(function(item)
    return {
      text = item.plain_label, -- what the picker's filter matches
      file = item.filename,
      pos = { item.lnum, 0 },
      -- {row, col}: col 0-based, exclusive, so the whole last line is in the region
      end_pos = { item.end_lnum, #location.line_text(item.filename, item.end_lnum) },
      fisk = item,
    }
  end, items)
end

---@param items fisk.Item[]
---@param opts {title: string, options: table, handle: fisk.PickerHandle}
---@param on_choice fun(item: fisk.Item)
function M.pick(items, opts, on_choice)
  local Snacks = require("snacks")
  local picker = Snacks.picker.pick(vim.tbl_deep_extend("force", {
    source = "fisk",
    title = opts.title,
    items = entries(items),
    preview = "file",
    format = function(entry)
      local item = entry.fisk
      local ret = {}
      if item.section ~= "" then
        ret[#ret + 1] = { item.section, "SnacksPickerLabel" }
        ret[#ret + 1] = { "  " }
      end
      ret[#ret + 1] = { ("%s:%d"):format(item.relpath, item.lnum), "SnacksPickerFile" }
      local also = require("fisk.picker").also_text(item)
      if also then
        ret[#ret + 1] = { " (" .. also .. ")", "SnacksPickerComment" }
      end
      ret[#ret + 1] = { "  " }
      local at = 0
      for _, span in ipairs(item.spans) do
        ret[#ret + 1] = { item.snippet:sub(at + 1, span[1]), "SnacksPickerComment" }
        ret[#ret + 1] = { item.snippet:sub(span[1] + 1, span[2]), "SnacksPickerMatch" }
        at = span[2]
      end
      ret[#ret + 1] = { item.snippet:sub(at + 1), "SnacksPickerComment" }
      return ret
    end,
    confirm = function(p, entry)
      p:close()
      if entry then
        vim.schedule(function()
          on_choice(entry.fisk)
        end)
      end
    end,
  }, opts.options or {}))
  -- A refined list: the items the picker's finder reads, found again (the filter typed so far
  -- still applies), then the cursor back on the citation it was on.
  local handle = opts.handle or {}
  handle.update = function(new_items)
    if not picker or picker.closed then
      return false
    end
    local current = picker:current()
    local citation = current and current.fisk and current.fisk.citation
    picker.opts.items = entries(new_items)
    picker:find({
      refresh = true,
      on_done = function()
        local index = require("fisk.picker").index_of(picker:items(), citation, function(entry)
          return entry.fisk
        end)
        if index then
          picker.list:view(index)
        end
      end,
    })
    return true
  end
end

return M
