-- Question expansion against the real server and a fake OpenAI-compatible chat server
-- (tests/support/fake_chat_server.py): the `expansion` option reaches the server, :FiskSearch!
-- refines its quickfix list in place, vim.ui.select waits for the expansion, and a model that
-- does not answer leaves the plain results with a warning.
local H = dofile(vim.fs.dirname(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2))) .. "/helpers.lua")

local repo = vim.fs.dirname(vim.fs.dirname(H.plugin_dir))
local python = vim.fs.dirname(H.fisk_ls) .. "/python"
local QUESTION = "why are my notifications held back at night?"
local STRINGS = {
  "alert_quiet_hours overnight non-urgent alerts",
  'Set alert_quiet_hours to a range such as "23:00-05:00" to hold non-urgent alerts overnight.',
  "hold alerts during quiet hours",
}

local pad = H.filler(400)
local function docs()
  return {
    ["docs/notifications.md"] = H.lines(
      "# Notifications", "", "Notifications go out by email and chat; pick the channels per team.", pad, "",
      "## Digest", "", "A daily digest of notifications is sent at nine.", pad
    ),
    ["docs/alerts.md"] = H.lines(
      "# Alerts", "", "## Quiet hours", "",
      'Set `alert_quiet_hours` to a range such as "23:00-05:00" to hold non-urgent alerts overnight.', pad, "",
      "## Escalation", "", "Urgent alerts page the on-call engineer at once.", pad
    ),
  }
end

--- The fake chat server as a process: its base URL, its stop(), and how many requests it got
--- (read from its stderr log lines is not needed: the expansion outcome says it).
local function chat_server(mode)
  local answers = vim.fn.tempname() .. ".jsonl"
  vim.fn.writefile({ vim.json.encode({ query = QUESTION, also = STRINGS }) }, answers)
  local port
  local proc = vim.system(
    { python, "-m", "tests.support.fake_chat_server", "--port", "0", "--answers", answers, "--mode", mode or "ok" },
    {
      cwd = repo,
      stdout = function(_, data)
        port = port or (data and data:match("PORT (%d+)"))
      end,
    }
  )
  H.wait(15000, function()
    return port
  end, "the fake chat server's port")
  return {
    url = ("http://127.0.0.1:%s/v1"):format(port),
    stop = function()
      proc:kill(15)
      proc:wait(5000)
    end,
  }
end

local function citations(list)
  return vim.tbl_map(function(e)
    return e.user_data and e.user_data.citation or e.citation
  end, list)
end

local function has_alerts(list)
  for _, c in ipairs(citations(list)) do
    if c:match("^docs/alerts%.md#") then
      return true
    end
  end
  return false
end

H.run("expansion_spec", function()
  local chat = chat_server("ok")
  local root = H.workspace(docs())
  vim.cmd.cd(root)
  local client

  H.test("setup's expansion option goes to the server as fisk.expansion (camelCase, provider openai)", function()
    require("fisk").setup({ expansion = { base_url = chat.url, model = "fake", timeout = 20 } })
    local sent = vim.lsp.config.fisk_ls.settings.fisk.expansion
    H.eq({ provider = "openai", baseUrl = chat.url, model = "fake", timeout = 20 }, sent, "settings.fisk.expansion")
    H.eq(sent, vim.lsp.config.fisk_ls.init_options.expansion, "initializationOptions")
    H.eq(true, require("fisk.config").expanding(), "expanding")
    vim.cmd.edit(root .. "/docs/notifications.md")
    client = H.client(0)
    H.wait_indexed(client)
  end)
  if not client then
    chat.stop()
    return
  end

  H.test("an expansion option the server could not use is a clear error", function()
    local config = require("fisk.config")
    local saved = config.options
    for _, case in ipairs({
      { { provider = "editor" }, "editor is VS Code's own language model" },
      { { url = chat.url }, "`expansion.url` is not an option" },
    }) do
      local ok, err = pcall(config.setup, { expansion = case[1] })
      H.assert(not ok, case[2])
      H.match(err, case[2], "message")
    end
    H.eq({ provider = "none" }, config.setup({ expansion = { provider = "none" } }).settings.expansion, "none")
    H.eq(false, config.expanding(), "none does not expand")
    -- The values are the server's to check (its one settings message names a bad one).
    H.eq({ provider = "openai", baseUrl = chat.url }, config.setup({ expansion = { base_url = chat.url } }).settings.expansion, "sent as given")
    config.options = saved
  end)

  H.test(":FiskSearch! shows the plain results, then refines the same quickfix list in place", function()
    local qf = H.search_qf(QUESTION)
    H.assert(#qf > 0, "plain results")
    local lists = vim.fn.getqflist({ nr = "$" }).nr
    local id = vim.fn.getqflist({ id = 0 }).id
    local refined = H.wait(20000, function()
      local items = vim.fn.getqflist({ id = id, items = 1 }).items
      return has_alerts(items) and items
    end, "the quickfix list refined with the quiet-hours section")
    H.eq(lists, vim.fn.getqflist({ nr = "$" }).nr, "no new list: the refinement replaced the items")
    H.eq("FiskSearch " .. QUESTION, vim.fn.getqflist({ id = id, title = 1 }).title, "title kept")
    H.assert(not H.note("not expanded"), H.notes_text())
    H.assert(#refined > 0)
  end)

  H.test("picker = vim.ui.select: one search with expand, the list opens with the refined results", function()
    require("fisk.config").options.picker = "select"
    local orig = vim.ui.select
    local shown = {}
    vim.ui.select = function(items)
      shown[#shown + 1] = items
    end
    vim.cmd("FiskSearch " .. QUESTION)
    H.wait(20000, function()
      return #shown > 0
    end, "vim.ui.select")
    vim.wait(200)
    vim.ui.select = orig
    H.eq(1, #shown, "opened once")
    H.assert(has_alerts(shown[1]), citations(shown[1]))
  end)

  chat.stop()

  H.test("a model that does not answer: the plain results open after the expansion's timeout, with the reason", function()
    local hang = chat_server("hang")
    local other = H.workspace(docs())
    require("fisk").setup({ picker = "select", expansion = { base_url = hang.url, model = "fake", timeout = 0.5 } })
    require("fisk.commands").expanding_notice_ms = 0
    vim.cmd.cd(other)
    vim.cmd.edit(other .. "/docs/notifications.md")
    local c = H.client(0)
    H.wait_indexed(c)
    local from = #H.notes
    local orig = vim.ui.select
    local shown
    vim.ui.select = function(items)
      shown = items
    end
    local ok, err = pcall(function()
      vim.cmd("FiskSearch " .. QUESTION)
      H.wait(20000, function()
        return shown
      end, "vim.ui.select")
      H.assert(not has_alerts(shown), "plain results only")
      H.assert(H.note("^fisk: asking the language model", from), "no notice while waiting: " .. H.notes_text(from))
      H.assert(H.note("^fisk: the question was not expanded %(.+%); the plain results stay$", from), H.notes_text(from))
    end)
    vim.ui.select = orig
    hang.stop()
    assert(ok, err)
  end)
end)
