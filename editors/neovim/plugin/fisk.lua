-- :FiskSearch, :FiskShow, :FiskReindex, :FiskStatus, :FiskInstall, :FiskSemantic. Modules load on first use.
if vim.g.loaded_fisk or vim.fn.has("nvim-0.10") == 0 then
  return
end
vim.g.loaded_fisk = true

local function commands()
  return require("fisk.commands")
end

local command = vim.api.nvim_create_user_command
command("FiskSearch", function(a)
  commands().search_command(a.fargs, a.bang)
end, {
  nargs = "*",
  bang = true,
  complete = function(arglead)
    return commands().complete_search(arglead)
  end,
  desc = "fisk: search the docs (! = quickfix list; path={dir} keeps it to a folder, path=%:h: this buffer's)",
})
command("FiskShow", function(a)
  commands().show(a.args)
end, {
  nargs = "?",
  complete = function(arglead)
    return commands().complete_citation(arglead)
  end,
  desc = "fisk: open the lines a citation points to",
})
command("FiskReindex", function(a)
  commands().reindex(a.bang)
end, { nargs = 0, bang = true, desc = "fisk: update the index (! = rebuild)" })
command("FiskStatus", function()
  commands().status()
end, { nargs = 0, desc = "fisk: index status" })
command("FiskInstall", function(a)
  require("fisk.install").command(a.args, a.bang)
end, {
  nargs = "?",
  bang = true,
  complete = "file",
  desc = "fisk: install the fisk-ls server into an environment of the plugin's own (! = from scratch)",
})
command("FiskSemantic", function()
  require("fisk.semantic").enable()
end, { nargs = 0, desc = "fisk: turn on semantic search with the built-in model (installs it into the server's environment)" })
