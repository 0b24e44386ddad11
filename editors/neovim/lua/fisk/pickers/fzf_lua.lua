-- fzf-lua: lines in `relpath:line:col: text` form, so its builtin previewer opens the file on the
-- first matched line; a small subclass of that previewer also highlights the other matched lines.
local picker = require("fisk.picker")

local M = {}

M.hl_group = "FiskMatchedLines"

--- The builtin file previewer, extended to highlight item.lnum..item.end_lnum of the entry shown,
--- as a previewer spec: the user's builtin previewer options with `_ctor` returning the subclass
--- (how fzf-lua instantiates previewers: `spec._ctor()(spec, opts)`). nil when fzf-lua's
--- previewer classes are not there (then its plain "builtin" is used).
---@param find fun(path: string, line: integer): fisk.Item?
function M.previewer(find)
  local ok, builtin = pcall(require, "fzf-lua.previewer.builtin")
  if not ok or type(builtin) ~= "table" or type(builtin.buffer_or_file) ~= "table" then
    return nil
  end
  local Previewer = builtin.buffer_or_file:extend()
  function Previewer:new(...)
    Previewer.super.new(self, ...)
    return self
  end
  function Previewer:set_cursor_hl(entry)
    Previewer.super.set_cursor_hl(self, entry)
    local item = find(entry.path or "", tonumber(entry.line) or 0)
    if not item then
      return
    end
    vim.api.nvim_set_hl(0, M.hl_group, { link = "Visual", default = true })
    pcall(vim.api.nvim_win_call, self.win.preview_winid, function()
      local lines = {}
      for lnum = item.lnum, item.end_lnum do
        lines[#lines + 1] = { lnum }
      end
      vim.fn.matchaddpos(M.hl_group, lines, 10)
    end)
  end
  local has_config, config = pcall(require, "fzf-lua.config")
  local defaults = has_config and type(config.globals) == "table" and config.globals.previewers
  local spec = vim.tbl_extend("force", {}, type(defaults) == "table" and defaults.builtin or {}, {
    _ctor = function()
      return Previewer
    end,
  })
  spec.new, spec._new = nil, nil -- fzf-lua prefers these over _ctor
  return spec
end

---@param items fisk.Item[]
---@param opts {title: string, options: table}
---@param on_choice fun(item: fisk.Item)
function M.pick(items, opts, on_choice)
  local fzf = require("fzf-lua")
  local root = items[1] and picker.root(items[1])
  local lines, by_line = {}, {}
  for _, item in ipairs(items) do
    local text = item.section ~= "" and (item.section .. " │ " .. item.marked) or item.marked
    local line = ("%s:%d:1: %s"):format(root and item.relpath or item.filename, item.lnum, text)
    lines[#lines + 1] = line
    by_line[line] = item
  end
  -- the entry's path as fzf-lua parsed it: relative to root, or absolute
  local function find(path, line)
    for _, item in ipairs(items) do
      local same = path == item.relpath or path == item.filename or vim.endswith(path, "/" .. item.relpath)
      if same and line == item.lnum then
        return item
      end
    end
  end
  fzf.fzf_exec(
    lines,
    vim.tbl_deep_extend("force", {
      prompt = opts.title .. "> ",
      cwd = root,
      previewer = M.previewer(find) or "builtin",
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
