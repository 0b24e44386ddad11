-- Plain folders (no .git, no agent.yaml): the client starts on the working directory when it
-- holds the file, else on the file's folder; :FiskStatus and :checkhealth fisk say which root and
-- why; the advice :checkhealth gives with no client works; the home directory is never a root
-- without a marker.
local H = dofile(vim.fs.dirname(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2))) .. "/helpers.lua")

-- A folder with the given files and no root marker.
local function plain(files)
  local dir = vim.fn.tempname()
  for rel, lines in pairs(files) do
    H.write(dir .. "/" .. rel, lines)
  end
  return vim.uv.fs_realpath(dir)
end

local docs = plain({ ["guide/kites.md"] = { "# Kites", "", "A kite flies on a tether called the bridle line." } })
local other = plain({ ["notes.md"] = { "# Notes", "", "The marmot whistles before winter." } })
local home = plain({ ["todo.md"] = { "# Todo" }, ["docs/herons.md"] = { "# Herons", "", "A heron stands still." } })

local function health_text()
  vim.cmd("checkhealth fisk")
  local buf = H.wait(20000, function()
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.bo[b].filetype == "checkhealth" then
        local text = table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n")
        if text:find("fisk: clients and index") then
          return b
        end
      end
    end
  end, "the health report")
  local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
  vim.cmd("bwipeout! " .. buf)
  return text
end

-- The root line of :FiskStatus (its second line, after the tier).
local function status_note()
  local from = #H.notes
  vim.cmd("FiskStatus")
  local msg = H.wait(30000, function()
    return H.note("^fisk: tier: ", from) or H.note("^fisk: status failed", from)
  end, ":FiskStatus").msg
  return vim.split(msg, "\n")[2] or msg
end

local function stop_all()
  vim.lsp.stop_client(vim.lsp.get_clients())
  H.wait(10000, function()
    return #vim.lsp.get_clients() == 0
  end, "the clients to stop")
end

H.run("root_spec", function()
  require("fisk").setup()

  H.test("a file under the working directory: the client's root is the working directory", function()
    vim.cmd.cd(docs)
    vim.cmd.edit(docs .. "/guide/kites.md")
    local client = H.client(0)
    H.eq(docs, vim.uv.fs_realpath(client.root_dir), "root_dir")
    H.wait_indexed(client)
    H.eq(docs .. "/guide/kites.md", H.search_qf("bridle")[1].filename, "search works")
  end)

  H.test(":FiskStatus says which root and why", function()
    vim.cmd.edit(docs .. "/guide/kites.md")
    local msg = status_note()
    H.eq(
      ("root: %s (no agent.yaml or .git in %s/guide or above: the working directory, which holds the file)"):format(docs, docs),
      msg,
      "root line"
    )
  end)

  H.test("a file outside the working directory: the client's root is the file's folder", function()
    vim.cmd.edit(other .. "/notes.md")
    local client = H.wait(30000, function()
      local c = vim.lsp.get_clients({ name = "fisk_ls", bufnr = 0 })[1]
      return c and c.initialized and c
    end, "a client for notes.md")
    H.eq(other, vim.uv.fs_realpath(client.root_dir), "root_dir")
    H.eq(2, #vim.lsp.get_clients({ name = "fisk_ls" }), "one client per root")
    H.match(status_note(), "^root: " .. vim.pesc(other) .. " %(no agent%.yaml or %.git in " .. vim.pesc(other) .. " or above: the file's folder%)", ":FiskStatus")
  end)

  H.test(":checkhealth fisk shows each client's root and why", function()
    local text = health_text()
    H.match(text, "root: " .. vim.pesc(docs) .. " %(no agent%.yaml or %.git in " .. vim.pesc(docs) .. "/guide or above: the working directory, which holds the file%)", "docs root")
    H.match(text, "root: " .. vim.pesc(other) .. " %(.-the file's folder%)", "other root")
  end)

  H.test("with no client, :checkhealth fisk advises :FiskStatus, and :FiskStatus starts one there", function()
    stop_all()
    vim.cmd("enew")
    local text = health_text()
    H.match(text, "no fisk_ls client is running", "warning")
    H.match(text, "Run :FiskStatus to start one for " .. vim.pesc(docs) .. " %(no agent%.yaml or %.git in " .. vim.pesc(docs) .. " or above: the working directory%)", "advice")
    vim.cmd("enew")
    H.eq(("root: %s (no agent.yaml or .git in %s or above: the working directory)"):format(docs, docs), status_note(), ":FiskStatus")
    H.eq(1, #vim.lsp.get_clients({ name = "fisk_ls" }), "clients")
  end)

  H.test("the home directory is not a root without a marker, and the advice given works", function()
    stop_all()
    vim.env.HOME = home
    vim.cmd.cd(home)
    vim.cmd("enew")
    local text = health_text()
    H.match(text, "No root for :FiskStatus from here: no agent%.yaml or %.git in " .. vim.pesc(home) .. " or above, and the home directory is not indexed as a whole: `:cd` into your docs folder", "advice")
    local from = #H.notes
    vim.cmd("FiskSearch! heron")
    local n = H.wait(5000, function()
      return H.note("^fisk: ", from)
    end, "an error")
    H.eq(vim.log.levels.ERROR, n.level, "level")
    H.match(n.msg, "no project root: no agent%.yaml or %.git in " .. vim.pesc(home) .. " or above, and the home directory", "message")
    H.eq(0, #vim.lsp.get_clients(), "clients started")
    vim.cmd.edit(home .. "/todo.md") -- a file right in the home directory starts nothing either
    H.eq(0, #vim.lsp.get_clients(), "clients started for todo.md")
    vim.cmd.cd(home .. "/docs") -- the advice
    vim.cmd("enew")
    H.match(status_note(), "^root: " .. vim.pesc(home) .. "/docs ", ":FiskStatus after :cd")
  end)
end)
