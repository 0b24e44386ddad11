-- fisk.nvim: search the project's documentation through the fisk-ls language server.
local M = {}

M.did_setup = false

--- Register and enable the fisk_ls client. Works with no options; see :help fisk-setup.
---@param opts? table
function M.setup(opts)
  if vim.fn.has("nvim-0.10") == 0 then
    vim.notify("fisk: Neovim 0.10 or newer is required", vim.log.levels.ERROR)
    return
  end
  local options = require("fisk.config").setup(opts)
  require("fisk.progress").setup(options)
  require("fisk.keys").setup(options)
  M.did_setup = true
  M.enabled = require("fisk.lsp").setup(options)
end

--- Search; results go to the picker, or to the quickfix list with { quickfix = true }. `also`:
--- up to 4 extra search strings in the docs' likely words (a keyword query, a one- or
--- two-sentence hypothetical answer, a rephrasing), searched beside the query and fused with it.
--- `paths`: folders, files or globs to search in, relative to the project root or absolute.
---@param query? string prompts when empty
---@param opts? {quickfix?: boolean, also?: string[], paths?: string[]}
function M.search(query, opts)
  opts = opts or {}
  require("fisk.commands").search(query, opts.quickfix, opts.also, opts.paths)
end

--- Open the lines a citation (`relpath#ordinal`) points to.
---@param citation string
function M.show(citation)
  require("fisk.commands").show(citation)
end

--- Update the index; { rebuild = true } rebuilds it from scratch.
---@param opts? {rebuild?: boolean}
function M.reindex(opts)
  require("fisk.commands").reindex(opts and opts.rebuild)
end

function M.status()
  require("fisk.commands").status()
end

--- Indexing progress of the current buffer's server for a statusline ("" when idle).
---@return string
function M.statusline()
  return require("fisk.progress").statusline()
end

return M
