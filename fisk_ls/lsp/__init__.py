"""The fisk-ls language server (pygls)."""
