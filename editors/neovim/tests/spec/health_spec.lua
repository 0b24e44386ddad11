-- :checkhealth fisk with a running server and a built index.
local H = dofile(vim.fs.dirname(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2))) .. "/helpers.lua")

local root = H.workspace({
  ["README.md"] = { "# Readme", "", "The ocelot project documents cats." },
  ["docs/cats.md"] = { "# Cats", "", "## Ocelot", "", "The ocelot is a wild cat." },
})

local function health_lines()
  vim.cmd("checkhealth fisk")
  local buf = H.wait(20000, function()
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.bo[b].filetype == "checkhealth" then
        local lines = vim.api.nvim_buf_get_lines(b, 0, -1, false)
        if table.concat(lines, "\n"):find("fisk: clients and index") or table.concat(lines, "\n"):find("ERROR") then
          return b
        end
      end
    end
  end, "the health report")
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

H.run("health_spec", function()
  vim.cmd.cd(root)
  require("fisk").setup()
  vim.cmd.edit(root .. "/docs/cats.md")
  local client = H.client(0)
  H.wait_indexed(client)

  H.test(":checkhealth fisk reports the server, its version, the index and the tier as OK", function()
    local lines = health_lines()
    local text = table.concat(lines, "\n")
    local problems = vim.tbl_filter(function(l)
      return l:find("ERROR") or l:find("WARNING")
    end, lines)
    H.eq({}, problems, "ERROR/WARNING lines in\n" .. text)
    H.match(text, "OK `fisk%-ls` found: " .. vim.pesc(vim.fn.exepath("fisk-ls")), "executable")
    H.match(text, "OK version: %S+", "version")
    H.match(text, "OK client %d+ for " .. vim.pesc(root) .. ", attached to 1 buffer", "client")
    H.match(text, "OK index of " .. vim.pesc(root) .. ": 2 documents, %d+ chunks", "index counts")
    H.match(text, "OK embeddings tier: %S+", "tier")
  end)
end)
