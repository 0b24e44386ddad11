-- Dependency-free test harness for headless Neovim (`nvim --headless --clean -l spec.lua`).
-- Prints `ok - name` / `FAIL - name detail` lines and a closing `N passed, N failed` line.
local H = { passed = 0, failed = 0 }

local uv = vim.uv or vim.loop

H.tests_dir = vim.fs.dirname(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p"))
H.plugin_dir = vim.fs.dirname(H.tests_dir)
H.fisk_ls = os.getenv("FISK_LS")

-- The plugin under test, loaded the way a plugin manager would (runtimepath + plugin/).
vim.opt.runtimepath:prepend(H.plugin_dir)
vim.cmd("runtime plugin/fisk.lua")
vim.o.swapfile = false
-- The semantic search offer (a vim.ui.select) only where a spec turns it back on
-- (require("fisk.semantic").offer_enabled = true); the module still loads on first use.
package.preload["fisk.semantic"] = function()
  local m = dofile(H.plugin_dir .. "/lua/fisk/semantic.lua")
  m.offer_enabled = false
  return m
end
vim.o.shortmess = vim.o.shortmess .. "F"

-- Result lines go straight to stdout (not through :messages, which does not end lines in -l
-- mode) and, when run.sh asks for it, to a results file that nvim's own output cannot garble.
local results = os.getenv("FISK_TEST_RESULTS")
local function emit(line)
  io.stdout:write(line, "\n")
  io.stdout:flush()
  if results then
    local f = assert(io.open(results, "a"))
    f:write(line, "\n")
    f:close()
  end
end

local function fail(name, detail)
  H.failed = H.failed + 1
  local text = type(detail) == "string" and detail or vim.inspect(detail)
  emit(("FAIL - %s %s"):format(name, (text:gsub("\n", "\n       "))))
end

--- Run one named test; an error inside it (from H.eq, H.wait, ...) fails it.
---@param name string
---@param fn fun()
function H.test(name, fn)
  local ok, err = xpcall(fn, debug.traceback)
  if ok then
    H.passed = H.passed + 1
    emit("ok - " .. name)
  else
    fail(name, err)
  end
end

--- A `# skipped: …` line in the results (why a check did not apply); the test still counts.
function H.skip(reason)
  emit("# skipped: " .. reason)
end

--- Raise unless cond; detail explains the failure.
function H.assert(cond, detail)
  if not cond then
    error(type(detail) == "string" and detail or vim.inspect(detail), 2)
  end
  return cond
end

function H.eq(expected, actual, what)
  if not vim.deep_equal(expected, actual) then
    error(("%s: expected %s, got %s"):format(what or "value", vim.inspect(expected), vim.inspect(actual)), 2)
  end
end

function H.match(text, pattern, what)
  if type(text) ~= "string" or not text:find(pattern) then
    error(("%s: %s does not match %q"):format(what or "text", vim.inspect(text), pattern), 2)
  end
end

--- Process events until cond() is truthy; raise with `what` after ms milliseconds.
function H.wait(ms, cond, what)
  local value
  local ok = vim.wait(ms, function()
    value = cond()
    return value
  end, 20)
  if not ok then
    error(("timed out after %d ms waiting for %s"):format(ms, what or "condition"), 2)
  end
  return value
end

--- Write a file (creating directories); lines is a list of strings.
function H.write(path, lines)
  vim.fn.mkdir(vim.fs.dirname(path), "p")
  vim.fn.writefile(lines, path)
end

--- Neutral sentences, about `chars` characters in all, one per line: the server packs small
--- sections together (a chunk takes in the next section while under ~350 characters), so a
--- section that must be a chunk of its own gets some of this.
function H.filler(chars)
  local sentences = {
    "This paragraph only pads the section so that it forms a chunk of its own.",
    "It talks about nothing in particular and repeats itself on purpose.",
    "Readers may skip it without missing anything that matters here.",
  }
  local lines, size, i = {}, 0, 0
  while size < (chars or 400) do
    local s = sentences[i % #sentences + 1]
    lines[#lines + 1], size, i = s, size + #s + 1, i + 1
  end
  return lines
end

--- Concatenate lists of lines.
function H.lines(...)
  local out = {}
  for _, part in ipairs({ ... }) do
    vim.list_extend(out, type(part) == "table" and part or { part })
  end
  return out
end

--- A fresh project directory with a `.git` root marker and the given files {relpath = lines}.
function H.workspace(files)
  local root = vim.fn.tempname()
  vim.fn.mkdir(root .. "/.git", "p")
  for rel, lines in pairs(files) do
    H.write(root .. "/" .. rel, lines)
  end
  return uv.fs_realpath(root)
end

--- 1-based line of the first line containing `needle` in a file.
function H.line_of(path, needle)
  for i, l in ipairs(vim.fn.readfile(path)) do
    if l:find(needle, 1, true) then
      return i
    end
  end
  error(("%q not found in %s"):format(needle, path), 2)
end

--- Record every vim.notify call: { {msg=, level=}, ... } (messages still print to stdout).
H.notes = {}
local orig_notify = vim.notify
vim.notify = function(msg, level, opts)
  table.insert(H.notes, { msg = tostring(msg), level = level or vim.log.levels.INFO })
  if os.getenv("FISK_TEST_VERBOSE") then
    orig_notify(msg, level, opts)
  end
end

--- The first recorded notification after index `from` whose text matches pattern.
function H.note(pattern, from, level)
  for i = (from or 0) + 1, #H.notes do
    local n = H.notes[i]
    if n.msg:find(pattern) and (level == nil or n.level == level) then
      return n
    end
  end
end

function H.notes_text(from)
  local out = {}
  for i = (from or 0) + 1, #H.notes do
    out[#out + 1] = H.notes[i].msg
  end
  return table.concat(out, " | ")
end

--- The fisk_ls client attached to a buffer, once initialized.
function H.client(bufnr, ms)
  return H.wait(ms or 30000, function()
    local c = vim.lsp.get_clients({ name = "fisk_ls", bufnr = bufnr or 0 })[1]
    return c and c.initialized and c
  end, "the fisk_ls client to attach and initialize")
end

--- LspProgress events of fisk_ls, recorded from the start.
H.progress = {}
vim.api.nvim_create_autocmd("LspProgress", {
  callback = function(ev)
    local c = vim.lsp.get_client_by_id(ev.data.client_id)
    if c and c.name == "fisk_ls" then
      table.insert(H.progress, vim.deepcopy(ev.data.params.value))
    end
  end,
})

--- Wait until the server reports its index built: progress `end`, then status with documents.
function H.wait_indexed(client, ms)
  ms = ms or 60000
  H.wait(ms, function()
    for _, v in ipairs(H.progress) do
      if v.kind == "end" then
        return true
      end
    end
  end, "indexing progress to end")
  local params = { command = "fisk.knowledge.status", arguments = {} }
  return H.wait(ms, function()
    local r = require("fisk.lsp").request_sync(client, "workspace/executeCommand", params, 5000)
    local s = r and r.result
    return s and not s.indexing and s.roots and s.roots[1] and (s.roots[1].documents or 0) > 0 and s
  end, "status to report an indexed root")
end

--- Quickfix entries with their file names resolved.
function H.qf()
  return vim.tbl_map(function(e)
    e.filename = e.bufnr > 0 and uv.fs_realpath(vim.api.nvim_buf_get_name(e.bufnr)) or ""
    return e
  end, vim.fn.getqflist())
end

--- Run :FiskSearch! and wait for a quickfix list whose title is this search.
function H.search_qf(query, ms)
  vim.fn.setqflist({}, "r", { title = "", items = {} })
  local from = #H.notes
  vim.cmd("FiskSearch! " .. query)
  -- the search ends with a quickfix list, or with a failure / no-results message
  local ended = "^fisk: (search failed|no results|the index|the query)"
  H.wait(ms or 15000, function()
    local title = vim.fn.getqflist({ title = 1 }).title
    return title == "FiskSearch " .. query or H.note(ended, from)
  end, "search results for " .. query)
  local title = vim.fn.getqflist({ title = 1 }).title
  H.assert(title == "FiskSearch " .. query, "no quickfix list; notifications: " .. H.notes_text(from))
  return H.qf()
end

--- A stand-in for an OpenAI-compatible embeddings server (POST /v1/embeddings), run inside this
--- nvim on a free port: vectors are word hashes over 16 dimensions. `stop()` closes the port and
--- every open connection, as if the embeddings server went down.
function H.embeddings_server()
  local server = assert(uv.new_tcp())
  assert(server:bind("127.0.0.1", 0))
  local conns = {}
  local requests = 0
  local function vector(text)
    local v = {}
    for i = 1, 16 do
      v[i] = 0.001
    end
    for word in tostring(text):lower():gmatch("%w+") do
      local h = 0
      for i = 1, #word do
        h = (h * 31 + word:byte(i)) % 65521
      end
      v[h % 16 + 1] = v[h % 16 + 1] + 1
    end
    return v
  end
  local function answer(conn, body)
    local req = vim.json.decode(body)
    local inputs = type(req.input) == "table" and req.input or { req.input }
    local data = {}
    for i, text in ipairs(inputs) do
      data[i] = { object = "embedding", index = i - 1, embedding = vector(text) }
    end
    local out = vim.json.encode({ object = "list", model = req.model, data = data })
    requests = requests + 1
    conn:write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"):format(#out, out))
  end
  assert(server:listen(16, function()
    local conn = assert(uv.new_tcp())
    server:accept(conn)
    conns[#conns + 1] = conn
    local buf = ""
    conn:read_start(function(err, chunk)
      if err or not chunk then
        return conn:is_closing() or conn:close()
      end
      buf = buf .. chunk
      local head = buf:find("\r\n\r\n", 1, true)
      local len = head and tonumber(buf:sub(1, head):lower():match("content%-length:%s*(%d+)"))
      if len and #buf >= head + 3 + len then
        local body = buf:sub(head + 4, head + 3 + len)
        buf = buf:sub(head + 4 + len)
        vim.schedule(function()
          if not conn:is_closing() then
            answer(conn, body)
          end
        end)
      end
    end)
  end))
  return {
    url = ("http://127.0.0.1:%d/v1"):format(server:getsockname().port),
    requests = function()
      return requests
    end,
    stop = function()
      server:close()
      for _, c in ipairs(conns) do
        if not c:is_closing() then
          c:close()
        end
      end
    end,
  }
end

--- Contents of every floating window.
function H.float_text()
  local out = {}
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= "" then
      local buf = vim.api.nvim_win_get_buf(win)
      out[#out + 1] = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
    end
  end
  return table.concat(out, "\n")
end

--- Print the summary, stop the servers, and exit non-zero on any failure.
function H.finish()
  vim.lsp.stop_client(vim.lsp.get_clients())
  vim.wait(3000, function()
    return #vim.lsp.get_clients() == 0
  end, 50)
  vim.lsp.stop_client(vim.lsp.get_clients(), true) -- run.sh kills whatever is still left
  emit(("%d passed, %d failed"):format(H.passed, H.failed))
  os.exit(H.failed == 0 and 0 or 1)
end

--- Guard a whole spec: an error outside H.test counts as a failure, and finish always runs.
function H.run(spec_name, body)
  local ok, err = xpcall(body, debug.traceback)
  if not ok then
    fail(spec_name .. " (spec aborted)", err)
  end
  H.finish()
end

return H
