-- Which folder a fisk_ls client serves (its root_dir), and why: the nearest folder above the file
-- holding a root marker (agent.yaml, .git); in a plain folder without one, the working directory
-- when it holds the file, else the file's own folder (single-file mode). Never the home
-- directory or `/` as a whole without a marker: the server would index everything under it.
local M = {}

--- Why each chosen root was chosen, by folder (for :FiskStatus and :checkhealth fisk).
---@type table<string, string>
M.reasons = {}

---@param path string
---@return string
function M.normalize(path)
  local p = vim.fs.normalize(vim.fn.fnamemodify(path, ":p")):gsub("/$", "")
  return p == "" and "/" or p
end

---@param root string
---@param path string
---@return boolean
function M.inside(root, path)
  return path == root or root == "/" or vim.startswith(path, root .. "/")
end

--- The file a buffer shows, or the working directory for scratch, help, quickfix... buffers.
---@param bufnr integer
---@return string path
---@return boolean is_dir
function M.anchor(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name ~= "" and vim.bo[bufnr].buftype == "" then
    return M.normalize(name), false
  end
  return M.normalize(vim.fn.getcwd()), true
end

-- The home directory or the filesystem root: too much to index without a marker saying so.
local function too_wide(dir)
  local home = vim.uv.os_homedir()
  return dir == "/" or (home ~= nil and dir == M.normalize(home))
end

local function chosen(root, reason)
  M.reasons[root] = reason
  return root, reason
end

--- The root for `path` and why; nil and why not (with what to do).
---@param path string absolute: a file, or with `is_dir` the folder a command runs from
---@param is_dir boolean
---@param markers string[]
---@param running? string[] roots of the clients already running (one holding `path` serves it)
---@return string? root
---@return string reason
function M.find(path, is_dir, markers, running)
  path = M.normalize(path)
  local found = vim.fs.root(path, markers)
  if found then
    found = M.normalize(found)
    for _, marker in ipairs(markers) do
      if vim.uv.fs_stat(found .. "/" .. marker) then
        return chosen(found, ("it holds %s"):format(marker))
      end
    end
    return chosen(found, "it holds a root marker")
  end
  local none = ("no %s in %s or above"):format(table.concat(markers, " or "), is_dir and path or vim.fs.dirname(path))
  for _, dir in ipairs(running or {}) do
    dir = M.normalize(dir)
    if M.inside(dir, path) and not vim.fs.root(dir, markers) then
      return dir, M.reasons[dir] or (none .. ": the folder of a running client, which holds it")
    end
  end
  local cwd = M.normalize(vim.fn.getcwd())
  if M.inside(cwd, path) and not too_wide(cwd) then
    return chosen(cwd, none .. (is_dir and ": the working directory" or ": the working directory, which holds the file"))
  end
  local folder = is_dir and path or vim.fs.dirname(path)
  if not too_wide(folder) then
    return chosen(folder, none .. ": the file's folder")
  end
  return nil,
    ("%s, and %s is not indexed as a whole: `:cd` into your docs folder (or open a file in it), "
      .. "or mark the project with `git init` or an agent.yaml"):format(none, folder == "/" and "/" or "the home directory")
end

--- The root for a buffer (its file, or the working directory) and why; nil and why not.
---@param bufnr integer
---@param markers string[]
---@param running? string[]
---@return string? root
---@return string reason
function M.for_buffer(bufnr, markers, running)
  local path, is_dir = M.anchor(bufnr)
  return M.find(path, is_dir, markers, running)
end

--- Why `dir` is a client's root: as chosen here, else (a client started by other means) whether
--- it holds a marker.
---@param dir string
---@param markers string[]
---@return string
function M.reason(dir, markers)
  dir = M.normalize(dir)
  if M.reasons[dir] then
    return M.reasons[dir]
  end
  for _, marker in ipairs(markers) do
    if vim.uv.fs_stat(dir .. "/" .. marker) then
      return ("it holds %s"):format(marker)
    end
  end
  return ("it holds no %s: the folder the client was started on"):format(table.concat(markers, " or "))
end

return M
