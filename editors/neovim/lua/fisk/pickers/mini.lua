-- mini.pick: items with path and the matched region (lnum, col, end_lnum, end_col), so its default
-- preview highlights the lines that matched (MiniPickPreviewRegion) and choosing lands on them.
local location = require("fisk.location")

local M = {}

local function entries(items)
  return vim.tbl_map(function(item)
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
end

---@param items fisk.Item[]
---@param opts {title: string, options: table, handle: fisk.PickerHandle}
---@param on_choice fun(item: fisk.Item)
function M.pick(items, opts, on_choice)
  local MiniPick = require("mini.pick")
  -- MiniPick.start returns only when the picker closes, so the refresh is set up first. A refined
  -- list replaces the items of the picker while it is this one (its source name and fisk items),
  -- then the current match goes back to the citation it was on.
  local open = true
  local handle = opts.handle or {}
  handle.update = function(new_items)
    local shown = open and MiniPick.is_picker_active() and MiniPick.get_picker_matches() or nil
    local source = shown and (MiniPick.get_picker_opts() or {}).source
    if not (source and source.name == opts.title and shown.all and (#shown.all == 0 or shown.all[1].fisk)) then
      return false
    end
    local citation = shown.current and shown.current.fisk and shown.current.fisk.citation
    local new_entries = entries(new_items)
    MiniPick.set_picker_items(new_entries)
    local index = require("fisk.picker").index_of(new_entries, citation, function(entry)
      return entry.fisk
    end)
    if index then
      -- set_picker_items finishes in a coroutine: move the current match once it has
      vim.schedule(function()
        pcall(MiniPick.set_picker_match_inds, { index }, "current")
      end)
    end
    return true
  end
  MiniPick.start(vim.tbl_deep_extend("force", {
    source = {
      name = opts.title,
      items = entries(items),
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
  open = false
end

return M
