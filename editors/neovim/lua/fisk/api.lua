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

---@param name string key of M.commands
---@param args table? the single argument object, or nil for none
---@param bufnr integer? buffer whose project is meant (default: current)
---@param cb fisk.Callback
local function execute(name, args, bufnr, cb)
  lsp.with_client(bufnr, function(err, client)
    if not client then
      return cb(err)
    end
    local params = { command = M.commands[name], arguments = args and { args } or {} }
    -- no bufnr: pending edits of every buffer are flushed to the server first
    local sent = lsp.request(client, "workspace/executeCommand", params, function(rerr, result)
      if rerr then
        return cb(lsp.error_message(rerr), nil, client)
      end
      if type(result) ~= "table" then
        return cb(("%s returned no result"):format(M.commands[name]), nil, client)
      end
      cb(nil, result, client)
    end)
    if not sent then
      cb(("the %s client has stopped; see :LspLog (%s)"):format(lsp.name, vim.lsp.get_log_path()))
    end
  end)
end

--- {tier, status, degraded, reason, results = {{citation, section, snippet, score, foundBy, location, also}}}
--- `opts.also`: extra search strings (up to 4; the server checks them) searched beside the query
--- and fused into one ranking: a keyword query in the docs' words, a hypothetical answer, a
--- rephrasing. Each result's `foundBy` names the strings that found it ("query", "also[0]", ...).
--- `opts.paths`: folders, files or globs (.gitignore syntax) to search in, relative to the
--- project root or absolute, sent unchanged; the results are the best inside them.
---@param query string
---@param opts? {top_k?: integer, bufnr?: integer, also?: string[], paths?: string[]}
---@param cb fisk.Callback
function M.search(query, opts, cb)
  opts = opts or {}
  execute("search", { query = query, topK = opts.top_k, also = opts.also, paths = opts.paths }, opts.bufnr, cb)
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
