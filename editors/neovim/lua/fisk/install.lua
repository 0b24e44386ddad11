-- :FiskInstall: a private virtual environment under stdpath("data")/fisk-ls with fisk-ls in it,
-- installed from a wheel or folder the user gives, else from the fisk-ls checkout this plugin
-- lives in, else from PyPI by name. The plugin then runs the server from there (config.default_cmd).
-- Also the process runner and Python lookup that fisk.semantic uses for its pip runs.
local notify = require("fisk.notify")

local M = {}

M.MIN_PYTHON = { 3, 10 }
--- What the environment was last installed from (compared on the next :FiskInstall).
M.STAMP = "fisk-installed-from.txt"

local is_windows = vim.fn.has("win32") == 1

--- The managed environment: its folder, its python and its fisk-ls.
---@param dir? string default: stdpath("data")/fisk-ls
---@return {dir: string, python: string, executable: string}
function M.environment(dir)
  dir = dir or vim.fs.joinpath(vim.fn.stdpath("data") --[[@as string]], "fisk-ls")
  local bin = vim.fs.joinpath(dir, is_windows and "Scripts" or "bin")
  local exe = is_windows and ".exe" or ""
  return { dir = dir, python = vim.fs.joinpath(bin, "python" .. exe), executable = vim.fs.joinpath(bin, "fisk-ls" .. exe) }
end

--- The managed fisk-ls when :FiskInstall has set it up, else nil.
---@return string?
function M.executable()
  local exe = M.environment().executable
  if vim.fn.executable(exe) == 1 then
    return exe
  end
end

--- The last `n` non-empty lines of a process's output, for an error message.
---@param output string
---@param n? integer
---@return string
function M.last_lines(output, n)
  local lines = vim.tbl_filter(function(l)
    return l ~= ""
  end, vim.tbl_map(vim.trim, vim.split(output or "", "\r?\n")))
  return table.concat(vim.list_slice(lines, math.max(1, #lines - (n or 3) + 1)), " ")
end

--- Run argv; on_line sees each output line (stdout and stderr) as it comes, in the main loop;
--- done(code, output) at the end. A command that cannot start ends with code -1.
---@param argv string[]
---@param on_line? fun(line: string)
---@param done fun(code: integer, output: string)
function M.run(argv, on_line, done)
  local output, partial = {}, ""
  local function take(_, data)
    if not data then
      return
    end
    output[#output + 1] = data
    partial = partial .. data
    local lines = vim.split(partial, "\r?\n")
    partial = table.remove(lines)
    for _, line in ipairs(lines) do
      if vim.trim(line) ~= "" and on_line then
        vim.schedule(function()
          on_line(line)
        end)
      end
    end
  end
  local ok, err = pcall(vim.system, argv, { text = true, stdout = take, stderr = take }, function(res)
    vim.schedule(function()
      done(res.code, table.concat(output))
    end)
  end)
  if not ok then
    done(-1, tostring(err))
  end
end

local PROBE = 'import sys, venv, ensurepip; print("%d.%d" % sys.version_info[:2])'

--- The first of `python3`, `python` on PATH that is 3.10+ and has venv with ensurepip; else nil
--- and why none will do, in one sentence.
---@param names? string[]
---@return {path: string, version: string}? python
---@return string? problem
function M.find_python(names)
  local seen = {}
  for _, name in ipairs(names or { "python3", "python" }) do
    local path = vim.fn.exepath(name)
    if path ~= "" then
      local ok, res = pcall(function()
        return vim.system({ path, "-c", PROBE }, { text = true }):wait(20000)
      end)
      local out = ok and ((res.stdout or "") .. (res.stderr or "")) or tostring(res)
      local major, minor = out:match("^(%d+)%.(%d+)%s*$")
      major, minor = tonumber(major), tonumber(minor)
      if ok and res.code == 0 and major then
        if major > M.MIN_PYTHON[1] or (major == M.MIN_PYTHON[1] and minor >= M.MIN_PYTHON[2]) then
          return { path = path, version = ("%d.%d"):format(major, minor) }
        end
        seen[#seen + 1] = ("%s is Python %d.%d"):format(path, major, minor)
      elseif out:find("No module named '?venv") or out:find("No module named '?ensurepip") then
        seen[#seen + 1] = ("%s has no venv module (on Debian and Ubuntu: apt install python3-venv)"):format(path)
      else
        seen[#seen + 1] = ("%s did not run (%s)"):format(path, M.last_lines(out, 1))
      end
    end
  end
  local need = ("Python %d.%d or newer"):format(M.MIN_PYTHON[1], M.MIN_PYTHON[2])
  if #seen == 0 then
    return nil, ("installing fisk-ls needs %s, and there is no python3 or python on PATH. Install Python "
      .. "(your system's package manager, or python.org), then run :FiskInstall again; or install fisk-ls "
      .. "yourself and set `cmd` in require(\"fisk\").setup()."):format(need)
  end
  return nil, ("installing fisk-ls needs %s with venv: %s. Install it, then run :FiskInstall again; or "
    .. "install fisk-ls yourself and set `cmd` in require(\"fisk\").setup()."):format(need, table.concat(seen, "; "))
end

-- The plugin's folder (editors/neovim in a fisk-ls checkout).
local function plugin_dir()
  local this = debug.getinfo(1, "S").source:sub(2)
  return vim.fs.dirname(vim.fs.dirname(vim.fs.dirname(vim.fn.fnamemodify(this, ":p"))))
end

--- Whether `dir` is a fisk-ls source tree (its pyproject.toml names the project fisk-ls).
---@param dir string
---@return boolean
function M.is_source_tree(dir)
  local f = io.open(vim.fs.joinpath(dir, "pyproject.toml"), "r")
  if not f then
    return false
  end
  local text = f:read("*a")
  f:close()
  return text:find('\nname%s*=%s*"fisk%-ls"') ~= nil
end

--- The fisk-ls checkout the plugin lives in (the plugin is its editors/neovim), or nil.
---@return string?
function M.checkout()
  local repo = vim.fs.dirname(vim.fs.dirname(plugin_dir()))
  if M.is_source_tree(repo) then
    return repo
  end
end

---@class fisk.InstallSource
---@field kind "wheel"|"tree"|"pypi"
---@field path? string  the wheel or the source tree
---@field label string  for messages
---@field stamp? string what the environment records; nil: always install again

local function git_head(dir)
  local ok, res = pcall(function()
    return vim.system({ "git", "-C", dir, "rev-parse", "HEAD" }, { text = true }):wait(5000)
  end)
  if ok and res.code == 0 then
    return vim.trim(res.stdout)
  end
end

--- What to install: `arg` (a wheel or a fisk-ls source folder), else the checkout the plugin
--- lives in, else fisk-ls from PyPI.
---@param arg? string
---@return fisk.InstallSource? source
---@return string? err
function M.source(arg)
  arg = vim.trim(arg or "")
  if arg ~= "" then
    local path = vim.fn.fnamemodify(vim.fn.expand(arg), ":p"):gsub("/+$", "")
    local stat = vim.uv.fs_stat(path)
    if not stat then
      return nil, ("%s does not exist (:FiskInstall takes a fisk_ls-*.whl or a fisk-ls checkout)"):format(arg)
    end
    if stat.type == "directory" then
      if not M.is_source_tree(path) then
        return nil, ("%s is not a fisk-ls checkout (no pyproject.toml naming fisk-ls)"):format(path)
      end
      return { kind = "tree", path = path, label = path }
    end
    if not vim.fs.basename(path):match("^fisk_ls%-[^-]+%-.*%.whl$") then
      return nil, ("%s is not a fisk-ls wheel (fisk_ls-VERSION-...whl)"):format(path)
    end
    return { kind = "wheel", path = path, label = vim.fs.basename(path), stamp = ("wheel %s %d"):format(vim.fs.basename(path), stat.size) }
  end
  local repo = M.checkout()
  if repo then
    local head = git_head(repo)
    return { kind = "tree", path = repo, label = "the fisk-ls checkout " .. repo, stamp = head and ("checkout %s %s"):format(repo, head) }
  end
  return { kind = "pypi", label = "fisk-ls from PyPI" }
end

local function read_stamp(env)
  local f = io.open(vim.fs.joinpath(env.dir, M.STAMP), "r")
  if not f then
    return nil
  end
  local s = vim.trim(f:read("*a"))
  f:close()
  return s
end

local PIP = { "-m", "pip", "install", "--disable-pip-version-check", "--no-input" }

--- pip's step lines worth showing ("Collecting httpx", "Successfully installed ...").
---@param line string
---@return string?
function M.pip_step(line)
  local step = vim.trim(line)
  for _, word in ipairs({ "Collecting", "Downloading", "Using cached", "Building wheel", "Installing collected packages", "Successfully installed" }) do
    if vim.startswith(step, word) then
      return #step > 100 and (step:sub(1, 99) .. "…") or step
    end
  end
end

--- Progress of the current install (for tests and statuslines): the last step shown.
M.step = nil

-- A step of pip's output, shown in the command line (not kept in :messages).
local function show_step(line)
  local step = M.step_filter(line)
  if step then
    M.step = step
    pcall(vim.api.nvim_echo, { { "fisk: " .. step } }, false, {})
  end
end
M.step_filter = M.pip_step

--- Run pip steps one after the other in `python`'s environment; done(nil) or done(message).
---@param python string
---@param steps string[][] pip install arguments of each step
---@param done fun(err: string?)
function M.pip(python, steps, done)
  local i = 0
  local function next_step()
    i = i + 1
    if i > #steps then
      return done(nil)
    end
    local argv = vim.list_extend({ python }, PIP)
    M.run(vim.list_extend(argv, steps[i]), show_step, function(code, output)
      if code ~= 0 then
        return done(M.last_lines(output), output)
      end
      next_step()
    end)
  end
  next_step()
end

--- The running install, if any.
M.running = false

local function failed(msg, cb)
  M.running = false
  notify.error(msg)
  if cb then
    cb(msg)
  end
end

--- Point the plugin at the managed fisk-ls and (re)start the client for the open buffers.
---@param exe string
local function use(exe)
  local config = require("fisk.config")
  if config.cmd_given then
    notify.warn(("your setup() sets cmd = %s, so the plugin keeps it; set cmd = { %q } to use this install (or leave cmd out)")
      :format(vim.inspect(config.options.cmd), exe))
    return
  end
  config.options.cmd = { exe }
  require("fisk.lsp").restart(config.options)
end

---@class fisk.InstallOpts
---@field source? string a wheel or a fisk-ls folder (default: the checkout, else PyPI)
---@field force? boolean make the environment again from scratch
---@field wait? boolean return only when done (the command does when Neovim runs headless)
---@field python? string[] interpreter names to try (default python3, python)
---@field on_done? fun(err: string?, executable: string?)

--- Install fisk-ls into the managed environment, with progress, then use it.
---@param opts? fisk.InstallOpts
function M.install(opts)
  opts = opts or {}
  local cb = opts.on_done
  if M.running then
    return notify.warn("an install is already running")
  end
  local source, err = M.source(opts.source)
  if not source then
    return failed("cannot install fisk-ls: " .. err, cb)
  end
  local env = M.environment()
  local have = vim.fn.executable(env.executable) == 1
  if have and not opts.force and source.stamp and read_stamp(env) == source.stamp then
    notify.info(("fisk-ls is installed already from %s: %s (:FiskInstall! installs it again)"):format(source.label, env.executable))
    use(env.executable)
    return cb and cb(nil, env.executable)
  end
  local python, problem = M.find_python(opts.python)
  if not python then
    return failed(problem --[[@as string]], cb)
  end
  M.running, M.step = true, nil
  local done = false
  local function finish(ferr)
    done = true
    if ferr then
      return failed(("could not install fisk-ls from %s: %s. Or install fisk-ls yourself and set `cmd` in require(\"fisk\").setup()."):format(source.label, ferr), cb)
    end
    local f = io.open(vim.fs.joinpath(env.dir, M.STAMP), "w")
    if f then
      f:write((source.stamp or source.label) .. "\n")
      f:close()
    end
    M.running = false
    notify.info(("fisk-ls is installed: %s (from %s); starting it"):format(env.executable, source.label))
    use(env.executable)
    if cb then
      cb(nil, env.executable)
    end
  end

  local function install_wheel(wheel, label)
    notify.info(("installing %s and its dependencies…"):format(label))
    -- the dependencies first, then the package itself again: a wheel of the same version as the
    -- one installed would otherwise be "already satisfied" and left as it was
    M.pip(env.python, { { wheel }, { "--force-reinstall", "--no-deps", wheel } }, function(perr)
      if not perr and vim.fn.executable(env.executable) ~= 1 then
        perr = "pip finished, but " .. env.executable .. " is missing"
      end
      finish(perr and ("pip install failed: " .. perr))
    end)
  end

  local function after_venv()
    if source.kind == "wheel" then
      return install_wheel(source.path, source.label)
    elseif source.kind == "pypi" then
      notify.info("installing fisk-ls from PyPI…")
      return M.pip(env.python, { { "--upgrade", "fisk-ls" } }, function(perr)
        if perr and (perr:find("No matching distribution found for fisk%-ls") or perr:find("Could not find a version that satisfies the requirement fisk%-ls")) then
          perr = "fisk-ls is not on PyPI yet; give :FiskInstall a wheel (:FiskInstall ~/Downloads/fisk_ls-0.1.0-py3-none-any.whl) "
            .. "or a fisk-ls checkout (:FiskInstall ~/src/fisk-ls)"
        elseif perr then
          perr = "pip install failed: " .. perr
        end
        finish(perr)
      end)
    end
    -- a source tree: build its wheel outside the tree's own folders, then install that
    local out = vim.fn.tempname()
    notify.info(("building fisk-ls from %s…"):format(source.path))
    M.run({ env.python, "-m", "pip", "wheel", "--disable-pip-version-check", "--no-input", "--no-deps", "-w", out, source.path }, show_step, function(code, output)
      local wheel = code == 0 and vim.fn.glob(out .. "/fisk_ls-*.whl", true, true)[1]
      if not wheel then
        return finish("building the wheel failed: " .. M.last_lines(output))
      end
      install_wheel(wheel, vim.fs.basename(wheel))
    end)
  end

  if opts.force then
    vim.fn.delete(env.dir, "rf")
  end
  if vim.fn.executable(env.python) == 1 then
    notify.info(("updating fisk-ls in %s…"):format(env.dir))
    after_venv()
  else
    vim.fn.delete(env.dir, "rf")
    vim.fn.mkdir(vim.fs.dirname(env.dir), "p")
    notify.info(("setting up fisk-ls in %s with Python %s (%s)…"):format(env.dir, python.version, python.path))
    M.run({ python.path, "-m", "venv", env.dir }, nil, function(code, output)
      if code ~= 0 then
        return finish(("%s -m venv failed: %s"):format(python.path, M.last_lines(output)))
      end
      after_venv()
    end)
  end
  if opts.wait then
    vim.wait(30 * 60 * 1000, function()
      return done
    end, 100)
  end
end

--- :FiskInstall[!] [wheel or folder]
---@param arg string
---@param bang boolean
function M.command(arg, bang)
  M.install({ source = arg, force = bang, wait = #vim.api.nvim_list_uis() == 0 })
end

return M
