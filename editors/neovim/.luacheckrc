-- luacheck (Debian: apt-get install lua-check), run from editors/neovim: `luacheck .`
std = "luajit"
globals = { "vim" }
read_globals = { "Snacks", "MiniPick" }
max_line_length = false
