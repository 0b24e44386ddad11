-- Default client config for Neovim 0.11+ users who write vim.lsp.enable("fisk_ls") themselves.
-- require("fisk").setup() overrides it with the user's options.
return require("fisk.lsp").client_config(require("fisk.config").defaults)
