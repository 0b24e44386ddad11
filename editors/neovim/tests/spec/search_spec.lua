-- The main flow against the real server: setup() with no options, search to quickfix and to the
-- picker, :FiskShow, citations with gd / K, edit + :w + search, :FiskStatus, :FiskReindex[!].
local H = dofile(vim.fs.dirname(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2))) .. "/helpers.lua")

-- Every section is long enough to be a chunk of its own, so cited lines are section lines.
local pad = H.filler(400)
local root = H.workspace({
  ["docs/guide.md"] = H.lines(
    "# Guide", "", "Welcome to the project guide.", pad, "",
    "## Installation", "", "Install the tool with pip. The zebrafish installer also runs offline.", pad, "",
    "## Configuration", "", "Settings live in agent.yaml. Tune the quokka parameter for speed.", pad
  ),
  ["docs/animals.md"] = H.lines(
    "# Animals", "", "Some notes about animals.", pad, "",
    "## Zebrafish", "", "The zebrafish is a small freshwater fish used in research.",
    "It regenerates its heart after injury.", pad, "",
    "## Axolotl", "", "The axolotl is a salamander that keeps its larval features.", pad
  ),
  ["notes/meeting.md"] = H.lines("# Meeting notes", "", "## Decisions", "", "We chose the quokka logo. Nobody objected.", pad),
})
local animals, guide, meeting = root .. "/docs/animals.md", root .. "/docs/guide.md", root .. "/notes/meeting.md"

H.run("search_spec", function()
  vim.cmd.cd(root)
  local client

  H.test("setup() with no options attaches fisk_ls to a markdown buffer", function()
    require("fisk").setup()
    vim.cmd.edit(guide)
    client = H.client(0)
    H.eq(root, vim.uv.fs_realpath(client.root_dir), "root_dir (from the .git marker)")
    H.eq("markdown", vim.bo.filetype, "filetype")
  end)
  if not client then
    return
  end

  H.test("indexing progress arrives through LspProgress and vim.notify", function()
    H.wait_indexed(client)
    local kinds = vim.tbl_map(function(v)
      return v.kind
    end, H.progress)
    H.eq("begin", kinds[1], "first progress kind")
    H.assert(vim.tbl_contains(kinds, "end"), kinds)
    H.match(H.progress[1].title, "Index", "progress title")
    H.assert(H.note("^fisk: Index.*…"), "no begin notification: " .. H.notes_text())
    H.wait(5000, function()
      return H.note("^fisk: Index[^…]*: ")
    end, "end notification; got: " .. H.notes_text())
  end)

  H.test(":FiskSearch! puts the file and the matched lines in the quickfix list", function()
    local qf = H.search_qf("axolotl")
    H.assert(#qf >= 1, "no results")
    local first = qf[1]
    H.eq(animals, first.filename, "file of the best result")
    -- the paragraph that matched: from "The axolotl" to the end of the file (the filler follows it)
    H.eq(H.line_of(animals, "The axolotl"), first.lnum, "lnum (the matched paragraph)")
    H.eq(5, first.col, "col (on the matched word: The «axolotl»)")
    H.eq(#vim.fn.readfile(animals), first.end_lnum, "end_lnum (the paragraph's last line)")
    H.match(first.text, "Axolotl", "quickfix text carries the section")
    H.match(first.text, "«axolotl»", "quickfix text marks the matched word")
    H.match(first.user_data.citation, "^docs/animals%.md#%d+$", "citation in user_data")
    H.assert(vim.fn.getqflist({ winid = 0 }).winid ~= 0, "quickfix window is not open")
  end)

  H.test(":FiskSearch! in a middle section: on the word's line, the matched paragraph ends before the next heading", function()
    local e = H.search_qf("regenerates")[1]
    H.eq(animals, e.filename, "file")
    H.eq(H.line_of(animals, "It regenerates"), e.lnum, "lnum (the paragraph's second line holds the word)")
    H.eq(4, e.col, "col")
    -- a blank line, then the next heading
    H.eq(H.line_of(animals, "## Axolotl") - 2, e.end_lnum, "end_lnum")
  end)

  H.test(":FiskSearch! lists every file that matches", function()
    local files = {}
    for _, e in ipairs(H.search_qf("quokka")) do
      files[e.filename] = e.lnum
    end
    H.assert(files[guide], "guide.md missing: " .. vim.inspect(files))
    H.assert(files[meeting], "meeting.md missing: " .. vim.inspect(files))
    H.assert(files[guide] <= H.line_of(guide, "quokka parameter"), "guide.md line")
  end)

  H.test(":FiskSearch (picker = vim.ui.select) jumps to the cited line of the chosen result", function()
    vim.cmd("only")
    vim.cmd.edit(meeting)
    local seen
    local orig = vim.ui.select
    vim.ui.select = function(items, opts, on_choice)
      seen = { labels = vim.tbl_map(opts.format_item, items), prompt = opts.prompt, first = items[1] }
      on_choice(items[1], 1) -- the user picks the first result
    end
    vim.cmd("FiskSearch regenerates heart")
    H.wait(15000, function()
      return vim.api.nvim_buf_get_name(0) == animals
    end, "the jump to animals.md")
    vim.ui.select = orig
    -- the cursor lands on the part of the chunk that matched (targetSelectionRange), inside the chunk
    local match_line = seen.first.location.targetSelectionRange.start.line + 1
    H.eq(match_line, vim.fn.line("."), "cursor line (the matched part)")
    H.assert(match_line >= H.line_of(animals, "## Zebrafish") and match_line <= H.line_of(animals, "It regenerates"),
      ("the matched part (line %d) is the Zebrafish paragraph"):format(match_line))
    H.match(seen.labels[1], "Zebrafish", "item shows the section")
    H.match(seen.labels[1], "docs/animals%.md:%d+", "item shows relpath:line")
    H.assert(seen.first.snippet ~= "", "empty snippet")
    H.assert(vim.endswith(seen.labels[1], seen.first.marked), "item shows the snippet: " .. seen.labels[1])
    H.match(seen.labels[1], "It «regenerates» its «heart» after injury", "the matched words are marked")
    H.match(seen.prompt, "regenerates heart", "prompt names the query")
    vim.cmd("normal! \15") -- <C-o> returns to where the search started
    H.eq(meeting, vim.api.nvim_buf_get_name(0), "jumplist entry before the jump")
  end)

  H.test(":FiskSearch without a query prompts for one (live = false)", function()
    require("fisk.config").options.live = false
    local orig_input, orig_select = vim.ui.input, vim.ui.select
    local prompted
    vim.ui.input = function(opts, on_confirm)
      prompted = opts.prompt
      on_confirm("salamander larval")
    end
    local chosen
    vim.ui.select = function(items, _, on_choice)
      chosen = items[1]
      on_choice(items[1], 1)
    end
    vim.cmd.edit(meeting)
    vim.cmd("FiskSearch")
    H.wait(15000, function()
      return vim.api.nvim_buf_get_name(0) == animals
    end, "the jump to animals.md")
    vim.ui.input, vim.ui.select = orig_input, orig_select
    require("fisk.config").options.live = true
    H.match(prompted, "Fisk", "input prompt")
    H.eq(chosen.location.targetSelectionRange.start.line + 1, vim.fn.line("."), "cursor line (the matched part)")
    H.assert(vim.fn.getline("."):find("axolotl") or vim.fn.getline("."):find("Axolotl"), "cursor on the axolotl text: " .. vim.fn.getline("."))
  end)

  local citation
  H.test(":FiskShow {citation} opens the file at the cited lines", function()
    citation = H.search_qf("axolotl")[1].user_data.citation
    vim.cmd("only")
    vim.cmd.edit(meeting)
    vim.cmd("FiskShow " .. citation)
    H.wait(10000, function()
      return vim.api.nvim_buf_get_name(0) == animals
    end, "animals.md to open")
    H.eq(H.line_of(animals, "## Axolotl"), vim.fn.line("."), "cursor line")
    H.eq({ citation }, vim.fn.getcompletion("FiskShow " .. citation:sub(1, 8), "cmdline"), "citation completion")
  end)

  H.test(":FiskShow with an unknown citation says so", function()
    local from = #H.notes
    vim.cmd("FiskShow docs/animals.md#999")
    local n = H.wait(10000, function()
      return H.note("docs/animals%.md#999", from)
    end, "an error notification")
    H.eq(vim.log.levels.ERROR, n.level, "level")
    H.match(n.msg, "^fisk: cannot show docs/animals%.md#999: .+", "message")
  end)

  H.test("gd, K and :FiskShow work on a citation written in a document", function()
    local refs = root .. "/notes/refs.md"
    H.write(refs, { "# References", "", "The salamander facts: see " .. citation .. " for details." })
    vim.cmd.edit(refs)
    local c = H.client(0)
    H.eq(client.id, c.id, "same client for the same root")
    vim.api.nvim_win_set_cursor(0, { 3, #"The salamander facts: see " + 3 })
    vim.cmd("normal K")
    H.wait(10000, function()
      return H.float_text():find("Axolotl")
    end, "a hover window naming the section")
    vim.cmd("fclose!")
    vim.cmd("normal gd")
    H.wait(10000, function()
      return vim.api.nvim_buf_get_name(0) == animals
    end, "gd to jump to animals.md")
    H.eq(H.line_of(animals, "## Axolotl"), vim.fn.line("."), "gd cursor line")
    vim.cmd.edit(refs)
    vim.api.nvim_win_set_cursor(0, { 3, #"The salamander facts: see " + 3 })
    vim.cmd("FiskShow")
    H.wait(10000, function()
      return vim.api.nvim_buf_get_name(0) == animals
    end, ":FiskShow (citation under the cursor) to jump")
  end)

  H.test(":FiskStatus shows the tier and the document and chunk counts", function()
    local from = #H.notes
    vim.cmd("FiskStatus")
    local n = H.wait(10000, function()
      return H.note("^fisk: tier: ", from)
    end, "a status notification; got: " .. H.notes_text(from))
    H.match(n.msg, vim.pesc(root) .. ": %d+ documents, %d+ chunks", "status lines")
    local docs = tonumber(n.msg:match(": (%d+) documents"))
    H.assert(docs >= 3, "documents: " .. n.msg)
  end)

  H.test("edit, :w, and the next search sees the new text", function()
    vim.cmd.edit(guide)
    vim.api.nvim_buf_set_lines(0, -1, -1, false, H.lines("", "## Platypus", "", "The platypus lays eggs and hunts underwater.", pad))
    vim.cmd("silent write")
    local found
    H.wait(20000, function()
      local from = #H.notes
      vim.fn.setqflist({}, "r", { title = "", items = {} })
      vim.cmd("FiskSearch! platypus")
      vim.wait(5000, function()
        return vim.fn.getqflist({ title = 1 }).title ~= "" or H.note("fisk: ", from)
      end, 20)
      for _, e in ipairs(H.qf()) do
        if e.filename == guide then
          found = e
        end
      end
      return found or (vim.wait(300) and false)
    end, "the saved text to be searchable")
    H.eq(H.line_of(guide, "The platypus lays eggs"), found.lnum, "lnum of the new section's paragraph")
  end)

  H.test("commands work from a buffer the client is not attached to", function()
    vim.cmd("enew")
    H.eq(0, #vim.lsp.get_clients({ bufnr = 0 }), "clients attached to the scratch buffer")
    local qf = H.search_qf("freshwater")
    H.eq(animals, qf[1].filename, "result file")
  end)

  H.test('require("fisk").search(q, {also = ...}) sends the extra strings; what they find is listed', function()
    local lsp = require("fisk.lsp")
    local sent = {}
    local orig = lsp.request
    lsp.request = function(c, method, params, ...)
      if params.command == "fisk.knowledge.search" then
        sent[#sent + 1] = params.arguments[1]
      end
      return orig(c, method, params, ...)
    end
    local ok, err = pcall(function()
      vim.fn.setqflist({}, "r", { title = "", items = {} })
      require("fisk").search("quokka", { quickfix = true, also = { "axolotl salamander" } })
      H.wait(15000, function()
        return vim.fn.getqflist({ title = 1 }).title == "FiskSearch quokka"
      end, "the quickfix list")
      H.eq({ query = "quokka", also = { "axolotl salamander" } }, sent[1], "the search's argument")
      local files = {}
      for _, e in ipairs(H.qf()) do
        files[e.filename] = true
      end
      H.assert(files[animals] and files[meeting], "hits of the also string and of the query: " .. vim.inspect(vim.tbl_keys(files)))
      local result
      require("fisk.api").search("quokka", { also = { "axolotl salamander" } }, function(e, r)
        result = e and { error = e } or r
      end)
      H.wait(15000, function()
        return result
      end, "fisk.api.search")
      H.assert(not result.error, result.error)
      local by = {}
      for _, r in ipairs(result.results) do
        by[vim.uv.fs_realpath(vim.uri_to_fname(r.location.targetUri))] = r.foundBy
      end
      H.eq({ "also[0]" }, by[animals], "foundBy of animals.md")
      H.assert(vim.tbl_contains(by[meeting] or {}, "query"), "foundBy of meeting.md: " .. vim.inspect(by[meeting]))
      require("fisk").search("plain", { quickfix = true })
      H.wait(15000, function()
        return #sent == 3
      end, "a search without also")
      H.eq({ query = "plain" }, sent[3], "no also key when none is given")
      local from = #H.notes
      require("fisk").search("quokka", { quickfix = true, also = { "a", "b", "c", "d", "e" } })
      local n = H.wait(15000, function()
        return H.note("^fisk: search failed", from)
      end, "an error past the limit")
      H.match(n.msg, "also", "the server's message names also")
    end)
    lsp.request = orig
    assert(ok, err)
  end)

  H.test(":FiskSearch path= keeps the search to folders, files or globs (relative to the cwd, %:h, a union); fisk.api passes paths through", function()
    local lsp = require("fisk.lsp")
    local orig = lsp.request
    local sent = {}
    lsp.request = function(c, method, params, ...)
      if params.command == "fisk.knowledge.search" then
        sent[#sent + 1] = params.arguments[1]
      end
      return orig(c, method, params, ...)
    end
    local function files(qf)
      local out = {}
      for _, e in ipairs(qf) do
        out[#out + 1] = e.filename
      end
      table.sort(out)
      return vim.fn.uniq(out)
    end
    local ok, err = pcall(function()
      H.eq({ guide, meeting }, files(H.search_qf("quokka")), "unscoped: both files")
      H.eq({ meeting }, files(H.search_qf("path=notes quokka")), "a folder")
      H.eq({ query = "quokka", paths = { root .. "/notes" } }, sent[#sent], "sent as an absolute path")
      H.eq({ guide, meeting }, files(H.search_qf("path=notes path=docs/guide.md quokka")), "a union of a folder and a file")
      H.eq({ meeting }, files(H.search_qf("quokka path=**/meeting.md")), "a glob, after the query")
      vim.cmd.cd("docs")
      H.eq({ guide }, files(H.search_qf("path=. quokka")), "relative to the current directory (a subfolder)")
      vim.cmd.cd(root)
      vim.cmd.edit(meeting)
      H.eq({ meeting }, files(H.search_qf("path=%:h quokka")), "%:h: the current buffer's folder")
      H.eq({ root .. "/notes" }, sent[#sent].paths, "%:h expanded")

      local from = #H.notes
      vim.cmd("FiskSearch! path= quokka")
      H.assert(H.note("^fisk: path= takes a folder", from), "an empty path=: " .. H.notes_text(from))
      local outside = vim.fn.tempname()
      vim.cmd("FiskSearch! path=" .. outside .. " quokka")
      local n = H.wait(15000, function()
        return H.note("^fisk: search failed", from)
      end, "a folder outside the project")
      H.match(n.msg, "outside the project root", "the server's message")

      local result
      require("fisk.api").search("quokka", { paths = { "notes" } }, function(e, r)
        result = e and { error = e } or r
      end)
      H.wait(15000, function()
        return result
      end, "fisk.api.search with paths")
      H.assert(not result.error, result.error)
      H.eq({ "notes" }, sent[#sent].paths, "fisk.api sends paths unchanged (relative to the project root)")
      H.assert(#result.results > 0, "results in notes/")
      for _, r in ipairs(result.results) do
        H.match(r.citation, "^notes/", "every result is in notes/")
      end
      H.eq({ "path=notes/" }, vim.fn.getcompletion("FiskSearch path=not", "cmdline"), "path= completes folders")
    end)
    lsp.request = orig
    vim.cmd.cd(root)
    assert(ok, err)
  end)

  H.test(":FiskReindex updates (nothing changed: all skipped) and :FiskReindex! rebuilds (all added)", function()
    local pattern = "^fisk: indexed (%d+) files %((%d+) added, %d+ updated, (%d+) skipped, %d+ removed%), %d+ chunks"
    local from = #H.notes
    vim.cmd("FiskReindex")
    local n = H.wait(30000, function()
      return H.note("^fisk: indexed", from) or H.note("failed", from)
    end, "reindex report; got: " .. H.notes_text(from))
    local files, added, skipped = n.msg:match(pattern)
    H.assert(files, "report: " .. n.msg)
    H.assert(tonumber(files) >= 4 and added == "0" and skipped == files, "update report: " .. n.msg)
    from = #H.notes
    vim.cmd("FiskReindex!")
    n = H.wait(30000, function()
      return H.note("^fisk: indexed", from) or H.note("failed", from)
    end, "rebuild report; got: " .. H.notes_text(from))
    files, added = n.msg:match(pattern)
    H.assert(files and tonumber(files) >= 4 and added == files, "rebuild report: " .. n.msg)
    H.eq(animals, H.search_qf("axolotl")[1].filename, "search after the rebuild")
  end)
end)
