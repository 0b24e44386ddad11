-- The settings contract has one validator, the server: setup() passes `settings` to it as they
-- are, and its one message naming every bad setting is shown through vim.notify (fisk.notify).
-- Against the real fisk-ls server.
local H = dofile(vim.fs.dirname(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2))) .. "/helpers.lua")

local pad = H.filler(400)
local root = H.workspace({
  ["docs/wombats.md"] = H.lines("# Wombats", "", "## Burrows", "", "A wombat digs long burrows.", pad),
  ["docs/koalas.md"] = H.lines("# Koalas", "", "## Sleep", "", "A wombat visits a koala that sleeps.", pad),
  ["other/notes.md"] = { "# Other", "", "A wombat was seen outside the docs folder." },
})

H.run("contract_spec", function()
  local config = require("fisk.config")

  H.test("setup() passes the server's settings as they are and checks none of them", function()
    local settings = {
      topK = 30,
      paths = "docs",
      embeddings = { baseUrl = "http://x/v1", timeout = 0 },
      expansion = { provider = "ollama" },
      future = 1,
    }
    local from = #H.notes
    local opts = config.setup({ settings = vim.deepcopy(settings), top_k = 50 })
    H.eq(settings, opts.settings, "settings untouched")
    H.eq(50, opts.top_k, "top_k goes to the server as it is (its limit is the server's)")
    H.eq(from, #H.notes, "no message from the plugin")
    local ok, err = pcall(config.setup, { top_k = "five" })
    H.assert(not ok, "a plugin option of the wrong type is an error")
    H.match(err, "`top_k` must be a number or boolean, got string", "message")
    config.setup({})
  end)

  H.test("a bad setting reaches the server: it keeps its default and names every bad one in one message, shown by vim.notify", function()
    local from = #H.notes
    require("fisk").setup({ cmd = { H.fisk_ls }, settings = { topK = 30, watch = "yes", paths = { "docs" } } })
    vim.cmd.cd(root)
    vim.cmd.edit(root .. "/docs/wombats.md")
    local client = H.client(0)
    local note = H.wait(30000, function()
      return H.note("invalid settings", from)
    end, "the server's settings message; got: " .. H.notes_text(from))
    H.eq("fisk: ignoring invalid settings, using defaults for: fisk.topK (expected an integer from 1 to 20, got 30); "
      .. "fisk.watch (expected true or false, got 'yes')", note.msg, "the server's words, once prefixed")
    H.eq(vim.log.levels.WARN, note.level, "level")
    H.wait_indexed(client)
    local n = 0
    for i = from + 1, #H.notes do
      n = n + (H.notes[i].msg:find("invalid settings", 1, true) and 1 or 0)
    end
    H.eq(1, n, "one message: " .. H.notes_text(from))
    local qf = H.search_qf("wombat")
    H.assert(#qf >= 2 and #qf <= 5, "the bad topK keeps the default 5: " .. #qf)
    for _, e in ipairs(qf) do
      H.match(e.filename, "/docs/", "the good setting applies: only docs/ is indexed")
    end
  end)

  H.test(":FiskStatus lines show the embedding coverage of a hybrid root, nothing for a lexical one", function()
    local lines = require("fisk.commands").status_lines({
      tier = "hybrid (m, 384d)",
      indexing = false,
      roots = {
        { root = "/a", store = "/s/a", documents = 40, chunks = 6628, vectors = { embedded = 2310, chunks = 6628 } },
        { root = "/b", store = "/s/b", documents = 2, chunks = 9, vectors = vim.NIL },
        { root = "/c", store = "/s/c", documents = 1, chunks = 3 },
      },
    })
    H.eq("tier: hybrid (m, 384d); 2,310/6,628 chunks embedded", lines[1], "summary")
    H.eq("/a: 40 documents, 6,628 chunks, 2,310/6,628 embedded (store /s/a)", lines[2], "hybrid root")
    H.eq("/b: 2 documents, 9 chunks (store /s/b)", lines[3], "lexical root (null)")
    H.eq("/c: 1 documents, 3 chunks (store /s/c)", lines[4], "lexical root (absent)")
    local done = require("fisk.commands").status_lines({
      tier = "hybrid",
      roots = { { root = "/a", documents = 1, chunks = 5, vectors = { embedded = 5, chunks = 5 } } },
    })
    H.eq("tier: hybrid", done[1], "no summary when every chunk is embedded")
    local told = require("fisk.commands").status_lines({
      tier = "hybrid (m, 384d); 1 of 5 chunks embedded",
      roots = { { root = "/a", documents = 1, chunks = 5, vectors = { embedded = 1, chunks = 5 } } },
    })
    H.eq("tier: hybrid (m, 384d); 1 of 5 chunks embedded", told[1], "the tier line's own coverage is not repeated")
    H.eq("/a: 1 documents, 5 chunks, 5/5 embedded (store ?)", done[2], "complete root")
  end)
end)
