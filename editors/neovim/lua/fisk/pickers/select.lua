-- vim.ui.select: always there, and dressed by whatever UI plugin the user has.
local M = {}

---@param items fisk.Item[]
---@param opts {title: string, options: table}
---@param on_choice fun(item: fisk.Item)
function M.pick(items, opts, on_choice)
  local select_opts = vim.tbl_extend("force", {
    prompt = opts.title,
    kind = "fisk.search",
    format_item = function(item)
      return item.label
    end,
  }, opts.options or {})
  vim.ui.select(items, select_opts, function(item)
    if item then
      on_choice(item)
    end
  end)
end

return M
