-- telescope.nvim: results with a preview of the matched lines: its grep previewer highlights
-- lnum..lnend (TelescopePreviewLine) and centres them.
local M = {}

local function entry_maker(item)
  return {
    value = item,
    display = item.label,
    ordinal = item.plain_label,
    filename = item.filename,
    path = item.filename,
    lnum = item.lnum,
    lnend = item.end_lnum,
    col = 1,
  }
end

---@param items fisk.Item[]
---@param opts {title: string, options: table, handle: fisk.PickerHandle}
---@param on_choice fun(item: fisk.Item)
function M.pick(items, opts, on_choice)
  local pickers = require("telescope.pickers")
  local finders = require("telescope.finders")
  local conf = require("telescope.config").values
  local actions = require("telescope.actions")
  local action_state = require("telescope.actions.state")

  local topts = opts.options or {}
  local picker = pickers
    .new(topts, {
      prompt_title = opts.title,
      finder = finders.new_table({ results = items, entry_maker = entry_maker }),
      sorter = conf.generic_sorter(topts),
      previewer = conf.grep_previewer(topts),
      attach_mappings = function(prompt_bufnr)
        actions.select_default:replace(function()
          local entry = action_state.get_selected_entry()
          actions.close(prompt_bufnr)
          if entry then
            on_choice(entry.value)
          end
        end)
        return true
      end,
    })
  -- A refined list: a new finder (the prompt typed so far still filters it), then, once telescope
  -- has sorted it, the selection back on the citation that was selected.
  local handle = opts.handle or {}
  handle.update = function(new_items)
    if not (picker.prompt_bufnr and vim.api.nvim_buf_is_valid(picker.prompt_bufnr)) then
      return false
    end
    local selected = picker:get_selection()
    local citation = selected and selected.value and selected.value.citation
    local pending = true
    picker:register_completion_callback(function(p)
      if not pending then
        return
      end
      pending = false
      local index = 0
      for entry in p.manager:iter() do
        index = index + 1
        if entry.value and entry.value.citation == citation then
          return p:set_selection(p:get_row(index))
        end
      end
    end)
    picker:refresh(finders.new_table({ results = new_items, entry_maker = entry_maker }), { reset_prompt = false })
    return true
  end
  picker:find()
end

return M
