-- The fisk_ls client: its configuration, registration, and finding (or starting) the client
-- that serves a buffer. Everything version-specific (0.10 vs 0.11+) lives here.
local config = require("fisk.config")
local notify = require("fisk.notify")
local roots = require("fisk.root")

local M = {}

M.name = "fisk_ls"
M.start_timeout = 30000 -- ms to wait for the server to answer `initialize`

local has_011 = vim.fn.has("nvim-0.11") == 1

-- An empty Lua table encodes as a JSON array; the server expects an object.
local function object(t)
  if t == nil or next(t) == nil then
    return vim.empty_dict()
  end
  return t
end

--- The root folders of the running fisk_ls clients.
---@return string[]
function M.running_roots()
  local out = {}
  for _, client in ipairs(vim.lsp.get_clients({ name = M.name, _uninitialized = true })) do
    out[#out + 1] = client.root_dir
  end
  return out
end

--- The client configuration shared by `vim.lsp.config` (0.11+) and `vim.lsp.start` (0.10).
--- Its root is chosen by fisk.root: the nearest folder with a root marker, else (a plain folder)
--- the working directory or the file's folder.
---@param opts fisk.Options
---@return vim.lsp.Config
function M.client_config(opts)
  local settings = object(vim.deepcopy(opts.settings))
  return {
    name = M.name,
    cmd = opts.cmd,
    filetypes = opts.filetypes,
    root_dir = function(bufnr, on_dir)
      local root = roots.for_buffer(bufnr, opts.root_markers, M.running_roots())
      if root then
        on_dir(root)
      end
    end,
    workspace_required = true,
    init_options = settings,
    settings = { fisk = settings },
    capabilities = opts.capabilities,
    on_attach = opts.on_attach,
    -- The server's messages (a bad setting among them) through the plugin's one place.
    handlers = { ["window/showMessage"] = notify.server_message },
  }
end

---@param opts? fisk.Options
function M.executable(opts)
  opts = opts or config.options
  return vim.fn.executable(opts.cmd[1]) == 1
end

---@param opts? fisk.Options
function M.missing_message(opts)
  opts = opts or config.options
  return ("cannot start the language server: `%s` was not found or is not executable (cmd = %s). "
    .. "Run :FiskInstall to set it up in an environment of the plugin's own; or install it with "
    .. "`pipx install --force .` in a checkout of the fisk-ls repository (`pipx install fisk-ls` "
    .. "once it is published), or set `cmd` in require(\"fisk\").setup().")
    :format(opts.cmd[1], vim.inspect(opts.cmd))
end

-- 0.10 has no vim.lsp.enable: start the client from a FileType autocmd.
local function start_for_buffer(bufnr, opts)
  if vim.bo[bufnr].buftype ~= "" or vim.api.nvim_buf_get_name(bufnr) == "" then
    return
  end
  local root = roots.for_buffer(bufnr, opts.root_markers, M.running_roots())
  if not root then
    return
  end
  local cfg = M.client_config(opts)
  cfg.root_dir, cfg.filetypes, cfg.workspace_required = root, nil, nil
  vim.lsp.start(cfg, { bufnr = bufnr })
end

--- Register and enable the client for opts.filetypes.
---@param opts fisk.Options
---@return boolean enabled
function M.setup(opts)
  if not M.executable(opts) then
    notify.error(M.missing_message(opts))
    return false
  end
  if has_011 then
    vim.lsp.config[M.name] = M.client_config(opts)
    vim.lsp.enable(M.name)
    return true
  end
  local group = vim.api.nvim_create_augroup("fisk.lsp", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = opts.filetypes,
    callback = function(ev)
      start_for_buffer(ev.buf, opts)
    end,
  })
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.tbl_contains(opts.filetypes, vim.bo[bufnr].filetype) then
      start_for_buffer(bufnr, opts)
    end
  end
  return true
end

--- Method call that works on 0.10 (`client.request(...)`) and 0.11+ (`client:request(...)`).
local function call(client, method, ...)
  if has_011 then
    return client[method](client, ...)
  end
  return client[method](...)
end

function M.request(client, method, params, handler, bufnr)
  return call(client, "request", method, params, handler, bufnr)
end

function M.request_sync(client, method, params, timeout_ms, bufnr)
  return call(client, "request_sync", method, params, timeout_ms, bufnr)
end

function M.cancel_request(client, id)
  return call(client, "cancel_request", id)
end

function M.is_stopped(client)
  return call(client, "is_stopped")
end

--- The running client for a buffer: attached to it, else serving the root it lies in.
---@param bufnr? integer
---@return vim.lsp.Client?
function M.find(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  -- include clients still starting (0.11 hides them by default), so none is started twice
  local attached = vim.lsp.get_clients({ name = M.name, bufnr = bufnr, _uninitialized = true })
  if attached[1] then
    return attached[1]
  end
  local path = roots.anchor(bufnr)
  for _, client in ipairs(vim.lsp.get_clients({ name = M.name, _uninitialized = true })) do
    if client.root_dir and roots.inside(roots.normalize(client.root_dir), path) then
      return client
    end
  end
end

-- Start a client for `root` without attaching a buffer (commands run from any buffer).
local function start_detached(root, opts)
  local cfg = M.client_config(opts)
  cfg.root_dir, cfg.filetypes, cfg.workspace_required = root, nil, nil
  if has_011 then
    return vim.lsp.start(cfg, { attach = false, silent = true })
  end
  return vim.lsp.start_client(cfg)
end

--- The client for a buffer, starting one for the buffer's project root when none runs.
---@param bufnr? integer
---@return vim.lsp.Client? client
---@return string? err
function M.ensure(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local client = M.find(bufnr)
  if client then
    return client
  end
  local opts = config.options
  local root, why = roots.for_buffer(bufnr, opts.root_markers)
  if not root then
    local others = vim.lsp.get_clients({ name = M.name })
    if #others == 1 then
      return others[1]
    end
    return nil, "no project root: " .. why
  end
  if not M.executable(opts) then
    return nil, M.missing_message(opts)
  end
  local id = start_detached(root, opts)
  client = id and vim.lsp.get_client_by_id(id)
  if not client then
    return nil, ("could not start `%s`; see :LspLog (%s)"):format(opts.cmd[1], vim.lsp.get_log_path())
  end
  return client
end

--- Call cb(nil, client) once the buffer's client has answered `initialize`, or cb(err).
---@param bufnr? integer
---@param cb fun(err: string?, client: vim.lsp.Client?)
function M.with_client(bufnr, cb)
  local client, err = M.ensure(bufnr)
  if not client then
    return cb(err)
  end
  if client.initialized then
    return cb(nil, client)
  end
  local timer = assert(vim.uv.new_timer())
  local waited, step = 0, 50
  timer:start(step, step, vim.schedule_wrap(function()
    waited = waited + step
    local failed = M.is_stopped(client) and "exited before it was ready"
      or waited >= M.start_timeout and ("did not answer within %d s"):format(M.start_timeout / 1000)
    if not (client.initialized or failed) or timer:is_closing() then
      return
    end
    timer:stop()
    timer:close()
    if client.initialized then
      return cb(nil, client)
    end
    cb(("`%s` %s; see :LspLog (%s)"):format(config.options.cmd[1], failed, vim.lsp.get_log_path()))
  end))
end

--- Text of an LSP response error.
function M.error_message(err)
  if type(err) == "table" then
    return err.message or vim.inspect(err)
  end
  return tostring(err)
end

--- Stop the running fisk_ls clients, then register the client with `opts` again and start it for
--- the open buffers of its filetypes (a new server command or new settings). cb() when done.
---@param opts fisk.Options
---@param cb? fun()
function M.restart(opts, cb)
  local clients = vim.lsp.get_clients({ name = M.name, _uninitialized = true })
  for _, client in ipairs(clients) do
    pcall(call, client, "stop")
  end
  local function start()
    local did_setup = package.loaded["fisk"] and require("fisk").did_setup
    if did_setup then
      M.setup(opts)
    elseif has_011 and vim.lsp.config[M.name] then
      vim.lsp.config(M.name, { cmd = opts.cmd, init_options = object(vim.deepcopy(opts.settings)), settings = { fisk = object(vim.deepcopy(opts.settings)) } })
    end
    if M.executable(opts) then
      for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
        if vim.api.nvim_buf_is_loaded(bufnr) and vim.tbl_contains(opts.filetypes, vim.bo[bufnr].filetype) then
          start_for_buffer(bufnr, opts)
        end
      end
    end
    if cb then
      cb()
    end
  end
  if #clients == 0 then
    return start()
  end
  local waited = 0
  local timer = assert(vim.uv.new_timer())
  timer:start(50, 50, vim.schedule_wrap(function()
    waited = waited + 50
    local left = vim.tbl_filter(function(c)
      return not M.is_stopped(c)
    end, clients)
    if #left > 0 and waited < 5000 or timer:is_closing() then
      return
    end
    timer:stop()
    timer:close()
    for _, c in ipairs(left) do
      pcall(call, c, "stop", true)
    end
    start()
  end))
end

return M
