-- fzf-lua: lines in `relpath:line:col: text` form, so its builtin previewer shows the cited lines.
local picker = require("fisk.picker")

local M = {}

---@param items fisk.Item[]
---@param opts {title: string, options: table}
---@param on_choice fun(item: fisk.Item)
function M.pick(items, opts, on_choice)
  local fzf = require("fzf-lua")
  local root = items[1] and picker.root(items[1])
  local lines, by_line = {}, {}
  for _, item in ipairs(items) do
    local text = item.section ~= "" and (item.section .. " │ " .. item.snippet) or item.snippet
    local line = ("%s:%d:1: %s"):format(root and item.relpath or item.filename, item.lnum, text)
    lines[#lines + 1] = line
    by_line[line] = item
  end
  fzf.fzf_exec(
    lines,
    vim.tbl_deep_extend("force", {
      prompt = opts.title .. "> ",
      cwd = root,
      previewer = "builtin",
      fzf_opts = { ["--tiebreak"] = "index" },
      actions = {
        ["default"] = function(selected)
          local item = selected and by_line[selected[1]]
          if item then
            on_choice(item)
          end
        end,
      },
    }, opts.options or {})
  )
end

return M
