-- One function per server command (docs/lsp-protocol.md). Each calls back cb(err, result, client)
-- where err is a message string; nothing here talks to the user.
local lsp = require("fisk.lsp")

local M = {}

M.commands = {
  search = "fisk.knowledge.search",
  show = "fisk.knowledge.show",
  reindex = "fisk.knowledge.reindex",
  status = "fisk.knowledge.status",
}

---@alias fisk.Callback fun(err: string?, result: table?, client: vim.lsp.Client?)

---@class fisk.Request
---@field cancel fun() stops waiting: the callback is not called, and a request sent is cancelled

---@param name string key of M.commands
---@param args table? the single argument object, or nil for none
---@param bufnr integer? buffer whose project is meant (default: current)
---@param cb fisk.Callback
---@return fisk.Request
local function execute(name, args, bufnr, cb)
  local cancelled, sent_to = false, nil
  lsp.with_client(bufnr, function(err, client)
    if cancelled then
      return
    end
    if not client then
      return cb(err)
    end
    local params = { command = M.commands[name], arguments = args and { args } or {} }
    -- no bufnr: pending edits of every buffer are flushed to the server first
    local sent, id = lsp.request(client, "workspace/executeCommand", params, function(rerr, result)
      if cancelled then
        return
      end
      if rerr then
        return cb(lsp.error_message(rerr), nil, client)
      end
      if type(result) ~= "table" then
        return cb(("%s returned no result"):format(M.commands[name]), nil, client)
      end
      cb(nil, result, client)
    end)
    if not sent then
      return cb(("the %s client has stopped; see :LspLog (%s)"):format(lsp.name, vim.lsp.get_log_path()))
    end
    sent_to = { client = client, id = id }
  end)
  return {
    cancel = function()
      cancelled = true
      if sent_to then
        pcall(lsp.cancel_request, sent_to.client, sent_to.id)
      end
    end,
  }
end

--- {tier, status, degraded, reason, results = {{citation, section, snippet, score, foundBy, location, copies}}}
--- `opts.also`: extra search strings (up to 4; the server checks them) searched beside the query
--- and fused into one ranking: a keyword query in the docs' words, a hypothetical answer, a
--- rephrasing. Each result's `foundBy` names the strings that found it ("query", "also[0]", ...).
--- `opts.paths`: folders, files or globs (.gitignore syntax) to search in, relative to the
--- project root or absolute, sent unchanged; the results are the best inside them.
--- `opts.expand`: when the plain results are weak, the server asks its language model (the
--- `expansion` setting) for extra search strings and fuses them; the result's `expansion` says
--- what happened ("off", "not needed", "used", "cached" or "failed: <reason>") and
--- `expansionStrings` holds the strings fused.
---@param query string
--- `opts.tags`: front-matter tags (a union) to keep the search to, sent unchanged.
--- `opts.top_k`: how many results (1-20; default: the server's `topK` setting, else the
--- plugin's `top_k` option when set).
---@param opts? {top_k?: integer, bufnr?: integer, also?: string[], paths?: string[], tags?: string[], expand?: boolean}
---@param cb fisk.Callback
---@return fisk.Request
function M.search(query, opts, cb)
  opts = opts or {}
  local top_k = opts.top_k or require("fisk.config").options.top_k or nil
  local args = { query = query, topK = top_k, also = opts.also, paths = opts.paths, tags = opts.tags }
  if opts.expand then
    args.expand = true
  end
  return execute("search", args, opts.bufnr, cb)
end

--- {citation, section, content, location, stale}
---@param citation string relpath#ordinal
---@param cb fisk.Callback
---@param bufnr? integer
function M.show(citation, cb, bufnr)
  execute("show", { citation = citation }, bufnr, cb)
end

--- {files, added, updated, skipped, removed, chunks}
---@param rebuild boolean drop the index and build it again
---@param cb fisk.Callback
---@param bufnr? integer
function M.reindex(rebuild, cb, bufnr)
  execute("reindex", { rebuild = rebuild == true }, bufnr, cb)
end

--- {tier, roots = {{root, store, documents, chunks}}, indexing}
---@param cb fisk.Callback
---@param bufnr? integer
function M.status(cb, bufnr)
  execute("status", nil, bufnr, cb)
end

return M
