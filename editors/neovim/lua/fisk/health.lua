-- :checkhealth fisk
local config = require("fisk.config")
local lsp = require("fisk.lsp")

local M = {}

local health = vim.health

local function check_server(opts)
  local exe = opts.cmd[1]
  if vim.fn.executable(exe) ~= 1 then
    health.error(lsp.missing_message(opts), {
      ":FiskInstall (an environment under stdpath('data')/fisk-ls)",
      "pipx install --force . in a checkout of the fisk-ls repository (or pip install . into a virtualenv and set cmd to its bin/fisk-ls)",
      'require("fisk").setup({ cmd = { "/path/to/fisk-ls" } })',
    })
    return false
  end
  local managed = exe == require("fisk.install").environment().executable and " (set up by :FiskInstall)" or ""
  health.ok(("`%s` found: %s%s"):format(exe, vim.fn.exepath(exe), managed))
  local argv = vim.list_extend(vim.deepcopy(opts.cmd), { "--version" })
  local ok, res = pcall(function()
    return vim.system(argv, { text = true }):wait(10000)
  end)
  if not ok then
    health.error(("`%s --version` could not run: %s"):format(exe, res))
    return false
  end
  local out = vim.trim((res.stdout or "") .. (res.stderr or ""))
  if res.code == 0 and out ~= "" then
    health.ok("version: " .. out:gsub("\n.*", ""))
  else
    health.warn(("`%s --version` exited with %s: %s"):format(exe, tostring(res.code), out))
  end
  return true
end

local function check_index(client)
  local params = { command = require("fisk.api").commands.status, arguments = {} }
  local resp = lsp.request_sync(client, "workspace/executeCommand", params, 10000)
  if not resp or resp.err or type(resp.result) ~= "table" then
    local why = resp and resp.err and lsp.error_message(resp.err) or "no answer within 10 s"
    health.error(("fisk.knowledge.status failed: %s"):format(why))
    return
  end
  local s = resp.result
  for _, root in ipairs(s.roots or {}) do
    local line = ("index of %s: %s documents, %s chunks (store %s)"):format(
      root.root, root.documents or 0, root.chunks or 0, root.store or "?"
    )
    if (tonumber(root.documents) or 0) > 0 then
      health.ok(line)
    elseif s.indexing then
      health.info(line)
    else
      health.warn(line, { "No markdown or text files indexed: check `settings.paths`, then :FiskReindex" })
    end
  end
  if s.indexing then
    health.info("indexing in progress")
  end
  local tier = tostring(s.tier)
  local advice = { "Search still works lexically; check `settings.embeddings` and that its server is up" }
  if tier:lower():find("degraded", 1, true) then
    health.warn("embeddings tier: " .. tier, advice)
  else
    health.ok("embeddings tier: " .. tier)
  end
  local reason = require("fisk.progress").degraded[client.root_dir or tostring(client.id)]
  if reason then
    health.warn(("the last search ran degraded: %s"):format(reason), advice)
  end
end

local function check_clients(opts)
  local clients = vim.lsp.get_clients({ name = lsp.name })
  if #clients == 0 then
    -- what :FiskStatus run from here would start: the root of the working directory
    local root, why = require("fisk.root").find(vim.fn.getcwd(), true, opts.root_markers)
    local advice = root
        and ("Run :FiskStatus to start one for %s (%s), or open a %s file"):format(
          root,
          why,
          table.concat(opts.filetypes, " or ")
        )
      or ("No root for :FiskStatus from here: %s"):format(why)
    health.warn(("no %s client is running"):format(lsp.name), { advice })
    return
  end
  for _, client in ipairs(clients) do
    local bufs = vim.tbl_count(client.attached_buffers or {})
    health.ok(("client %d for %s, attached to %d buffer(s)"):format(client.id, client.root_dir or "?", bufs))
    health.info(require("fisk.commands").root_line(client))
    if client.initialized then
      check_index(client)
    else
      health.warn(("client %d has not finished initializing"):format(client.id))
    end
  end
end

function M.check()
  health.start("fisk: Neovim")
  if vim.fn.has("nvim-0.10") == 1 then
    health.ok("Neovim " .. tostring(vim.version()))
  else
    health.error("Neovim 0.10 or newer is required")
    return
  end
  if require("fisk").did_setup then
    health.ok("require(\"fisk\").setup() was called")
  else
    health.warn("require(\"fisk\").setup() has not been called", { "Call it from your config (see :help fisk-setup)" })
  end

  health.start("fisk: server")
  local opts = config.options
  if not check_server(opts) then
    return
  end

  health.start("fisk: clients and index")
  check_clients(opts)
  health.info("LSP log: " .. vim.lsp.get_log_path())
end

return M
