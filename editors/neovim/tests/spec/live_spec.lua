-- The live search (Neovim's own floating windows, no plugin) against the real server: results as
-- the input changes, a preview of the focused result's matched lines, long rows cut to the list's
-- width, up to 20 results; and `tag=` in :FiskSearch.
local H = dofile(vim.fs.dirname(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2))) .. "/helpers.lua")

local pad = H.filler(400)
local files = {
  ["docs/animals.md"] = H.lines(
    "# Animals", "", "Some notes about animals.", pad, "",
    "## Zebrafish", "", "The zebrafish is a small freshwater fish used in research.",
    "It regenerates its heart after injury.", pad, "",
    "## Axolotl", "", "The axolotl is a salamander that keeps its larval features.", pad
  ),
  ["docs/long.md"] = H.lines(
    "# Long", "",
    "The pangolin " .. string.rep("walks slowly through the forest at night looking for ants ", 8) .. "and sleeps.",
    pad
  ),
  ["howto/tagged.md"] = H.lines("---", "tags: [howto]", "---", "", "# Tagged", "", "Brew the marmalade slowly.", pad),
  ["notes/untagged.md"] = H.lines("# Untagged", "", "Marmalade notes: brew the marmalade slowly.", pad),
}
for i = 1, 12 do -- more pages about one word than the server's default topK (5)
  files[("many/page%02d.md"):format(i)] = H.lines(("# Page %d"):format(i), "", ("The wombat number %d digs."):format(i), pad)
end
local root = H.workspace(files)
local animals, long = root .. "/docs/animals.md", root .. "/docs/long.md"

H.run("live_spec", function()
  vim.cmd.cd(root)
  vim.o.columns, vim.o.lines = 120, 40
  local live = require("fisk.live")
  local client

  H.test("setup, index", function()
    require("fisk").setup()
    vim.cmd.edit(animals)
    client = H.client(0)
    H.wait_indexed(client)
  end)

  local function wait_results(state, what)
    return H.wait(15000, function()
      return #state.items > 0 and state.items
    end, what or "live results")
  end

  H.test(":FiskSearch without a query opens the live search; results follow the input", function()
    local origin = vim.api.nvim_get_current_win()
    vim.cmd("FiskSearch")
    local state = H.assert(live.current, "the live search is open")
    H.eq(state.wins.input, vim.api.nvim_get_current_win(), "the input window has the focus")
    state.set_query("zebrafish")
    local items = wait_results(state)
    H.eq(animals, items[1].filename, "first result")
    local rows = vim.api.nvim_buf_get_lines(state.bufs.list, 0, -1, false)
    H.eq(#items, #rows, "one row per result")
    H.match(rows[1], "Zebrafish", "the row names the section")
    -- typing on searches again: the list follows the input
    state.set_query("salamander larval")
    H.wait(15000, function()
      return state.query == "salamander larval" and state.items[1] and state.items[1].snippet:find("axolotl")
    end, "the list to follow the new input")
    state.close()
    H.eq(nil, live.current, "closed")
    H.eq(origin, vim.api.nvim_get_current_win(), "back in the window it was opened from")
  end)

  H.test("the preview shows the focused result's file on its matched lines; moving the focus moves it", function()
    local state = live.open()
    state.set_query("zebrafish heart")
    local items = wait_results(state)
    local preview = vim.api.nvim_buf_get_lines(state.bufs.preview, 0, -1, false)
    H.eq(vim.fn.readfile(items[1].filename), preview, "the preview holds the result's file")
    H.eq(items[1].lnum, vim.api.nvim_win_get_cursor(state.wins.preview)[1], "preview cursor on the first matched line")
    local marks = vim.api.nvim_buf_get_extmarks(state.bufs.preview, -1, 0, -1, { details = true })
    local marked = {}
    for _, m in ipairs(marks) do
      if m[4].line_hl_group then
        marked[#marked + 1] = m[2] + 1
      end
    end
    H.assert(#marked > 0 and marked[1] == items[1].lnum and marked[#marked] == items[1].end_lnum,
      { marked = marked, lnum = items[1].lnum, end_lnum = items[1].end_lnum })
    state.set_query("wombat digs")
    H.wait(15000, function()
      return state.query == "wombat digs" and #state.items > 1
    end, "several results")
    items = state.items
    state.move(1)
    H.eq(2, state.selected, "focus moved")
    H.eq(vim.fn.readfile(items[2].filename), vim.api.nvim_buf_get_lines(state.bufs.preview, 0, -1, false), "preview of the second")
    H.eq(2, vim.api.nvim_win_get_cursor(state.wins.list)[1], "list cursor on the focused row")
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<Up>", true, false, true), "x", false)
    H.eq(1, state.selected, "<Up> moves it back")
    state.move(-1)
    H.eq(#items, state.selected, "wraps around")
    state.close()
  end)

  H.test("<CR> opens the focused result on its matched line", function()
    vim.cmd.edit(root .. "/notes/untagged.md")
    local state = live.open({ query = "axolotl salamander" })
    local items = wait_results(state)
    vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("<CR>", true, false, true), "x", false)
    H.wait(5000, function()
      return vim.api.nvim_buf_get_name(0) == animals
    end, "the jump to animals.md")
    H.eq(nil, live.current, "the live search closed")
    H.eq(items[1].lnum, vim.fn.line("."), "cursor on the matched line")
  end)

  H.test("long rows are cut to the list's width with an ellipsis, never wrapped", function()
    local state = live.open({ query = "pangolin forest ants" })
    wait_results(state)
    H.eq(false, vim.wo[state.wins.list].wrap, "no wrap in the list")
    local width = vim.api.nvim_win_get_width(state.wins.list)
    local rows = vim.api.nvim_buf_get_lines(state.bufs.list, 0, -1, false)
    for _, r in ipairs(rows) do
      H.assert(vim.fn.strdisplaywidth(r) <= width, ("row wider than %d: %s"):format(width, r))
    end
    local first = state.items[1]
    H.eq(long, first.filename, "the long page first")
    H.assert(vim.fn.strdisplaywidth(first.plain_label) > width, "the label is longer than the list")
    H.match(rows[1], "…$", "the cut row ends in an ellipsis")
    state.close()
    H.eq("ab…", live.fit("abcdef", 3), "fit")
    H.eq("abc", live.fit("abc", 3), "fit when it fits")
    H.eq("日…", live.fit("日本語", 4), "fit counts display cells")
  end)

  H.test("more results: the live list asks for 20, more than the server's default 5", function()
    local state = live.open({ query = "wombat digs" })
    H.wait(15000, function()
      return #state.items >= 12 and state.items
    end, "twelve results")
    H.eq(12, #state.items, "every page about wombats")
    state.close()
    local n = #H.search_qf("wombat digs")
    H.eq(5, n, ":FiskSearch! keeps to the server's topK")
    require("fisk.config").options.top_k = 10
    H.eq(10, #H.search_qf("wombat digs"), "the top_k option: 10")
    require("fisk.config").options.top_k = false
  end)

  H.test(":FiskSearch! tag=howto lists only the tagged page; tag= with path= and in the live search", function()
    local both = H.search_qf("marmalade")
    H.eq(2, #both, "without tag=: both pages")
    local tagged = H.search_qf("tag=howto marmalade")
    H.eq(1, #tagged, "one result")
    H.eq(root .. "/howto/tagged.md", tagged[1].filename, "the tagged page")
    H.eq(0, #vim.tbl_filter(function(e)
      return e.filename:find("untagged", 1, true) ~= nil
    end, H.search_qf("marmalade tag=howto path=howto")), "tag= and path= together")
    local query, paths, label, tags = require("fisk.commands").parse_search({ "tag=a", "x", "tag=b" })
    H.eq("x", query, "query")
    H.eq({}, paths, "paths")
    H.eq("tag=a tag=b ", label, "label")
    H.eq({ "a", "b" }, tags, "tags")
    local from = #H.notes
    vim.cmd("FiskSearch! tag= marmalade")
    H.assert(H.note("tag= takes", from), "tag= without a value: " .. H.notes_text(from))
    vim.cmd("FiskSearch tag=howto")
    local state = H.assert(live.current, "the live search opens with the scope")
    state.set_query("marmalade")
    local items = wait_results(state)
    H.eq({ "howto/tagged.md" }, vim.tbl_map(function(i)
      return i.relpath
    end, items), "the live search keeps to the tag")
    state.close()
  end)
end)
