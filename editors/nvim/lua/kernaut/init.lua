-- kernaut for Neovim: registers kernaut-lsp for `cuda` buffers and adds :KernautSearch,
-- :KernautPage and :KernautArch. Works on Neovim 0.7 and newer:
--   0.11+     vim.lsp.config() + vim.lsp.enable()
--   0.8-0.10  vim.lsp.start() from a FileType autocmd
--   0.7       vim.lsp.start_client() + vim.lsp.buf_attach_client(), one client per root
local M = {}

local NAME = "kernaut"
local INSTALL_HINT = "Install it with `cargo install --path lsp` from a kernaut checkout "
  .. "(it lands in ~/.cargo/bin), or pass its path: require('kernaut').setup{ cmd = { '/path/to/kernaut-lsp' } }."

M.defaults = {
  -- The server command; the first word is looked up on PATH, then in ~/.cargo/bin.
  -- $KERNAUT_LSP, when set, wins over the default.
  cmd = nil,
  filetypes = { "cuda" },
  root_markers = { ".kernaut.toml", "compile_commands.json", ".git" },
  -- Sent as initializationOptions and as workspace/didChangeConfiguration {kernaut = ...}.
  settings = {
    arch = "sm_90",
    wikiPaths = {},
    rules = vim.empty_dict and vim.empty_dict() or {},
    inlayHints = true,
    codeLens = true,
  },
  on_attach = nil,
  capabilities = nil,
  -- How a wiki page opens: an Ex command run before the scratch buffer is shown.
  page_split = "vsplit",
  -- Create :KernautSearch, :KernautPage and :KernautArch.
  commands = true,
}

M.config = nil

local function notify(msg, level)
  vim.notify("kernaut: " .. msg, level or vim.log.levels.INFO)
end

local function get_clients()
  local all
  if vim.lsp.get_clients then
    all = vim.lsp.get_clients({ name = NAME })
  else
    all = vim.lsp.get_active_clients()
  end
  local out = {}
  for _, c in ipairs(all) do
    if c.name == NAME and not (c.is_stopped and c.is_stopped()) then
      table.insert(out, c)
    end
  end
  return out
end

local function buf_client(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local fallback
  for _, c in ipairs(get_clients()) do
    if c.attached_buffers and c.attached_buffers[bufnr] then
      return c
    end
    fallback = fallback or c
  end
  return fallback
end

--- The server command: setup{cmd}, else $KERNAUT_LSP, else kernaut-lsp on PATH, else ~/.cargo/bin.
function M.resolve_cmd(cmd)
  if type(cmd) == "string" then
    cmd = { cmd }
  end
  if cmd == nil then
    local env = vim.env.KERNAUT_LSP
    if env ~= nil and env ~= "" then
      cmd = { env }
    else
      cmd = { "kernaut-lsp" }
    end
  end
  cmd = vim.deepcopy(cmd)
  cmd[1] = vim.fn.expand(cmd[1])
  if vim.fn.executable(cmd[1]) == 1 then
    return cmd
  end
  local cargo_home = vim.env.CARGO_HOME
  if cargo_home == nil or cargo_home == "" then
    cargo_home = vim.fn.expand("~/.cargo")
  end
  local in_cargo = cargo_home .. "/bin/" .. cmd[1]
  if not cmd[1]:find("/") and vim.fn.executable(in_cargo) == 1 then
    cmd[1] = in_cargo
    return cmd
  end
  return nil, ("could not find the language server `%s` (not executable, not on PATH, not in %s/bin). %s"):format(
    cmd[1],
    cargo_home,
    INSTALL_HINT
  )
end

local function root_dir(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local dir = name ~= "" and vim.fn.fnamemodify(name, ":p:h") or vim.fn.getcwd()
  for _, marker in ipairs(M.config.root_markers) do
    local found = vim.fn.finddir(marker, dir .. ";")
    if found == "" then
      found = vim.fn.findfile(marker, dir .. ";")
    end
    if found ~= "" then
      local full = (vim.fn.fnamemodify(found, ":p"):gsub("/$", ""))
      return vim.fn.fnamemodify(full, ":h")
    end
  end
  return dir
end

local function client_config(root)
  local c = M.config
  return {
    name = NAME,
    cmd = c.cmd,
    root_dir = root,
    workspace_folders = root and { { uri = vim.uri_from_fname(root), name = root } } or nil,
    init_options = c.settings,
    settings = { kernaut = c.settings },
    capabilities = c.capabilities,
    on_attach = c.on_attach,
    handlers = c.handlers,
  }
end

-- Neovim 0.7: one client per root, started by hand and attached to each buffer.
local roots = {}
local function attach_07(bufnr)
  local root = root_dir(bufnr)
  local id = roots[root]
  local client = id and vim.lsp.get_client_by_id(id)
  if not client or (client.is_stopped and client.is_stopped()) then
    id = vim.lsp.start_client(client_config(root))
    roots[root] = id
  end
  if id then
    vim.lsp.buf_attach_client(bufnr, id)
  end
end

local function attach(bufnr)
  if vim.lsp.start then
    vim.lsp.start(client_config(root_dir(bufnr)), { bufnr = bufnr })
  else
    attach_07(bufnr)
  end
end

-- Sends the current settings to every running kernaut client.
function M.push_settings()
  for _, c in ipairs(get_clients()) do
    c.config.settings = { kernaut = M.config.settings }
    c.notify("workspace/didChangeConfiguration", { settings = { kernaut = M.config.settings } })
  end
end

function M.set_arch(arch)
  M.config.settings.arch = arch
  M.push_settings()
  notify("target architecture " .. arch)
end

-- Runs `command` on the server; `cb(result)` on success. Starts a client (not attached to
-- any buffer) when none runs, so the search works from any buffer.
local function execute(command, arguments, cb, bufnr)
  local client = buf_client(bufnr)
  if not client then
    local cmd, err = M.resolve_cmd(M.config.cmd_input)
    if not cmd then
      return notify(err, vim.log.levels.ERROR)
    end
    local id = vim.lsp.start_client(client_config(vim.fn.getcwd()))
    client = id and vim.lsp.get_client_by_id(id)
    local ok = client
      and vim.wait(20000, function()
        return client.initialized == true or (client.server_capabilities ~= nil and next(client.server_capabilities) ~= nil)
      end, 20)
    if not ok then
      return notify("kernaut-lsp did not start", vim.log.levels.ERROR)
    end
  end
  client.request("workspace/executeCommand", { command = command, arguments = arguments }, function(err, result)
    if err then
      return notify(command .. ": " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
    cb(result)
  end, bufnr or 0)
end

local page_bufs = {}
local function show_markdown(target, page)
  local name = "kernaut://wiki/" .. target
  local buf = page_bufs[target]
  if not (buf and vim.api.nvim_buf_is_valid(buf)) then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, name)
    page_bufs[target] = buf
  end
  vim.api.nvim_buf_set_option(buf, "buftype", "nofile")
  vim.api.nvim_buf_set_option(buf, "bufhidden", "hide")
  vim.api.nvim_buf_set_option(buf, "swapfile", false)
  vim.api.nvim_buf_set_option(buf, "modifiable", true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(page.markdown or "", "\n", { plain = true }))
  vim.api.nvim_buf_set_option(buf, "modifiable", false)
  vim.api.nvim_buf_set_option(buf, "filetype", "markdown")
  local win = vim.fn.bufwinid(buf)
  if win == -1 then
    if M.config.page_split and M.config.page_split ~= "" then
      vim.cmd(M.config.page_split)
    end
    vim.api.nvim_win_set_buf(0, buf)
  else
    vim.api.nvim_set_current_win(win)
  end
  -- Jump to the anchor's heading (`## P1: ...`) when there is one.
  local anchor = target:match("#(.+)$")
  if anchor then
    for i, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
      if line:match("^#+%s+" .. vim.pesc(anchor) .. "[%s:%.]") or line:match("^#+%s+" .. vim.pesc(anchor) .. "$") then
        vim.api.nvim_win_set_cursor(0, { i, 0 })
        break
      end
    end
  end
  return buf
end

--- Opens a wiki page (`pitfall-bank-conflict#P1` or an id) in a scratch markdown buffer.
function M.show_page(target)
  execute("kernaut.showPage", { target }, function(page)
    if page then
      show_markdown(target, page)
    end
  end)
end

--- :KernautSearch {symptom}
function M.search(query)
  if query == nil or query == "" then
    return notify("usage: :KernautSearch {symptom in your own words}", vim.log.levels.WARN)
  end
  execute("kernaut.search", { query, 30 }, function(results)
    if type(results) ~= "table" or #results == 0 then
      return notify(('nothing in the wiki matches "%s"'):format(query))
    end
    vim.ui.select(results, {
      prompt = "kernaut: " .. query,
      kind = "kernaut.search",
      format_item = function(r)
        local target = r.target or (r.anchor and r.anchor ~= vim.NIL and (r.id .. "#" .. r.anchor)) or r.id
        return ("%s  [%s]"):format(r.title, target)
      end,
    }, function(choice)
      if choice then
        local target = choice.target
          or (choice.anchor and choice.anchor ~= vim.NIL and (choice.id .. "#" .. choice.anchor))
          or choice.id
        M.show_page(target)
      end
    end)
  end)
end

--- :KernautPage: the wiki page of the symbol under the cursor.
function M.symbol_page()
  local bufnr = vim.api.nvim_get_current_buf()
  local client = buf_client(bufnr)
  if not client then
    return notify("no kernaut-lsp attached to this buffer", vim.log.levels.WARN)
  end
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding or "utf-16")
  local word = vim.fn.expand("<cword>")
  execute("kernaut.symbolPage", { { uri = params.textDocument.uri, position = params.position } }, function(page)
    if page == nil or page == vim.NIL then
      return notify(("no wiki page for `%s`"):format(word))
    end
    show_markdown(page.id, page)
  end, bufnr)
end

function M.setup(opts)
  opts = opts or {}
  local cfg = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  if opts.settings and opts.settings.rules then
    cfg.settings.rules = opts.settings.rules
  end
  cfg.cmd_input = opts.cmd
  M.config = cfg

  -- Code actions and lenses carry `kernaut.showPage`: show the page, not only its markdown.
  vim.lsp.commands["kernaut.showPage"] = function(command)
    M.show_page(command.arguments[1])
  end
  -- The "report" lens carries `kernaut.kernelReport`: the kernel report in a scratch buffer.
  vim.lsp.commands["kernaut.kernelReport"] = function(command)
    execute("kernaut.kernelReport", command.arguments, function(report)
      if report and report ~= vim.NIL then
        show_markdown("report-" .. report.kernel, report)
      end
    end)
  end

  if cfg.commands then
    vim.api.nvim_create_user_command("KernautSearch", function(a)
      M.search(a.args)
    end, { nargs = "+", desc = "kernaut: search the wiki's pitfalls by symptom" })
    vim.api.nvim_create_user_command("KernautPage", function()
      M.symbol_page()
    end, { nargs = 0, desc = "kernaut: wiki page of the symbol under the cursor" })
    vim.api.nvim_create_user_command("KernautArch", function(a)
      if a.args == "" then
        return notify("target architecture " .. M.config.settings.arch)
      end
      M.set_arch(a.args)
    end, { nargs = "?", desc = "kernaut: show or set the target architecture (sm_90)" })
  end

  local cmd, err = M.resolve_cmd(opts.cmd)
  if not cmd then
    notify(err, vim.log.levels.ERROR)
    return false
  end
  cfg.cmd = cmd

  if vim.lsp.config and vim.lsp.enable and not cfg.use_autocmd then
    local c = client_config(nil)
    c.root_dir = nil
    c.workspace_folders = nil
    c.filetypes = cfg.filetypes
    c.root_markers = cfg.root_markers
    vim.lsp.config(NAME, c)
    vim.lsp.enable(NAME)
    return true
  end

  local group = vim.api.nvim_create_augroup("kernaut", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = cfg.filetypes,
    callback = function(a)
      attach(a.buf)
    end,
  })
  -- Buffers already open when setup runs.
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.tbl_contains(cfg.filetypes, vim.api.nvim_buf_get_option(b, "filetype")) then
      attach(b)
    end
  end
  return true
end

return M
