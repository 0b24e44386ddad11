-- Buffer-local keys for buffers the fisk_ls client attaches to (K is Neovim's own hover).
local lsp = require("fisk.lsp")

local M = {}

---@param opts fisk.Options
function M.setup(opts)
  local group = vim.api.nvim_create_augroup("fisk.keys", { clear = true })
  if not opts.mappings then
    return
  end
  vim.api.nvim_create_autocmd("LspAttach", {
    group = group,
    callback = function(ev)
      local client = vim.lsp.get_client_by_id(ev.data.client_id)
      local lhs = opts.mappings.definition
      if not (client and client.name == lsp.name and lhs) then
        return
      end
      -- leave a key alone when the user (or another plugin) already mapped it, globally or here
      local mapped = vim.api.nvim_buf_call(ev.buf, function()
        return vim.fn.maparg(lhs, "n") ~= ""
      end)
      if mapped then
        return
      end
      vim.keymap.set("n", lhs, vim.lsp.buf.definition, {
        buffer = ev.buf,
        desc = "fisk: go to the cited lines",
      })
    end,
  })
end

return M
