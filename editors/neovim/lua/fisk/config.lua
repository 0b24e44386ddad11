-- Options for require("fisk").setup(): defaults, merge and validation.
local M = {}

---@class fisk.Options
---@field cmd string[]                 server command (default { "fisk-ls" })
---@field filetypes string[]           buffers the client attaches to
---@field root_markers string[]        files or directories that mark a project root
---@field settings table               passed to the server as initializationOptions and settings.fisk
---@field picker string                "auto" or "select" (both: vim.ui.select)
---@field picker_options table         { select = {...} }: extra options for vim.ui.select
---@field mappings table|false         buffer-local keys set when the client attaches
---@field progress boolean             notify when indexing starts and ends
---@field expansion fisk.Expansion|false question expansion by a chat server (default off)
---@field live boolean                 :FiskSearch without a query opens the live search (default true)
---@field top_k integer|false          results per search, 1-20 (false: the server's `topK` setting)
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

-- The server's `fisk` settings and their limits, generated from fisk_ls/knowledge/settings.schema.json
-- into lua/fisk/schema.lua (scripts/editor_contracts.py; a Python test fails when it is stale).
M.schema = require("fisk.schema").properties

--- A rule's `if` in words ("provider builtin").
---@param rule table a property with JSON Schema if/then/else
---@return string
local function condition(rule)
  local words = {}
  for key, p in vim.spairs(rule["if"].properties) do
    words[#words + 1] = ("%s %s"):format(key, tostring(p.const))
  end
  return table.concat(words, " and ")
end

--- What `value` breaks of a schema if/then/else `rule` (the embeddings' provider rule, written
--- once in the server's contract), in the server's words (settings_schema.rule_problems): under
--- the condition a `then` field other than its const "" is "not used with provider builtin";
--- otherwise a missing or empty `else.required` field makes "baseUrl and model are required, or
--- provider builtin".
---@param rule table
---@param value table the object's given fields
---@return { field: string?, problem: string }[]
function M.rule_problems(rule, value)
  local applies = true
  for _, key in ipairs(rule["if"].required or {}) do
    applies = applies and value[key] ~= nil
  end
  for key, p in pairs(rule["if"].properties) do
    applies = applies and (value[key] == nil or value[key] == p.const)
  end
  local out = {}
  if applies then
    local needed = (rule["then"] or {}).required or {}
    for _, key in ipairs(needed) do
      if value[key] == nil or value[key] == "" then
        return { { problem = ("%s are required with %s"):format(table.concat(needed, " and "), condition(rule)) } }
      end
    end
    for key, p in vim.spairs((rule["then"] or {}).properties or {}) do
      if p.const ~= nil and value[key] ~= nil and value[key] ~= p.const then
        out[#out + 1] = { field = key, problem = "not used with " .. condition(rule) }
      end
    end
    return out
  end
  if not rule["else"] then
    return out
  end
  local required = rule["else"].required
  for _, key in ipairs(required) do
    if value[key] == nil or value[key] == "" then
      return { { problem = ("%s are required, or %s"):format(table.concat(required, " and "), condition(rule)) } }
    end
  end
  return out
end

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

local function num(x)
  return x == math.floor(x) and ("%d"):format(x) or tostring(x)
end

--- What a property allows, in the server's words ("an integer from 1 to 20", "true or false").
---@param p table a property of M.schema
---@return string
function M.describe(p)
  local noun = ({ integer = "an integer", number = "a number" })[p.type] or p.type
  if p.enum then
    return "one of " .. table.concat(p.enum, ", ")
  elseif p.minimum and p.maximum then
    return ("%s from %s to %s"):format(noun, num(p.minimum), num(p.maximum))
  elseif p.minimum then
    return ("%s of at least %s"):format(noun, num(p.minimum))
  elseif p.type == "string" and p.maxLength then
    return ("a string of at most %d characters"):format(p.maxLength)
  elseif p.type == "array" then
    return ("a list of %ss"):format(p.items.type)
  elseif p.type == "boolean" then
    return "true or false"
  end
  return noun
end

local function fits(p, value)
  if p.type == "integer" or p.type == "number" then
    if type(value) ~= "number" or value ~= value then
      return false
    end
    if p.type == "integer" and value ~= math.floor(value) then
      return false
    end
    return not (p.minimum and value < p.minimum) and not (p.maximum and value > p.maximum)
  elseif p.type == "boolean" then
    return type(value) == "boolean"
  elseif p.type == "string" then
    if p.enum and not vim.tbl_contains(p.enum, value) then
      return false
    end
    return type(value) == "string" and not (p.maxLength and #value > p.maxLength)
  elseif p.type == "array" then
    if type(value) ~= "table" or (next(value) ~= nil and not vim.islist(value)) then
      return false
    end
    for _, v in ipairs(value) do
      if type(v) ~= p.items.type then
        return false
      end
    end
    return true
  end
  return type(value) == "table"
end

--- Check `settings` (the server's camelCase keys) against M.schema, as the server does: a bad
--- field is dropped, so the server keeps its default, and is named in the returned problems.
--- Unknown keys pass through untouched (the server decides about them).
---@param settings table
---@return table settings the valid part
---@return string[] problems e.g. { "fisk.topK (expected an integer from 1 to 20, got 30)" }
function M.check_settings(settings)
  local out, problems = vim.deepcopy(settings), {}
  local function bad(key, what, value)
    problems[#problems + 1] = ("fisk.%s (expected %s, got %s)"):format(key, what, vim.inspect(value))
  end
  local keys = vim.tbl_keys(M.schema)
  table.sort(keys)
  for _, key in ipairs(keys) do
    local p, value = M.schema[key], settings[key]
    if value == nil or value == vim.NIL then
      out[key] = nil
    elseif p.type ~= "object" then
      if not fits(p, value) then
        bad(key, M.describe(p), value)
        out[key] = nil
      end
    elseif type(value) ~= "table" or vim.islist(value) and next(value) ~= nil then
      local needs = p["else"] and ("%s, or %s"):format(table.concat(p["else"].required, " and "), condition(p))
      bad(key, "an object" .. (needs and " with " .. needs or ""), value)
      out[key] = nil
    else
      local ok = true
      for name, item in pairs(value) do
        if p.properties[name] and not fits(p.properties[name], item) then
          bad(key .. "." .. name, M.describe(p.properties[name]), item)
          ok = false
        end
      end
      if ok and p["if"] then -- the provider rule: builtin takes no baseUrl, openai needs baseUrl and model
        for _, broken in ipairs(M.rule_problems(p, value)) do
          problems[#problems + 1] = ("fisk.%s (%s)"):format(broken.field and key .. "." .. broken.field or key, broken.problem)
          ok = false
        end
      end
      if not ok then
        out[key] = nil
      end
    end
  end
  return out, problems
end

--- The one message naming every bad setting (the server's wording).
---@param problems string[]
---@return string
function M.problems_message(problems)
  return "ignoring invalid settings, using defaults for: " .. table.concat(problems, "; ")
end

local EXPANSION_KEYS = { provider = "provider", base_url = "baseUrl", model = "model", api_key_env = "apiKeyEnv", timeout = "timeout" }

--- The `expansion` option as the server's `fisk.expansion` setting (camelCase). Raises a clear
--- error for what the server could not use: an unknown key or provider ("editor" is VS Code's:
--- Neovim has no language model of its own), or provider openai without base_url and model.
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
  if out.provider ~= "openai" and out.provider ~= "none" then
    error(("fisk.setup: `expansion.provider` must be openai or none, got %s"):format(vim.inspect(out.provider)), 0)
  end
  if out.provider == "openai" and (type(out.baseUrl) ~= "string" or out.baseUrl == "" or type(out.model) ~= "string" or out.model == "") then
    error("fisk.setup: `expansion` with provider openai needs base_url and model (an OpenAI-compatible chat server)", 0)
  end
  return out
end

--- True when searches ask the server for question expansion: a provider other than none.
---@return boolean
function M.expanding()
  local e = M.options.settings.expansion
  return type(e) == "table" and e.provider ~= nil and e.provider ~= "none"
end

--- Merge user options over the defaults; raises a clear error for a wrong type. `settings` follow
--- the server's rule instead: a bad one keeps its default and one warning names every bad field.
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
  if merged.top_k == true or (type(merged.top_k) == "number" and (merged.top_k ~= math.floor(merged.top_k) or merged.top_k < 1 or merged.top_k > 20)) then
    error(("fisk.setup: `top_k` must be an integer from 1 to 20, or false, got %s"):format(vim.inspect(merged.top_k)), 0)
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
  local problems
  merged.settings, problems = M.check_settings(merged.settings)
  if #problems > 0 then
    require("fisk.notify").warn(M.problems_message(problems))
  end
  M.options = merged
  return merged
end

return M
