-- The settings contract: lua/fisk/config.lua's copy of the server's settings and limits must equal
-- fisk_ls/knowledge/settings.schema.json (generated from the Python core), and setup() must treat
-- a bad setting as the server does (default kept, one warning naming every bad field).
-- No server needed.
local H = dofile(vim.fs.dirname(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2))) .. "/helpers.lua")

local repo = vim.fs.dirname(vim.fs.dirname(H.plugin_dir))
local schema_file = repo .. "/fisk_ls/knowledge/settings.schema.json"

--- The schema file's properties.
local function server_schema()
  assert(vim.uv.fs_stat(schema_file), schema_file .. " exists (python -m fisk_ls.knowledge.settings_schema --write)")
  return vim.json.decode(table.concat(vim.fn.readfile(schema_file), "\n")).properties
end

-- Built-in provider fields config.lua marks `pending` are compared only once the schema has them.
local server_embeddings

--- A property without its description (what both sides must agree on).
local function limits(p)
  local out = {}
  for _, key in ipairs({ "type", "minimum", "maximum", "maxLength", "default", "items", "required", "enum" }) do
    out[key] = p[key]
  end
  if p.items then
    out.items = { type = p.items.type }
  end
  if p.properties then
    out.properties = {}
    for name, sub in pairs(p.properties) do
      if not (sub.pending and not (server_embeddings or {})[name]) then
        out.properties[name] = limits(sub)
      end
    end
  end
  return out
end

H.run("contract_spec", function()
  local config = require("fisk.config")
  local server = server_schema()
  server_embeddings = server.embeddings.properties

  H.test("config.lua knows every server setting, with the schema's type, limits and default", function()
    for key, p in pairs(server) do
      H.assert(config.schema[key], "config.lua lacks the server setting " .. key)
      H.eq(limits(p), limits(config.schema[key]), key)
    end
    for key in pairs(config.schema) do
      H.assert(server[key], key .. " is not a server setting")
    end
  end)

  H.test("topK at the limits is kept; one past them keeps the default with one warning", function()
    local topk = server.topK
    for _, good in ipairs({ topk.minimum, topk.maximum }) do
      local from = #H.notes
      local opts = config.setup({ settings = { topK = good } })
      H.eq(good, opts.settings.topK, "topK " .. good)
      H.eq(nil, H.note("invalid settings", from), "no warning for " .. good)
    end
    for _, bad in ipairs({ topk.minimum - 1, topk.maximum + 1, 2.5, "3" }) do
      local from = #H.notes
      local opts = config.setup({ settings = { topK = bad, paths = { "docs" } } })
      H.eq(nil, opts.settings.topK, "topK " .. vim.inspect(bad) .. " is dropped, so the server's default applies")
      H.eq({ "docs" }, opts.settings.paths, "the good settings stay")
      local n = H.note("invalid settings", from)
      H.assert(n, "a warning for topK " .. vim.inspect(bad))
      H.eq(vim.log.levels.WARN, n.level, "level")
      H.eq(("fisk: ignoring invalid settings, using defaults for: fisk.topK (expected an integer from %d to %d, got %s)")
        :format(topk.minimum, topk.maximum, vim.inspect(bad)), n.msg, "message")
      H.eq(from + 1, #H.notes, "one message")
    end
  end)

  H.test("every bad setting is named in the one message", function()
    local from = #H.notes
    local opts = config.setup({
      settings = { paths = "docs", watch = "yes", embeddings = { baseUrl = "http://127.0.0.1:1/v1" }, topK = 3, exclude = { "site/" } },
    })
    H.eq({ topK = 3, exclude = { "site/" } }, opts.settings, "only the valid settings are sent")
    H.eq(from + 1, #H.notes, "one message")
    local msg = H.notes[from + 1].msg
    H.match(msg, "fisk%.paths %(expected a list of strings, got \"docs\"%)", "paths")
    H.match(msg, "fisk%.watch %(expected true or false, got \"yes\"%)", "watch")
    H.match(msg, "fisk%.embeddings %(baseUrl and model are required%)", "embeddings")
    from = #H.notes
    opts = config.setup({ settings = { embeddings = { baseUrl = "http://x/v1", model = "m", timeout = 0 } } })
    H.eq(nil, opts.settings.embeddings, "embeddings with a bad field are left out, as the server does")
    H.eq("fisk: ignoring invalid settings, using defaults for: fisk.embeddings.timeout (expected a number from 0.1 to 3600, got 0)",
      H.notes[from + 1].msg, "message")
  end)

  H.test("the builtin provider needs no baseUrl, and refuses one; an unknown provider is named", function()
    local from = #H.notes
    local opts = config.setup({ settings = { embeddings = { provider = "builtin", modelPath = "/models/minilm", threads = 1 } } })
    H.eq({ provider = "builtin", modelPath = "/models/minilm", threads = 1 }, opts.settings.embeddings, "builtin kept")
    H.eq(from, #H.notes, "no warning")
    opts = config.setup({ settings = { embeddings = { provider = "builtin", baseUrl = "http://x/v1" } } })
    H.eq(nil, opts.settings.embeddings, "builtin with a baseUrl is left out")
    H.match(H.notes[#H.notes].msg, "fisk%.embeddings%.baseUrl %(not used with provider builtin%)", "message")
    opts = config.setup({ settings = { embeddings = { provider = "ollama", baseUrl = "http://x/v1", model = "m" } } })
    H.eq(nil, opts.settings.embeddings, "unknown provider left out")
    H.match(H.notes[#H.notes].msg, 'fisk%.embeddings%.provider %(expected one of openai, builtin, got "ollama"%)', "message")
  end)

  H.test(":FiskStatus lines show the embedding coverage of a hybrid root, nothing for a lexical one", function()
    local lines = require("fisk.commands").status_lines({
      tier = "hybrid (m, 384d)",
      indexing = false,
      roots = {
        { root = "/a", store = "/s/a", documents = 40, chunks = 6628, vectors = { embedded = 2310, chunks = 6628 } },
        { root = "/b", store = "/s/b", documents = 2, chunks = 9, vectors = vim.NIL },
        { root = "/c", store = "/s/c", documents = 1, chunks = 3 },
      },
    })
    H.eq("tier: hybrid (m, 384d); 2,310/6,628 chunks embedded", lines[1], "summary")
    H.eq("/a: 40 documents, 6,628 chunks, 2,310/6,628 embedded (store /s/a)", lines[2], "hybrid root")
    H.eq("/b: 2 documents, 9 chunks (store /s/b)", lines[3], "lexical root (null)")
    H.eq("/c: 1 documents, 3 chunks (store /s/c)", lines[4], "lexical root (absent)")
    local done = require("fisk.commands").status_lines({
      tier = "hybrid",
      roots = { { root = "/a", documents = 1, chunks = 5, vectors = { embedded = 5, chunks = 5 } } },
    })
    H.eq("tier: hybrid", done[1], "no summary when every chunk is embedded")
    local told = require("fisk.commands").status_lines({
      tier = "hybrid (m, 384d); 1 of 5 chunks embedded",
      roots = { { root = "/a", documents = 1, chunks = 5, vectors = { embedded = 1, chunks = 5 } } },
    })
    H.eq("tier: hybrid (m, 384d); 1 of 5 chunks embedded", told[1], "the tier line's own coverage is not repeated")
    H.eq("/a: 1 documents, 5 chunks, 5/5 embedded (store ?)", done[2], "complete root")
  end)
end)
