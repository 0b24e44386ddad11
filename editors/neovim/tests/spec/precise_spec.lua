-- Precise results against the real server: quickfix entries on the matched lines (lnum, col,
-- end_lnum) of a paragraph deep in a section, the matched words marked, near-duplicate copies in
-- the quickfix list with :FiskSearch!, vim.ui.select labels, the jump's highlight, and the
-- snippets' byte ranges.
local H = dofile(vim.fs.dirname(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2))) .. "/helpers.lua")

local paragraphs = {
  "The service keeps a small amount of state in memory and on disk.",
  "",
  "Operators normally never need to touch it during daily work.",
  "",
  "Logs rotate every night and are kept for two weeks by default.",
  "",
  "To drain a frobnicator before a restart, cordon it first",
  "and wait for its queue to empty completely.",
  "",
  "Afterwards the node rejoins the cluster on its own.",
}
-- The widgets pages say the matched paragraph in other words than ops.md: the same paragraph
-- under the same heading would be one result with ops.md (a repeated paragraph folds).
local widget_paragraphs = vim.deepcopy(paragraphs)
widget_paragraphs[8] = "and wait for its queue to empty entirely."
local page = H.lines("# Widgets", "", "## Restarts", "", widget_paragraphs)
local root = H.workspace({
  ["ops.md"] = H.lines("# Operations", "", "## Restarts", "", paragraphs),
  -- three versioned copies of one page: they differ only in a link target
  ["v1/widgets.md"] = H.lines(page, "", "See [the notes](https://example.invalid/v1/notes)."),
  ["v2/widgets.md"] = H.lines(page, "", "See [the notes](https://example.invalid/v2/notes)."),
  ["v3/widgets.md"] = H.lines(page, "", "See [the notes](https://example.invalid/v3/notes)."),
  ["notes.md"] = H.lines("# Notes", "", "Unrelated text about 𠮷野家 and a frobnicator."),
})
local ops = root .. "/ops.md"

H.run("precise_spec", function()
  vim.cmd.cd(root)
  local client
  H.test("setup and index", function()
    require("fisk").setup()
    require("fisk.location").flash_ms = 600000 -- the highlight is checked, not its timer
    vim.cmd.edit(ops)
    client = H.client(0)
    H.wait_indexed(client)
  end)
  if not client then
    return
  end

  local function search(query)
    local result
    require("fisk.api").search(query, {}, function(err, r)
      result = err and { error = err } or r
    end)
    H.wait(15000, function()
      return result
    end, "search " .. query)
    H.assert(not result.error, result.error)
    return require("fisk.picker").items(result.results)
  end

  local drain = H.line_of(ops, "To drain a frobnicator")

  H.test(":FiskSearch! lands on the 4th paragraph: lnum, col and end_lnum of the matched lines", function()
    local e
    for _, entry in ipairs(H.search_qf("drain frobnicator restart")) do
      e = e or (entry.filename == ops and entry) or nil
    end
    H.assert(e, "ops.md is in the quickfix list")
    H.eq(drain, e.lnum, "lnum: the paragraph's first line, not the section's heading")
    H.eq(4, e.col, "col: on the first matched word (To «drain»)")
    H.eq(drain + 1, e.end_lnum, "end_lnum: the paragraph's last line")
    H.match(e.text, "^Operations > Restarts │ To «drain» a «frobnicator» before a «restart»", "text")
    H.eq(nil, e.user_data.copy_of, "not a copy")
  end)

  H.test(":FiskSearch! adds a result's near-identical copies after it", function()
    local qf = H.search_qf("drain frobnicator restart")
    local at
    for i, e in ipairs(qf) do
      if e.filename:match("/v%d/widgets%.md$") and not e.user_data.copy_of then
        at = i
        break
      end
    end
    H.assert(at, "a widgets.md result: " .. vim.inspect(qf))
    local main, copies = qf[at], { qf[at + 1], qf[at + 2] }
    local files = { [main.filename] = true }
    for _, c in ipairs(copies) do
      H.assert(c and c.user_data.copy_of == main.user_data.citation, "a copy follows its result: " .. vim.inspect(c))
      H.match(c.filename, "/v%d/widgets%.md$", "a copy's file")
      H.eq(main.lnum, c.lnum, "a copy's lnum (same layout)")
      H.eq(main.end_lnum, c.end_lnum, "a copy's end_lnum")
      H.eq(4, c.col, "a copy's col: on the same word")
      H.match(c.text, "^%(copy of v%d/widgets%.md%) Widgets > Restarts │", "a copy's text")
      files[c.filename] = true
    end
    H.eq(3, vim.tbl_count(files), "three different files")
    local widgets = vim.tbl_filter(function(e)
      return e.filename:match("/v%d/widgets%.md$") ~= nil
    end, qf)
    H.eq(3, #widgets, "each copy once")
  end)

  H.test("vim.ui.select shows the section, relpath:line, 'also in N files' and the marked snippet", function()
    vim.cmd("only")
    vim.cmd.edit(root .. "/notes.md")
    local labels, chosen
    local orig = vim.ui.select
    vim.ui.select = function(items, opts, on_choice)
      labels = vim.tbl_map(opts.format_item, items)
      for _, item in ipairs(items) do
        chosen = chosen or (item.filename == ops and item) or nil
      end
      on_choice(chosen)
    end
    vim.cmd("FiskSearch drain frobnicator restart")
    H.wait(15000, function()
      return vim.api.nvim_buf_get_name(0) == ops
    end, "the jump to ops.md")
    vim.ui.select = orig
    local copy_label = vim.tbl_filter(function(l)
      return l:find("widgets.md:", 1, true) ~= nil
    end, labels)[1]
    H.match(copy_label or "", "^Widgets > Restarts  v%d/widgets%.md:%d+ %(also in 2 files%)  To «drain» a «frobnicator»", "label of the copies")
    local label = vim.tbl_filter(function(l)
      return l:find("ops.md:", 1, true) ~= nil
    end, labels)[1]
    H.eq(("Operations > Restarts  ops.md:%d  To «drain» a «frobnicator» before a «restart», cordon it first and wait for its queue to empty completely."):format(drain), label, "label")
    H.eq({ drain, 4 }, { vim.fn.line("."), vim.fn.col(".") }, "cursor on the first matched word")
    local ns = vim.api.nvim_get_namespaces()["fisk.cited"]
    local marks = vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true })
    H.eq(1, #marks, "one highlight")
    H.eq({ drain - 1, drain }, { marks[1][2], marks[1][4].end_row }, "the matched lines are highlighted, not the chunk")
  end)

  H.test(":FiskSearch! col is a byte column after multibyte text (𠮷 is 4 bytes, 2 UTF-16 units)", function()
    local notes = root .. "/notes.md"
    local e = vim.tbl_filter(function(entry)
      return entry.filename == notes
    end, H.search_qf("frobnicator"))[1]
    H.assert(e, "notes.md is in the quickfix list")
    local line = vim.fn.readfile(notes)[e.lnum]
    H.eq(line:find("frobnicator", 1, true), e.col, "col (" .. client.offset_encoding .. ")")
    -- the same word given in UTF-16 and UTF-32 units, as a client with that encoding gets it
    local link = { targetUri = vim.uri_from_fname(notes), targetSelectionRange = {
      start = { line = e.lnum - 1, character = 32 }, ["end"] = { line = e.lnum, character = 0 } } }
    H.eq(e.col, require("fisk.location").col(link, "utf-16"), "col from UTF-16 units")
    link.targetSelectionRange.start.character = 31
    H.eq(e.col, require("fisk.location").col(link, "utf-32"), "col from code points")
    link.targetSelectionRange.start.character = 0
    H.eq(1, require("fisk.location").col(link, "utf-16"), "col at a line start")
  end)

  local items = search("drain frobnicator restart")
  local item = vim.tbl_filter(function(i)
    return i.filename == ops
  end, items)[1]

  H.test("the item: matched lines, the chunk, spans of the matched words in the plain snippet", function()
    H.eq({ drain, drain + 1 }, { item.lnum, item.end_lnum }, "lnum, end_lnum")
    H.assert(item.chunk[1] < drain and item.chunk[2] >= drain + 1, "the chunk holds the lines: " .. vim.inspect(item.chunk))
    local words = vim.tbl_map(function(s)
      return item.snippet:sub(s[1] + 1, s[2])
    end, item.spans)
    H.eq({ "drain", "frobnicator", "restart" }, words, "spans")
    H.eq({}, item.copies, "no copies")
  end)

  H.test("a result of an older server lists its copies under `also`; `copies` wins when both are sent", function()
    local picker = require("fisk.picker")
    local link = function(path, line)
      local range = { start = { line = line, character = 0 }, ["end"] = { line = line + 1, character = 0 } }
      return { targetUri = vim.uri_from_fname(path), targetRange = range, targetSelectionRange = range }
    end
    local copy = { citation = "v2/a.md#0", location = link("/tmp/site/v2/a.md", 4) }
    local old = { citation = "v1/a.md#0", section = "A", snippet = "x", location = link("/tmp/site/v1/a.md", 2), also = { copy } }
    local items = picker.items({ old })
    H.eq({ "v2/a.md#0" }, vim.tbl_map(function(c)
      return c.citation
    end, items[1].copies), "copies read from also")
    H.eq("also in 1 file", picker.copies_text(items[1]), "its words")
    old.copies = {}
    H.eq({}, picker.items({ old })[1].copies, "copies, even empty, is a current server's answer")
  end)

  H.test("snippets: code points map to bytes (CJK beyond the BMP), bad ranges are ignored, cuts keep words whole", function()
    local snippet = require("fisk.snippet")
    local r = snippet.render("𠮷野家 and a frobnicator", { { 0, 3 }, { 10, 21 } }, 120)
    H.eq("«𠮷野家» and a «frobnicator»", r.marked, "marked")
    H.eq({ "𠮷野家", "frobnicator" }, vim.tbl_map(function(s)
      return r.plain:sub(s[1] + 1, s[2])
    end, r.spans), "spans are byte ranges in plain")
    H.eq("«abc»defgh", snippet.render("abcdefgh", { { 5, 99 }, { 3, 1 }, { 0.5, 2 }, { 0, 3 }, { 1, 3 }, "x" }, 120).marked, "bad ranges")
    H.eq("Run «pip» «install»", snippet.render("  Run\n\tpip   install  ", { { 7, 10 }, { 13, 20 } }, 120).marked, "whitespace")
    local text = "alpha beta gamma delta epsilon zeta"
    H.eq("alpha beta «gamma»…", snippet.render(text, { { 11, 22 } }, 24).marked, "a marked run cut between words")
    H.eq("alpha beta…", snippet.render(text, { { 11, 22 } }, 18).marked, "never half a matched word")
    H.eq("", snippet.render(nil, nil, 10).marked, "no snippet")
  end)
end)
