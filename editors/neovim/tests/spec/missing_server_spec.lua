-- A server that is not installed, or that dies at once, gives a clear message instead of silence.
local H = dofile(vim.fs.dirname(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2))) .. "/helpers.lua")

local root = H.workspace({ ["docs/a.md"] = { "# A", "", "Some text about lemurs." } })
local ERROR = vim.log.levels.ERROR

H.run("missing_server_spec", function()
  vim.cmd.cd(root)

  H.test("setup() with a server that is not installed reports it once, clearly", function()
    require("fisk").setup({ cmd = { "fisk-ls-not-installed" } })
    local n = H.note("fisk%-ls%-not%-installed")
    H.assert(n, "no notification; got: " .. H.notes_text())
    H.eq(ERROR, n.level, "level")
    H.match(n.msg, "^fisk: cannot start the language server: `fisk%-ls%-not%-installed` was not found", "message")
    H.match(n.msg, "`pipx install %-%-force %.` in a checkout of the fisk%-ls repository", "the fix")
  end)

  H.test("opening a markdown file then starts nothing and adds no other message", function()
    local from = #H.notes
    vim.cmd.edit(root .. "/docs/a.md")
    vim.wait(500)
    H.eq(0, #vim.lsp.get_clients({ name = "fisk_ls" }), "fisk_ls clients")
    H.eq("", H.notes_text(from), "notifications")
  end)

  H.test(":FiskSearch! names the missing executable", function()
    local from = #H.notes
    vim.cmd("FiskSearch! lemurs")
    local n = H.wait(5000, function()
      return H.note("^fisk: ", from)
    end, "an error")
    H.eq(ERROR, n.level, "level")
    H.match(n.msg, "^fisk: search failed: cannot start the language server: `fisk%-ls%-not%-installed`", "message")
  end)

  H.test(":checkhealth fisk reports the missing server as an ERROR", function()
    vim.cmd("checkhealth fisk")
    local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
    H.match(text, "ERROR[^\n]*`fisk%-ls%-not%-installed` was not found", "health report:\n" .. text)
    vim.cmd("tabclose")
  end)

  H.test("a server that exits at start gives an error naming it and the log", function()
    require("fisk").setup({ cmd = { "sh", "-c", "exit 3" } })
    vim.cmd.edit(root .. "/docs/a.md")
    local from = #H.notes
    vim.cmd("FiskStatus")
    local n = H.wait(15000, function()
      return H.note("^fisk: status failed", from)
    end, "an error; got: " .. H.notes_text(from))
    H.eq(ERROR, n.level, "level")
    H.match(n.msg, "`sh` exited before it was ready; see :LspLog", "message")
  end)
end)
