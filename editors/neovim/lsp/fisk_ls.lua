-- Default client config for Neovim 0.11+ users who write vim.lsp.enable("fisk_ls") themselves.
-- require("fisk").setup() overrides it with the user's options.
local config = require("fisk.config")
return require("fisk.lsp").client_config(vim.tbl_extend("force", config.defaults, { cmd = config.default_cmd() }))
