-- The :Fisk* commands. Each one calls fisk.api and presents the result.
local api = require("fisk.api")
local location = require("fisk.location")
local notify = require("fisk.notify")
local picker = require("fisk.picker")
local progress = require("fisk.progress")

local M = {}

--- Citations of the last search, for :FiskShow completion.
M.last_citations = {}

local status_messages = {
  index_not_built = "the index is not built yet (indexing may still be running: see :FiskStatus, or run :FiskReindex)",
  index_empty = "the index is empty: no markdown or text files were indexed (check `settings.paths` and the server's messages; :FiskStatus)",
  no_terms = "the query has no words to search for",
}

-- The server's sentence while an index run goes on ("still indexing: 257 of 1,812 files; ..."),
-- nil otherwise (older servers send no `indexing`).
local function indexing_note(result)
  if type(result.indexing) == "table" and type(result.note) == "string" then
    return result.note
  end
end

-- Jump to a LocationLink, or say why not.
local function open(link, client, what, opts)
  local ok, jumped = pcall(location.jump, link, client, opts)
  if not (ok and jumped) then
    notify.error(("cannot open %s%s"):format(what, ok and "" or (": " .. tostring(jumped))))
  end
  return ok and jumped
end

-- title: the query, with the `path=` words as typed. Returns the list's handle: for the quickfix
-- list, `update(items)` replaces the list in place (vim.ui.select cannot be refreshed once open).
local function show_items(items, query, quickfix, client, title)
  if quickfix then
    vim.fn.setqflist({}, " ", {
      title = "FiskSearch " .. title,
      items = picker.qf_items(items, true),
      context = { fisk = { query = query } },
    })
    local id = vim.fn.getqflist({ id = 0 }).id
    vim.cmd("botright copen")
    return {
      update = function(new_items)
        local list = vim.fn.getqflist({ id = id, idx = 0, items = 1 })
        if list.id ~= id then
          return false
        end
        local was = list.items[list.idx] and (list.items[list.idx].user_data or {}).citation
        local entries = picker.qf_items(new_items, true)
        local idx = picker.index_of(vim.tbl_map(function(e)
          return e.user_data
        end, entries), was) or 1
        vim.fn.setqflist({}, "r", { id = id, items = entries, idx = idx })
        return true
      end,
    }
  end
  picker.pick(items, { title = "Fisk: " .. title }, function(item)
    open(item.location, client, item.citation, { matched = true })
  end)
  return {}
end

--- ms before a search that waits for its expansion says so (the expansion may not be needed)
M.expanding_notice_ms = 400

-- The search running its expansion, cancelled by the next search.
local running

local function expanded(result)
  return result.expansion == "used" or result.expansion == "cached"
end

-- "failed: <reason>" -> "<reason>"
local function failure(result)
  return type(result.expansion) == "string" and result.expansion:match("^failed: (.*)$")
end

local function run_search(query, quickfix, also, paths, title, tags)
  if running then
    running.cancel()
  end
  local this = { cancelled = false, requests = {} }
  running = this
  this.cancel = function()
    this.cancelled = true
    for _, request in ipairs(this.requests) do
      request.cancel()
    end
  end
  local function search(expand, cb)
    this.requests[#this.requests + 1] = api.search(query, { also = also, paths = paths, tags = tags, expand = expand }, function(...)
      if not this.cancelled then
        cb(...)
      end
    end)
  end
  -- Extra strings of the caller's own are never expanded again.
  local expanding = also == nil and require("fisk.config").expanding()

  -- A result's items, remembered for :FiskShow completion; nil (and the reason said) when it has none.
  local function items_of(result, client, quiet)
    progress.note_tier(client, result)
    local items = picker.items(result.results, client and client.offset_encoding)
    local indexing = indexing_note(result)
    if indexing and (#items > 0 or not quiet) then
      notify.info(indexing) -- an index run goes on: these are the results so far
    end
    if #items > 0 or quiet then
      return #items > 0 and items or nil
    end
    if indexing then
      return nil
    end
    local why = status_messages[result.status]
    return why and notify.warn(why) or notify.info(("no results for %q"):format(title))
  end
  local function remember(items)
    M.last_citations = vim.tbl_map(function(item)
      return item.citation
    end, items)
  end
  local function say_failure(result)
    local why = failure(result)
    if why then
      notify.warn(("the question was not expanded (%s); the plain results stay"):format(why))
    end
  end

  if expanding and not quickfix then
    -- vim.ui.select cannot take a new list once open: one search with expand, and
    -- the list opens with its answer (the server keeps to the expansion's timeout).
    local timer = vim.defer_fn(function()
      if running == this and not this.cancelled and not this.answered then
        notify.info(("asking the language model for search strings for %q…"):format(title))
      end
    end, M.expanding_notice_ms)
    return search(true, function(err, result, client)
      this.answered = true
      pcall(function()
        timer:stop()
      end)
      if err then
        return notify.error("search failed: " .. err)
      end
      say_failure(result)
      local items = items_of(result, client)
      if items then
        remember(items)
        show_items(items, query, quickfix, client, title)
      end
    end)
  end

  search(false, function(err, result, client)
    if err then
      return notify.error("search failed: " .. err)
    end
    local refine = expanding and result.status == "ok"
    -- nothing found yet: the refined search may find something, so wait for it before saying so
    local items = items_of(result, client, refine)
    local handle
    if items then
      remember(items)
      handle = show_items(items, query, quickfix, client, title)
    end
    if not refine then
      return
    end
    search(true, function(rerr, refined, rclient)
      if rerr then
        return notify.warn(("the question was not expanded (%s); the plain results stay"):format(rerr))
      end
      say_failure(refined)
      local better = expanded(refined) and items_of(refined, rclient, true) or nil
      if not better then
        return not items and items_of(result, client) -- the "no results" held back
      end
      remember(better)
      if not (handle and handle.update and handle.update(better)) and not items then
        show_items(better, query, quickfix, rclient, title)
      end
    end)
  end)
end

--- :FiskSearch[!] [query]: picker, or with bang the quickfix list (each result on its matched
--- lines, followed by its near-identical copies). Prompts without a query. `also`: extra search
--- strings sent beside the query; `paths`: folders, files or globs to search in, as the server
--- takes them (relative to the project root, or absolute); `tags`: front-matter tags
--- (fisk.api.search). Without a query, the live search opens (`live` option; else a prompt).
---@param query? string
---@param quickfix? boolean
---@param also? string[]
---@param paths? string[]
---@param title? string the list's title (default: the query); before a prompted query, its prefix
---@param tags? string[]
function M.search(query, quickfix, also, paths, title, tags)
  query = vim.trim(query or "")
  if query ~= "" then
    return run_search(query, quickfix, also, paths, title or query, tags)
  end
  if not quickfix and require("fisk.config").options.live then
    return require("fisk.live").open({ paths = paths, tags = tags, title = title })
  end
  vim.ui.input({ prompt = "Fisk search: " }, function(input)
    input = vim.trim(input or "")
    if input ~= "" then
      run_search(input, quickfix, also, paths, (title or "") .. input, tags)
    end
  end)
end

--- Open a result: its file on the matched lines, the cursor on the first matched word.
---@param item fisk.Item
---@param client? vim.lsp.Client
function M.open_item(item, client)
  return open(item.location, client, item.citation, { matched = true })
end

local PATH_USAGE = "path= takes a folder, file or glob, relative to the current directory or absolute (path=%:h: the current buffer's folder)"

--- A `path=` value as the server takes it: absolute (the server searches the projects that hold
--- it), so a path relative to the current directory works from any folder. `%` and `#` forms are
--- expanded (`%:h`: the current buffer's folder), `~` and `$VAR` too; globs are kept.
---@param value string
---@return string? path, string? err
function M.server_path(value)
  local p = value
  if p == "" then
    return nil, PATH_USAGE
  end
  if p:match("^[%%#]") then
    p = vim.fn.expand(p)
    if p == "" then
      return nil, ("path=%s: the buffer has no file name"):format(value)
    end
  end
  p = vim.fn.fnamemodify(vim.fs.normalize(p), ":p")
  if #p > 1 then
    p = p:gsub("/+$", "")
  end
  return p
end

local TAG_USAGE = "tag= takes a front-matter tag (tag=howto); it repeats (a union)"

--- Splits :FiskSearch's words into the query, its `path=` values (repeatable, in any place),
--- each converted by server_path, and its `tag=` values (repeatable, sent as typed). Returns
--- query, paths, the `path=` and `tag=` words as typed, and tags; or nil and an error message.
---@param fargs string[]
---@return string? query, string[]|string paths_or_err, string? label, string[]? tags
function M.parse_search(fargs)
  local words, paths, given, tags = {}, {}, {}, {}
  for _, word in ipairs(fargs) do
    local value = word:match("^path=(.*)$")
    local tag = word:match("^tag=(.*)$")
    if tag then
      if tag == "" then
        return nil, TAG_USAGE
      end
      tags[#tags + 1] = tag
      given[#given + 1] = word .. " "
    elseif value then
      local p, err = M.server_path(value)
      if not p then
        return nil, err
      end
      paths[#paths + 1] = p
      given[#given + 1] = word .. " "
    else
      words[#words + 1] = word
    end
  end
  return table.concat(words, " "), paths, table.concat(given), tags
end

--- :FiskSearch[!] [path={path}]... [tag={tag}]... [query] as typed.
---@param fargs string[]
---@param quickfix boolean
function M.search_command(fargs, quickfix)
  local query, paths, label, tags = M.parse_search(fargs)
  if not query then
    return notify.error(paths --[[@as string]])
  end
  -- The title is the command's words as typed; a prompted query follows the path=/tag= words.
  local title = query ~= "" and table.concat(fargs, " ") or label
  local scope = #paths > 0 and paths --[[@as string[] ]] or nil
  M.search(query, quickfix, nil, scope, title, tags and #tags > 0 and tags or nil)
end

--- :FiskSearch completion: folders after `path=`.
---@param arglead string
---@return string[]
function M.complete_search(arglead)
  local value = arglead:match("^path=(.*)$")
  if not value then
    return {}
  end
  return vim.tbl_map(function(dir)
    return "path=" .. dir
  end, vim.fn.getcompletion(value, "dir"))
end

--- The `relpath#ordinal` token under the cursor, if any.
---@return string?
function M.citation_under_cursor()
  local line = vim.api.nvim_get_current_line()
  local col = vim.api.nvim_win_get_cursor(0)[2] + 1
  for start, token, finish in line:gmatch("()([^%s%(%)%[%]<>\"'`,;|]+#%d+)()") do
    if col >= start and col < finish then
      return token
    end
  end
end

--- :FiskShow [citation]: open the cited lines (default: the citation under the cursor).
---@param citation? string
function M.show(citation)
  citation = vim.trim(citation or "")
  if citation == "" then
    citation = M.citation_under_cursor() or ""
  end
  if citation == "" then
    return notify.error("usage: :FiskShow {relpath#ordinal} (or put the cursor on a citation)")
  end
  api.show(citation, function(err, result, client)
    if err then
      return notify.error(("cannot show %s: %s"):format(citation, err))
    end
    if open(result.location, client, citation) and result.stale then
      notify.warn(("%s changed since it was indexed; :FiskReindex refreshes the index"):format(citation))
    end
  end)
end

--- :FiskShow completion: citations of the last search.
function M.complete_citation(arglead)
  return vim.tbl_filter(function(c)
    return vim.startswith(c, arglead)
  end, M.last_citations)
end

--- :FiskReindex[!]: update the index; with bang rebuild it from scratch.
---@param rebuild? boolean
function M.reindex(rebuild)
  -- with progress notifications on, the server's "Indexing docs" already says it started
  if not require("fisk.config").options.progress then
    notify.info(rebuild and "rebuilding the index…" or "reindexing…")
  end
  api.reindex(rebuild == true, function(err, r)
    if err then
      return notify.error("reindex failed: " .. err)
    end
    notify.info(
      ("indexed %s files (%s added, %s updated, %s skipped, %s removed), %s chunks"):format(
        r.files or 0, r.added or 0, r.updated or 0, r.skipped or 0, r.removed or 0, r.chunks or 0
      )
    )
  end)
end

--- 6628 -> "6,628".
---@param n integer
---@return string
function M.thousands(n)
  local s = tostring(math.floor(n or 0))
  local out = s:reverse():gsub("(%d%d%d)", "%1,"):reverse()
  return (out:gsub("^,", ""))
end

--- The vector coverage of a root (`vectors = {embedded, chunks}`), nil when lexical (null/absent).
local function coverage(root)
  local v = root.vectors
  if type(v) == "table" and type(v.embedded) == "number" and type(v.chunks) == "number" then
    return v
  end
end

--- Lines describing a status result.
---@param s table {tier, roots, indexing}; each root may have vectors = {embedded, chunks}
---@return string[]
function M.status_lines(s)
  local lines = { "tier: " .. tostring(s.tier) }
  local embedded, chunks = 0, 0
  for _, root in ipairs(s.roots or {}) do
    local cov = coverage(root)
    local vectors = ""
    if cov then
      embedded, chunks = embedded + cov.embedded, chunks + cov.chunks
      vectors = (", %s/%s embedded"):format(M.thousands(cov.embedded), M.thousands(cov.chunks))
    end
    lines[#lines + 1] = ("%s: %s documents, %s chunks%s (store %s)"):format(
      root.root, root.documents or 0, M.thousands(root.chunks or 0), vectors, root.store or "?"
    )
  end
  -- Vectors still filling in behind the searchable lexical index (unless the tier line says so).
  if embedded < chunks and not tostring(s.tier):find("embedded", 1, true) then
    lines[1] = ("%s; %s/%s chunks embedded"):format(lines[1], M.thousands(embedded), M.thousands(chunks))
  end
  if s.indexing then
    lines[#lines + 1] = "indexing in progress"
  end
  return lines
end

--- "root: DIR (why it is the root)" for a client.
---@param client vim.lsp.Client
---@return string
function M.root_line(client)
  local dir = client.root_dir or "?"
  local why = client.root_dir and require("fisk.root").reason(dir, require("fisk.config").options.root_markers)
  return ("root: %s (%s)"):format(dir, why or "the client has no root folder")
end

--- :FiskStatus: tier, the client's root and why, per-root document and chunk counts, indexing
--- state.
function M.status()
  api.status(function(err, s, client)
    if err then
      return notify.error("status failed: " .. err)
    end
    progress.note_tier(client, s)
    local lines = M.status_lines(s)
    table.insert(lines, 2, M.root_line(client))
    notify.info(table.concat(lines, "\n"))
  end)
end

return M
