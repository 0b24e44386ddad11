-- Options reach the server: an explicit cmd, and settings as initializationOptions / settings.fisk.
local H = dofile(vim.fs.dirname(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2))) .. "/helpers.lua")

local pad = H.filler(400)
local root = H.workspace({
  ["docs/wombats.md"] = H.lines(
    "# Wombats", "", "## Burrows", "", "A wombat digs long burrows.", pad, "",
    "## Diet", "", "A wombat eats grasses and roots.", pad, "",
    "## Droppings", "", "The wombat leaves cube-shaped droppings.", pad
  ),
  ["docs/koalas.md"] = H.lines("# Koalas", "", "## Sleep", "", "A koala sleeps up to twenty hours a day.", pad),
  ["other/notes.md"] = { "# Other", "", "A wombat was seen outside the docs folder." },
})
local settings = { paths = { "docs" }, topK = 2, watch = false }

H.run("settings_spec", function()
  vim.cmd.cd(root)
  local client

  H.test("setup() with an explicit cmd and settings starts the client with them", function()
    require("fisk").setup({ cmd = { H.fisk_ls }, settings = settings })
    vim.cmd.edit(root .. "/docs/wombats.md")
    client = H.client(0)
    H.eq({ H.fisk_ls }, client.config.cmd, "cmd")
    H.eq(settings, client.config.init_options, "initializationOptions")
    H.eq(settings, client.settings.fisk, "settings.fisk")
  end)
  if not client then
    return
  end
  local status = H.wait_indexed(client)

  H.test("settings.paths limits what the server indexes", function()
    H.eq(2, status.roots[1].documents, "documents (only docs/ is indexed): " .. vim.inspect(status))
  end)

  H.test("settings.topK limits the number of results", function()
    local qf = H.search_qf("wombat")
    H.eq(2, #qf, "results")
    for _, e in ipairs(qf) do
      H.eq(root .. "/docs/wombats.md", e.filename, "result file")
    end
  end)

  H.test("a search request with top_k outside the server's limit is an error naming the limit", function()
    for _, case in ipairs({ { 50, false }, { 20, true } }) do
      local done, err, res
      require("fisk.api").search("wombat", { top_k = case[1] }, function(e, r)
        done, err, res = true, e, r
      end)
      H.wait(10000, function()
        return done
      end, "the search to answer")
      if case[2] then
        H.eq(nil, err, "top_k 20 is fine")
        H.eq("ok", res.status, "status")
      else
        H.match(tostring(err), "topK: expected an integer from 1 to 20, got 50", "error for top_k 50")
      end
    end
  end)

  H.test(":FiskShow of a file changed on disk (watch off) opens where the text moved and warns", function()
    local koalas = root .. "/docs/koalas.md"
    local citation = H.search_qf("koala sleeps")[1].user_data.citation
    vim.fn.writefile(vim.list_extend({ "# Koalas", "", "Three new lines", "were added", "above the section." },
      vim.list_slice(vim.fn.readfile(koalas), 2)), koalas)
    local from = #H.notes
    vim.cmd("FiskShow " .. citation)
    local n = H.wait(10000, function()
      return H.note("changed since it was indexed", from)
    end, "a stale warning; got: " .. H.notes_text(from))
    H.eq(vim.log.levels.WARN, n.level, "level")
    H.eq(koalas, vim.api.nvim_buf_get_name(0), "opened file")
    H.eq(H.line_of(koalas, "## Sleep"), vim.fn.line("."), "cursor on the moved section")
  end)
end)
