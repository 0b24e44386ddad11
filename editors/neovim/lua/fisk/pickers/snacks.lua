-- snacks.nvim picker: file items with positions, so its file previewer shows the cited lines.
local M = {}

---@param items fisk.Item[]
---@param opts {title: string, options: table}
---@param on_choice fun(item: fisk.Item)
function M.pick(items, opts, on_choice)
  local Snacks = require("snacks")
  local entries = vim.tbl_map(function(item)
    return {
      text = item.label,
      file = item.filename,
      pos = { item.lnum, 0 },
      end_pos = { item.end_lnum, 0 },
      fisk = item,
    }
  end, items)
  Snacks.picker.pick(vim.tbl_deep_extend("force", {
    source = "fisk",
    title = opts.title,
    items = entries,
    preview = "file",
    format = function(entry)
      local item = entry.fisk
      local ret = {}
      if item.section ~= "" then
        ret[#ret + 1] = { item.section, "SnacksPickerLabel" }
        ret[#ret + 1] = { "  " }
      end
      ret[#ret + 1] = { ("%s:%d"):format(item.relpath, item.lnum), "SnacksPickerFile" }
      ret[#ret + 1] = { "  " }
      ret[#ret + 1] = { item.snippet, "SnacksPickerComment" }
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
end

return M
