-- No server needed: the plugin file, :help, option validation, and errors outside a project.
local H = dofile(vim.fs.dirname(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2))) .. "/helpers.lua")

local commands = { "FiskSearch", "FiskShow", "FiskReindex", "FiskStatus", "FiskInstall", "FiskSemantic" }

H.run("docs_spec", function()
  H.test("plugin/fisk.lua defines the commands without loading the plugin", function()
    local defined = vim.api.nvim_get_commands({})
    for _, name in ipairs(commands) do
      H.assert(defined[name], name .. " is not defined")
    end
    for name in pairs(package.loaded) do
      H.assert(not vim.startswith(name, "fisk"), name .. " was loaded at startup")
    end
    H.eq(true, defined.FiskSearch.bang, ":FiskSearch takes a bang")
    H.eq(true, defined.FiskReindex.bang, ":FiskReindex takes a bang")
  end)

  H.test(":help has a tag for the plugin, each command, setup and health", function()
    local dir = vim.fn.tempname()
    vim.fn.mkdir(dir .. "/doc", "p")
    vim.fn.writefile(vim.fn.readfile(H.plugin_dir .. "/doc/fisk.txt"), dir .. "/doc/fisk.txt")
    vim.cmd("helptags " .. vim.fn.fnameescape(dir .. "/doc")) -- raises on duplicate tags
    vim.opt.runtimepath:append(dir)
    local tags = { "fisk", "fisk-setup", "fisk-settings", "fisk-pickers", "fisk-health", "fisk-citations", "fisk.setup()" }
    for _, name in ipairs(commands) do
      tags[#tags + 1] = ":" .. name
    end
    for _, tag in ipairs(tags) do
      vim.cmd("help " .. tag)
      H.eq("help", vim.bo.filetype, "filetype after :help " .. tag)
      H.match(vim.fn.expand("%:t"), "^fisk%.txt$", ":help " .. tag .. " opens fisk.txt")
      vim.cmd("helpclose")
    end
  end)

  local repo = vim.fs.dirname(vim.fs.dirname(H.plugin_dir))
  local function git(args)
    return vim.system(vim.list_extend({ "git", "-C", repo }, args), { text = true }):wait()
  end
  local in_git = vim.fn.executable("git") == 1 and git({ "rev-parse", "--git-dir" }).code == 0

  H.test("doc/tags, the one file :helptags writes into the plugin, is git-ignored", function()
    if not in_git then
      return H.skip("not a git checkout")
    end
    H.eq(0, git({ "check-ignore", "-q", "--no-index", "editors/neovim/doc/tags" }).code, "git check-ignore")
  end)

  H.test("the README's packadd copy recipe installs a working copy and leaves the checkout clean", function()
    if not in_git then
      return H.skip("not a git checkout")
    end
    local readme = table.concat(vim.fn.readfile(H.plugin_dir .. "/README.md"), "\n")
    local section = readme:match("### Built%-in packages.-```sh\n(.-)```")
    H.assert(section, "the README has the packadd recipe")
    local data = vim.fn.tempname()
    local script = section:gsub("~/src/fisk%-ls", repo):gsub("~/%.local/share", data)
      :gsub("\nnvim ", "\n" .. vim.v.progpath .. " ")
    local before = git({ "status", "--porcelain", "--", "editors/neovim" }).stdout
    local run = vim.system({ "sh", "-ec", script }, { text = true }):wait()
    H.eq(0, run.code, "the recipe runs: " .. script .. (run.stderr or ""))
    local pack = data .. "/nvim/site/pack/fisk/opt/fisk.nvim"
    H.assert(vim.uv.fs_stat(pack .. "/plugin/fisk.lua"), "the copy has plugin/fisk.lua")
    H.assert(vim.uv.fs_stat(pack .. "/doc/tags"), "the copy has its help tags")
    local child = vim.system({ vim.v.progpath, "--headless", "-u", "NONE", "-i", "NONE", "-n",
      "--cmd", "set packpath^=" .. data .. "/nvim/site", "-c", "packadd fisk.nvim", "-c", "help fisk",
      "-c", "lua io.stdout:write(vim.fn.exists(':FiskSearch'), ' ', vim.fn.expand('%:p'))", "-c", "qa!" },
      { text = true }):wait()
    H.eq("2 " .. vim.uv.fs_realpath(pack .. "/doc/fisk.txt"), vim.trim(child.stdout), "packadd + :help fisk")
    H.eq(before, git({ "status", "--porcelain", "--", "editors/neovim" }).stdout, "git status of editors/neovim")
    vim.fn.delete(data, "rf")
  end)

  H.test("a picker whose adapter was removed: one warning, and vim.ui.select", function()
    local from = #H.notes
    require("fisk").setup({ picker = "telescope", cmd = { "true" } })
    H.eq("select", require("fisk.config").options.picker, "picker")
    H.match(H.notes_text(from), "picker = \"telescope\" is no longer a choice: results open with vim%.ui%.select, which telescope%-ui%-select makes", "warning")
  end)

  H.test("setup() rejects a wrong option with a message naming it", function()
    local ok, err = pcall(require("fisk").setup, { picker = "ranger" })
    H.eq(false, ok, "setup succeeded")
    H.match(err, "^fisk%.setup: `picker` must be one of auto, select, got \"ranger\"", "message")
    ok, err = pcall(require("fisk").setup, { cmd = {} })
    H.eq(false, ok, "setup succeeded")
    H.match(err, "`cmd` must not be empty", "message")
    ok, err = pcall(require("fisk").setup, { root_markers = ".git" })
    H.eq(false, ok, "setup succeeded")
    H.match(err, "`root_markers` must be a table, got string", "message")
  end)

  H.test("a command from the home directory, with no root marker, says there is no project root", function()
    local dir = vim.uv.fs_realpath(vim.fs.dirname(vim.fn.tempname())) .. "/no-project"
    vim.fn.mkdir(dir, "p")
    vim.env.HOME = dir
    vim.cmd.cd(dir)
    local from = #H.notes
    vim.cmd("FiskSearch! anything")
    local n = H.wait(5000, function()
      return H.note("^fisk: ", from)
    end, "an error")
    H.eq(vim.log.levels.ERROR, n.level, "level")
    H.match(n.msg, "no project root: no agent%.yaml or %.git in " .. vim.pesc(dir) .. " or above, and the home directory is not indexed", "message")
    H.eq(0, #vim.lsp.get_clients(), "clients started")
  end)
end)
