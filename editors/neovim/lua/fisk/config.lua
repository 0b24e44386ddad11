-- Options for require("fisk").setup(): defaults, merge, and checks of the plugin's own options.
-- `settings` (the server's `fisk` settings) and the values the plugin sends in requests (`top_k`,
-- `expansion`) go to the server as they are: the server checks them, and its one message (a
-- window/showMessage) is shown through fisk.notify.
local M = {}

---@class fisk.Options
---@field cmd string[]                 server command (default { "fisk-ls" })
---@field filetypes string[]           buffers the client attaches to
---@field root_markers string[]        files or directories that mark a project root
---@field settings table               passed to the server as initializationOptions and settings.fisk (unchecked: the server names a bad one)
---@field picker string                "auto" or "select" (both: vim.ui.select)
---@field picker_options table         { select = {...} }: extra options for vim.ui.select
---@field mappings table|false         buffer-local keys set when the client attaches
---@field progress boolean             notify when indexing starts and ends
---@field expansion fisk.Expansion|false question expansion by a chat server (default off)
---@field live boolean                 :FiskSearch without a query opens the live search (default true)
---@field top_k integer|false          results per search (the server's limit: 1-20; false: the server's `topK` setting)
---@field semantic_offer boolean       offer the built-in model once per project when search is lexical for want of embeddings
---@field on_attach? fun(client: vim.lsp.Client, bufnr: integer)
---@field capabilities? table
---@class fisk.Expansion
---@field provider? string  "openai" (the default: a chat server the language server calls) or "none"
---@field base_url? string  OpenAI-compatible chat API, e.g. "http://127.0.0.1:11434/v1"
---@field model? string     chat model name
---@field api_key_env? string name of the environment variable holding the API key
---@field timeout? number   seconds the model may take before the plain results stay (default 10)

M.defaults = {
  cmd = { "fisk-ls" },
  filetypes = { "markdown", "text" },
  root_markers = { "agent.yaml", ".git" },
  settings = {},
  picker = "auto",
  picker_options = {},
  mappings = { definition = "gd" },
  progress = true,
  expansion = false,
  live = true,
  top_k = false,
  semantic_offer = true,
  on_attach = nil,
  capabilities = nil,
}

M.pickers = { "auto", "select" }
--- Pickers the plugin had adapters for; results now go through vim.ui.select, which each of them
--- can take over (telescope-ui-select, fzf-lua's register_ui_select, snacks' ui_select, mini.pick's ui_select).
M.removed_pickers = { telescope = "telescope-ui-select", fzf_lua = "fzf-lua's register_ui_select()", snacks = "snacks' picker.ui_select", mini = "mini.pick's MiniPick.ui_select" }

---@type fisk.Options
M.options = vim.deepcopy(M.defaults)

--- Whether setup() was given a `cmd` (then :FiskInstall does not replace it).
M.cmd_given = false

--- The server command when setup() has no `cmd`: the fisk-ls that :FiskInstall set up under
--- stdpath("data"), when there is one, else `fisk-ls` on PATH.
---@return string[]
function M.default_cmd()
  local managed = require("fisk.install").executable()
  return managed and { managed } or vim.deepcopy(M.defaults.cmd)
end

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

local EXPANSION_KEYS = { provider = "provider", base_url = "baseUrl", model = "model", api_key_env = "apiKeyEnv", timeout = "timeout" }

--- The `expansion` option as the server's `fisk.expansion` setting (camelCase; provider openai
--- unless given). Raises a clear error for what is the plugin's to know: an unknown key, or
--- provider "editor" (VS Code's own language model; Neovim has none to answer `fisk/expand`). The
--- values themselves are the server's to check (its message names a bad one).
---@param e fisk.Expansion|true
---@return table
function M.expansion_settings(e)
  e = e == true and {} or e
  local out = {}
  for key, value in pairs(e) do
    if not EXPANSION_KEYS[key] then
      error(("fisk.setup: `expansion.%s` is not an option (%s)"):format(key, table.concat(vim.tbl_keys(EXPANSION_KEYS), ", ")), 0)
    end
    out[EXPANSION_KEYS[key]] = value
  end
  out.provider = out.provider or "openai"
  if out.provider == "editor" then
    error("fisk.setup: `expansion.provider` editor is VS Code's own language model; in Neovim use openai (a chat server) or none", 0)
  end
  return out
end

--- True when searches ask the server for question expansion: a provider other than none.
---@return boolean
function M.expanding()
  local e = M.options.settings.expansion
  return type(e) == "table" and e.provider ~= nil and e.provider ~= "none"
end

--- Merge user options over the defaults; raises a clear error for a plugin option of the wrong
--- type. `settings` are the server's: it checks them, keeps its default for a bad one and names
--- every bad field in one message.
---@param opts? table
---@return fisk.Options
function M.setup(opts)
  check("opts", opts, "table", true)
  opts = opts or {}
  if type(opts.cmd) == "string" then
    opts = vim.tbl_extend("force", opts, { cmd = { opts.cmd } })
  end
  local merged = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  M.cmd_given = opts.cmd ~= nil
  if not M.cmd_given then
    merged.cmd = M.default_cmd()
  end
  check_list("cmd", merged.cmd)
  check_list("filetypes", merged.filetypes)
  check_list("root_markers", merged.root_markers)
  check("settings", merged.settings, "table")
  check("picker_options", merged.picker_options, "table")
  check("mappings", merged.mappings, { "table", "boolean" })
  check("progress", merged.progress, "boolean")
  check("expansion", merged.expansion, { "table", "boolean" })
  check("live", merged.live, "boolean")
  check("semantic_offer", merged.semantic_offer, "boolean")
  check("top_k", merged.top_k, { "number", "boolean" })
  if merged.top_k == true then
    error("fisk.setup: `top_k` must be a number of results, or false (the server's `topK` setting), got true", 0)
  end
  check("on_attach", merged.on_attach, "function", true)
  check("capabilities", merged.capabilities, "table", true)
  local removed = M.removed_pickers[merged.picker]
  if removed then
    require("fisk.notify").warn(("picker = %q is no longer a choice: results open with vim.ui.select, which %s makes that picker's (or use the live search, :FiskSearch)")
      :format(merged.picker, removed))
    merged.picker = "select"
  end
  if not vim.tbl_contains(M.pickers, merged.picker) then
    error(
      ("fisk.setup: `picker` must be one of %s, got %s"):format(
        table.concat(M.pickers, ", "),
        vim.inspect(merged.picker)
      ),
      0
    )
  end
  if merged.expansion then
    merged.settings = vim.tbl_extend("force", merged.settings, { expansion = M.expansion_settings(merged.expansion) })
  end
  M.options = merged
  return merged
end

return M
