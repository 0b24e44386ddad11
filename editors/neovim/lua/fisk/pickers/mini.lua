-- mini.pick: items with path and the matched region (lnum, col, end_lnum, end_col), so its default
-- preview highlights the lines that matched (MiniPickPreviewRegion) and choosing lands on them.
local location = require("fisk.location")

local M = {}

---@param items fisk.Item[]
---@param opts {title: string, options: table}
---@param on_choice fun(item: fisk.Item)
function M.pick(items, opts, on_choice)
  local MiniPick = require("mini.pick")
  local entries = vim.tbl_map(function(item)
    return {
      text = item.label,
      path = item.filename,
      lnum = item.lnum,
      col = 1,
      end_lnum = item.end_lnum,
      -- 1-based, exclusive (MiniPick-source-items): just past the last matched line's last byte
      end_col = #location.line_text(item.filename, item.end_lnum) + 1,
      fisk = item,
    }
  end, items)
  MiniPick.start(vim.tbl_deep_extend("force", {
    source = {
      name = opts.title,
      items = entries,
      choose = function(entry)
        if not entry then
          return
        end
        local target = MiniPick.get_picker_state().windows.target
        vim.schedule(function()
          if target and vim.api.nvim_win_is_valid(target) then
            vim.api.nvim_set_current_win(target)
          end
          on_choice(entry.fisk)
        end)
      end,
    },
  }, opts.options or {}))
end

return M
