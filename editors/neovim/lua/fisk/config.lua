-- Options for require("fisk").setup(): defaults, merge and validation.
local M = {}

---@class fisk.Options
---@field cmd string[]                 server command (default { "fisk-ls" })
---@field filetypes string[]           buffers the client attaches to
---@field root_markers string[]        files or directories that mark a project root
---@field settings table               passed to the server as initializationOptions and settings.fisk
---@field picker string                "auto", "telescope", "fzf_lua", "snacks", "mini" or "select"
---@field picker_options table         extra options for the picker backend, keyed by backend name
---@field mappings table|false         buffer-local keys set when the client attaches
---@field progress boolean             notify when indexing starts and ends
---@field on_attach? fun(client: vim.lsp.Client, bufnr: integer)
---@field capabilities? table
M.defaults = {
  cmd = { "fisk-ls" },
  filetypes = { "markdown", "text" },
  root_markers = { "agent.yaml", ".git" },
  settings = {},
  picker = "auto",
  picker_options = {},
  mappings = { definition = "gd" },
  progress = true,
  on_attach = nil,
  capabilities = nil,
}

M.pickers = { "auto", "telescope", "fzf_lua", "snacks", "mini", "select" }

---@type fisk.Options
M.options = vim.deepcopy(M.defaults)

local function check(name, value, expected, optional)
  if value == nil and optional then
    return
  end
  local kinds = type(expected) == "table" and expected or { expected }
  if not vim.tbl_contains(kinds, type(value)) then
    error(
      ("fisk.setup: `%s` must be a %s, got %s"):format(name, table.concat(kinds, " or "), type(value)),
      0
    )
  end
end

local function check_list(name, value)
  check(name, value, "table")
  for i, v in ipairs(value) do
    check(("%s[%d]"):format(name, i), v, "string")
  end
  if #value == 0 then
    error(("fisk.setup: `%s` must not be empty"):format(name), 0)
  end
end

--- Merge user options over the defaults; raises a clear error for a wrong type.
---@param opts? table
---@return fisk.Options
function M.setup(opts)
  check("opts", opts, "table", true)
  opts = opts or {}
  if type(opts.cmd) == "string" then
    opts = vim.tbl_extend("force", opts, { cmd = { opts.cmd } })
  end
  local merged = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  check_list("cmd", merged.cmd)
  check_list("filetypes", merged.filetypes)
  check_list("root_markers", merged.root_markers)
  check("settings", merged.settings, "table")
  check("picker_options", merged.picker_options, "table")
  check("mappings", merged.mappings, { "table", "boolean" })
  check("progress", merged.progress, "boolean")
  check("on_attach", merged.on_attach, "function", true)
  check("capabilities", merged.capabilities, "table", true)
  if not vim.tbl_contains(M.pickers, merged.picker) then
    error(
      ("fisk.setup: `picker` must be one of %s, got %s"):format(
        table.concat(M.pickers, ", "),
        vim.inspect(merged.picker)
      ),
      0
    )
  end
  M.options = merged
  return merged
end

return M
