-- kernaut for Neovim: registers kernaut-lsp for `cuda` buffers and adds :KernautSearch,
-- :KernautPage, :KernautArch, :KernautWiki, :KernautReport and :KernautDoctor. Works on Neovim 0.7 and newer:
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

-- Code lenses: Neovim asks for them only when told to. Refresh on attach, on entering
-- the buffer, after insert mode, on save and when the cursor rests (CursorHold, after
-- 'updatetime'), and on 0.10+ when the server ends a progress report (its wiki folders
-- indexed). Neovim 0.7's refresh takes no options and works on the current buffer.
local function refresh_lenses(bufnr)
  if not (M.config.settings.codeLens and vim.lsp.codelens and vim.lsp.codelens.refresh) then
    return
  end
  if not vim.api.nvim_buf_is_loaded(bufnr) then
    return
  end
  vim.api.nvim_buf_call(bufnr, function()
    pcall(vim.lsp.codelens.refresh, { bufnr = bufnr })
  end)
end

local lens_group
local function on_attach(client, bufnr)
  if client.name == NAME then
    lens_group = lens_group or vim.api.nvim_create_augroup("kernaut_codelens", { clear = true })
    vim.api.nvim_clear_autocmds({ group = lens_group, buffer = bufnr })
    vim.api.nvim_create_autocmd({ "BufEnter", "InsertLeave", "BufWritePost", "CursorHold" }, {
      group = lens_group,
      buffer = bufnr,
      callback = function()
        -- After Neovim has sent the edits (debounced) and didSave, not before.
        vim.defer_fn(function()
          refresh_lenses(bufnr)
        end, 250)
      end,
    })
    if vim.fn.exists("##LspProgress") == 1 then
      vim.api.nvim_create_autocmd("LspProgress", {
        group = lens_group,
        buffer = bufnr,
        callback = function(a)
          local value = a.data and a.data.params and a.data.params.value
          if value and value.kind == "end" then
            refresh_lenses(bufnr)
          end
        end,
      })
    end
    refresh_lenses(bufnr)
  end
  if M.config.on_attach then
    M.config.on_attach(client, bufnr)
  end
end

local function client_config(root)
  local c = M.config
  local settings = vim.tbl_extend("force", { wikiLinks = "file" }, c.settings)
  return {
    name = NAME,
    cmd = c.cmd,
    root_dir = root,
    workspace_folders = root and { { uri = vim.uri_from_fname(root), name = root } } or nil,
    init_options = settings,
    settings = { kernaut = settings },
    capabilities = c.capabilities,
    on_attach = on_attach,
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

-- Jumps to the heading of `anchor` (`## P1: ...`, or a heading whose slug it is).
local function goto_anchor(buf, anchor)
  if not anchor or anchor == "" then
    return
  end
  for i, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    local heading = line:match("^#+%s+(.*)$")
    if heading then
      local slug = heading:lower():gsub("[^%w%s-]", ""):gsub("%s+", "-")
      if heading:match("^" .. vim.pesc(anchor) .. "[%s:%.]") or heading == anchor or slug == anchor:lower() then
        vim.api.nvim_win_set_cursor(0, { i, 0 })
        return
      end
    end
  end
end

local page_bufs = {}
local function show_markdown(target, page, prefix)
  local name = (prefix or "kernaut://wiki/") .. target
  local buf = page_bufs[name]
  if not (buf and vim.api.nvim_buf_is_valid(buf)) then
    buf = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buf, name)
    page_bufs[name] = buf
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
  goto_anchor(buf, target:match("#(.+)$"))
  return buf
end

--- Opens a wiki link: `file:///…/ID.md#ANCHOR` (the server's links for Neovim) as the
--- file, at the anchor's heading; `kernaut://wiki/ID#ANCHOR` through kernaut.showPage.
function M.open_link(href)
  local target = href:match("^kernaut://wiki/(.+)$")
  if target then
    return M.show_page(target)
  end
  local path, anchor = href:match("^(file://[^#]*)#?(.*)$")
  if not path then
    return notify("not a wiki link: " .. href, vim.log.levels.WARN)
  end
  local file = vim.uri_to_fname(path)
  local win = vim.fn.bufwinid(vim.fn.bufnr(file))
  if win ~= -1 then
    vim.api.nvim_set_current_win(win)
  else
    if M.config.page_split and M.config.page_split ~= "" then
      vim.cmd(M.config.page_split)
    end
    vim.cmd("edit " .. vim.fn.fnameescape(file))
  end
  vim.bo.modifiable = false
  goto_anchor(vim.api.nvim_get_current_buf(), anchor)
end

local function diagnostic_href(d)
  local lsp = d.user_data and d.user_data.lsp
  local desc = lsp and lsp.codeDescription
  return desc and desc.href
end

--- :KernautWiki: the wiki section a kernaut diagnostic under the cursor cites.
function M.diagnostic_page()
  local lnum, col = unpack(vim.api.nvim_win_get_cursor(0))
  lnum = lnum - 1
  local best
  for _, d in ipairs(vim.diagnostic.get(0, { lnum = lnum })) do
    local href = diagnostic_href(d)
    if href and d.source == NAME then
      local end_col = (d.end_lnum == lnum and d.end_col) or math.huge
      local on = d.col <= col and col <= end_col
      if not best or (on and not best.on) then
        best = { href = href, on = on }
      end
    end
  end
  if not best then
    return notify("no kernaut diagnostic with a wiki link on this line")
  end
  M.open_link(best.href)
end

--- :KernautDoctor: what the server uses for this folder and why, in a scratch buffer.
function M.doctor()
  local client = buf_client()
  local name = vim.api.nvim_buf_get_name(0)
  local root = (client and client.config and client.config.root_dir)
    or (name ~= "" and vim.fn.filereadable(name) == 1 and vim.fn.fnamemodify(name, ":p:h"))
    or vim.fn.getcwd()
  execute("kernaut.doctor", { root }, function(report)
    if report and report ~= vim.NIL then
      show_markdown("doctor", report, "kernaut://")
    end
  end)
end

local function show_report(report)
  if report and report ~= vim.NIL then
    show_markdown(report.kernel, report, "kernaut://report/")
  end
end

--- :KernautReport: the kernel report of the kernel at (or above) the cursor, from the
--- server's "report" code lens.
function M.kernel_report()
  local bufnr = vim.api.nvim_get_current_buf()
  local client = buf_client(bufnr)
  if not client then
    return notify("no kernaut-lsp attached to this buffer", vim.log.levels.WARN)
  end
  local line = vim.api.nvim_win_get_cursor(0)[1] - 1
  local resp = vim.lsp.buf_request_sync(bufnr, "textDocument/codeLens", {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
  }, 10000)
  local best, first
  for _, r in pairs(resp or {}) do
    for _, lens in ipairs(r.result or {}) do
      if lens.command and lens.command.command == "kernaut.kernelReport" then
        first = first or lens
        if lens.range.start.line <= line and (not best or lens.range.start.line > best.range.start.line) then
          best = lens
        end
      end
    end
  end
  best = best or first
  if not best then
    return notify("no kernel in this file to report on")
  end
  execute("kernaut.kernelReport", best.command.arguments, show_report, bufnr)
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
    execute("kernaut.kernelReport", command.arguments, show_report)
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
    vim.api.nvim_create_user_command("KernautDoctor", function()
      M.doctor()
    end, { nargs = 0, desc = "kernaut: what the server uses for this folder, and why" })
    vim.api.nvim_create_user_command("KernautReport", function()
      M.kernel_report()
    end, { nargs = 0, desc = "kernaut: the kernel report of the kernel at the cursor" })
    vim.api.nvim_create_user_command("KernautWiki", function()
      M.diagnostic_page()
    end, { nargs = 0, desc = "kernaut: the wiki section of the diagnostic under the cursor" })
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
