-- Neovim 0.11+: vim.lsp.enable("fisk_ls") alone, without setup(), uses the shipped lsp/fisk_ls.lua.
local H = dofile(vim.fs.dirname(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2))) .. "/helpers.lua")

local root = H.workspace({ ["notes/tapirs.md"] = { "# Tapirs", "", "## Snout", "", "A tapir has a short prehensile snout." } })

H.run("native_enable_spec", function()
  if vim.fn.has("nvim-0.11") == 0 then
    return -- vim.lsp.enable does not exist before 0.11
  end
  vim.cmd.cd(root)

  H.test('vim.lsp.enable("fisk_ls") without setup() attaches with the default config', function()
    vim.lsp.enable("fisk_ls")
    vim.cmd.edit(root .. "/notes/tapirs.md")
    local client = H.client(0)
    H.eq({ "fisk-ls" }, client.config.cmd, "cmd")
    H.eq(root, vim.uv.fs_realpath(client.root_dir), "root_dir")
    H.wait_indexed(client)
  end)

  H.test("the commands use that client", function()
    local qf = H.search_qf("prehensile")
    H.eq(root .. "/notes/tapirs.md", qf[1].filename, "result file")
    -- the part that matched is "## Snout" with its paragraph; the entry starts on the matched word
    H.eq(H.line_of(root .. "/notes/tapirs.md", "A tapir has"), qf[1].lnum, "lnum (the matched word's line)")
    H.eq(H.line_of(root .. "/notes/tapirs.md", "A tapir has"), qf[1].end_lnum, "end_lnum")
  end)
end)
