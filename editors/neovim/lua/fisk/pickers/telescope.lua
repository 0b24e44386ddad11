-- telescope.nvim: results with a preview of the matched lines: its grep previewer highlights
-- lnum..lnend (TelescopePreviewLine) and centres them.
local M = {}

---@param items fisk.Item[]
---@param opts {title: string, options: table}
---@param on_choice fun(item: fisk.Item)
function M.pick(items, opts, on_choice)
  local pickers = require("telescope.pickers")
  local finders = require("telescope.finders")
  local conf = require("telescope.config").values
  local actions = require("telescope.actions")
  local action_state = require("telescope.actions.state")

  local topts = opts.options or {}
  pickers
    .new(topts, {
      prompt_title = opts.title,
      finder = finders.new_table({
        results = items,
        entry_maker = function(item)
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
        end,
      }),
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
    :find()
end

return M
