-- Hybrid search whose embeddings server goes away: search still answers (lexically) and the
-- degraded tier is told once, with the reason. The embeddings server is a small HTTP stand-in
-- run inside the test's nvim (helpers.embeddings_server), not a replacement for anything of ours.
local H = dofile(vim.fs.dirname(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2))) .. "/helpers.lua")

local pad = H.filler(400)
local root = H.workspace({
  ["docs/birds.md"] = H.lines(
    "# Birds", "", "## Kea", "", "The kea is an alpine parrot.", pad, "",
    "## Kakapo", "", "The kakapo is a flightless nocturnal parrot.", pad
  ),
})
local WARN = vim.log.levels.WARN

H.run("degraded_spec", function()
  vim.cmd.cd(root)
  local emb = H.embeddings_server()
  require("fisk").setup({ settings = { embeddings = { baseUrl = emb.url, model = "test-embedder" } } })
  vim.cmd.edit(root .. "/docs/birds.md")
  local client = H.client(0)
  local status = H.wait_indexed(client)

  H.test("with the embeddings server up the index is hybrid and nothing is degraded", function()
    H.assert(emb.requests() > 0, "the server never asked for embeddings")
    H.match(status.tier, "hybrid", "tier")
    H.eq(root .. "/docs/birds.md", H.search_qf("alpine parrot")[1].filename, "result file")
    H.eq(nil, H.note("degraded"), "degraded warning while healthy")
  end)

  H.test(":FiskStatus shows every chunk embedded (when the server reports vector coverage)", function()
    local s = H.wait(30000, function()
      local r = require("fisk.lsp").request_sync(client, "workspace/executeCommand",
        { command = "fisk.knowledge.status", arguments = {} }, 5000)
      local st = r and r.result
      local v = st and st.roots[1].vectors
      if st and v == nil then
        return st -- a server without the field
      end
      return st and type(v) == "table" and v.embedded == v.chunks and v.chunks > 0 and st
    end, "the backlog to drain")
    local v = s.roots[1].vectors
    if v == nil then
      return H.skip("this fisk-ls reports no vector coverage (roots[].vectors)")
    end
    H.eq(s.roots[1].chunks, v.chunks, "vectors.chunks is the root's chunk count")
    local from = #H.notes
    vim.cmd("FiskStatus")
    local n = H.wait(10000, function()
      return H.note("^fisk: tier: ", from)
    end, "a status notification; got: " .. H.notes_text(from))
    H.match(n.msg, ("%d documents, %d chunks, %d/%d embedded"):format(s.roots[1].documents, v.chunks, v.chunks, v.chunks),
      "coverage in :FiskStatus: " .. n.msg)
  end)

  H.test("when it goes down, search still answers and warns once with the reason", function()
    emb.stop()
    local from = #H.notes
    local qf = H.search_qf("flightless nocturnal", 30000)
    H.eq(root .. "/docs/birds.md", qf[1].filename, "result file")
    H.eq(H.line_of(root .. "/docs/birds.md", "The kakapo is"), qf[1].lnum, "result line (the matched paragraph)")
    local n = H.wait(5000, function()
      return H.note("^fisk: search is degraded", from)
    end, "a degraded warning; got: " .. H.notes_text(from))
    H.eq(WARN, n.level, "level")
    H.match(n.msg, "^fisk: search is degraded %(.+%)", "the reason")
    H.search_qf("alpine", 30000)
    local count = 0
    for _, note in ipairs(H.notes) do
      count = count + (note.msg:find("^fisk: search is degraded") and 1 or 0)
    end
    H.eq(1, count, "degraded warnings after two searches")
  end)

  H.test(":checkhealth fisk shows the reason as a warning", function()
    vim.cmd("checkhealth fisk")
    local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
    H.match(text, "WARNING the last search ran degraded: [^\n]*127%.0%.0%.1", "health report:\n" .. text)
    H.match(text, "OK embeddings tier: hybrid", "health report:\n" .. text)
  end)
end)
