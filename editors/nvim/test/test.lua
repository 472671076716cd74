-- Driven by run.sh: opens a .cu file, waits for kernaut-lsp, then checks hover on
-- __hfma2, applies the bank-conflict quick fix through vim.lsp.buf.code_action, runs
-- :KernautSearch and :KernautPage, and asserts on what Neovim received.
local passed, failed = 0, 0
local function out(s)
  io.stdout:write(s .. "\n")
  io.stdout:flush()
end
local function check(name, ok, detail)
  if ok then
    passed = passed + 1
    out("ok - " .. name)
  else
    failed = failed + 1
    out("not ok - " .. name .. (detail and ("\n  " .. tostring(detail):gsub("\n", "\n  ")) or ""))
  end
  return ok
end
local function finish()
  out(("%d passed, %d failed"):format(passed, failed))
  vim.cmd(failed == 0 and "qall!" or "cquit 1")
end

-- Messages from the plugin are printed on lines of their own (headless Neovim would
-- otherwise write them after the summary line).
vim.notify = function(msg, level)
  out("# notify(" .. tostring(level) .. "): " .. tostring(msg))
end

local ok_all, err = pcall(function()
  vim.lsp.set_log_level("debug")
  if vim.lsp.get_log_path then
    -- the log lives under XDG_STATE_HOME/XDG_CACHE_HOME of the test
    out("lsp log: " .. vim.lsp.get_log_path())
  end
  vim.cmd("filetype on")

  -- vim.ui.select is replaced by a picker that records what it was offered and picks the
  -- first item whose text matches `want`.
  local offered, want = nil, nil
  vim.ui.select = function(items, opts, on_choice)
    offered = {}
    local pick
    for _, item in ipairs(items) do
      local text = opts.format_item and opts.format_item(item) or tostring(item)
      if type(item) == "table" then
        local action = item.action or item[2]
        if type(action) == "table" and action.title then
          text = action.title
        end
      end
      table.insert(offered, text)
      if not pick and want and text:find(want, 1, true) then
        pick = item
      end
    end
    on_choice(pick)
  end

  local kernaut = require("kernaut")
  local missing, why = kernaut.resolve_cmd({ "/nonexistent/kernaut-lsp" })
  check(
    "a missing server is reported with the install command",
    missing == nil and why:find("cargo install --path lsp", 1, true) ~= nil,
    why
  )
  local ok_setup = kernaut.setup({
    cmd = { os.getenv("KERNAUT_LSP") },
    settings = { arch = "sm_80" },
    -- KERNAUT_NVIM_USE_AUTOCMD=1 tests the FileType-autocmd path on a Neovim that has
    -- vim.lsp.config (the path Neovim 0.8-0.10 takes).
    use_autocmd = os.getenv("KERNAUT_NVIM_USE_AUTOCMD") == "1",
  })
  out("# registration: " .. ((vim.lsp.config and vim.lsp.enable and os.getenv("KERNAUT_NVIM_USE_AUTOCMD") ~= "1")
    and "vim.lsp.config + vim.lsp.enable" or (vim.lsp.start and "FileType autocmd + vim.lsp.start")
    or "FileType autocmd + vim.lsp.start_client (0.7)"))
  check("setup finds the server", ok_setup == true)

  vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("KERNAUT_TEST_FILE")))
  local buf = vim.api.nvim_get_current_buf()
  check("a .cu file is a cuda buffer", vim.bo.filetype == "cuda", vim.bo.filetype)

  local client
  local attached = vim.wait(30000, function()
    for _, c in ipairs(vim.lsp.get_clients and vim.lsp.get_clients() or vim.lsp.get_active_clients()) do
      if c.name == "kernaut" and c.attached_buffers[buf] and (c.initialized or next(c.server_capabilities or {}) ~= nil) then
        client = c
        return true
      end
    end
    return false
  end, 50)
  if not check("kernaut-lsp attaches to the buffer", attached) then
    return
  end

  -- Hover on __hfma2.
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local hl, hc
  for i, l in ipairs(lines) do
    local c = l:find("__hfma2(", 1, true) -- the call, not the comment that names it
    if c then
      hl, hc = i - 1, c + 1
      break
    end
  end
  local resp = vim.lsp.buf_request_sync(buf, "textDocument/hover", {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = hl, character = hc },
  }, 20000)
  local hover
  for _, r in pairs(resp or {}) do
    if r.result and r.result.contents then
      hover = r.result.contents.value or vim.inspect(r.result.contents)
    end
  end
  check("hover on __hfma2 names it", hover and hover:find("__hfma2", 1, true), vim.inspect(resp))
  check("hover shows the required architecture", hover and hover:find("sm_53", 1, true), hover)
  check("hover reflects the arch from the settings (sm_80)", hover and hover:find("sm_80", 1, true), hover)

  -- Diagnostics, then the quick fix through Neovim's own code-action UI.
  local diags
  vim.wait(30000, function()
    diags = vim.diagnostic.get(buf)
    return #diags > 0
  end, 50)
  local bank
  for _, d in ipairs(diags) do
    local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
    if code == "bank-conflict" then
      bank = d
    end
  end
  if not check("bank-conflict diagnostic published", bank ~= nil, vim.inspect(diags)) then
    return
  end
  check("diagnostic source is kernaut", bank.source == "kernaut", bank.source)
  local decl_line
  for i, l in ipairs(lines) do
    if l:find("__shared__ float tile", 1, true) then
      decl_line = i
    end
  end
  vim.api.nvim_win_set_cursor(0, { bank.lnum + 1, bank.col })
  want = "Pad the rows"
  offered = nil
  vim.lsp.buf.code_action()
  local applied = vim.wait(20000, function()
    return vim.api.nvim_buf_get_lines(buf, decl_line - 1, decl_line, false)[1]:find("tile[32][33]", 1, true) ~= nil
  end, 50)
  check(
    "quick fix offered and applied (tile[32][32] -> tile[32][33])",
    applied,
    vim.inspect(offered) .. "\n" .. vim.api.nvim_buf_get_lines(buf, decl_line - 1, decl_line, false)[1]
  )
  out("# code actions offered: " .. table.concat(offered or {}, " | "))
  local cleared = vim.wait(20000, function()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
      if code == "bank-conflict" then
        return false
      end
    end
    return true
  end, 50)
  check("the bank-conflict diagnostic goes away after the fix", cleared)

  -- :KernautSearch → vim.ui.select → scratch markdown buffer.
  -- A scratch markdown buffer of a wiki page whose name contains `name_part` and whose
  -- text matches the Lua pattern `pattern`.
  local function page_buffer(pattern, name_part)
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      local name = vim.api.nvim_buf_get_name(b)
      if name:find("kernaut://wiki/" .. (name_part or ""), 1, true) and vim.api.nvim_buf_get_option(b, "filetype") == "markdown" then
        local text = table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n")
        if text:find(pattern) then
          return b, name, text
        end
      end
    end
  end
  want = "pitfall-async-copy"
  offered = nil
  vim.cmd("KernautSearch my async-copy version is slower than the plain loop")
  local found = vim.wait(20000, function()
    return page_buffer("[Aa]sync", "pitfall-async-copy") ~= nil
  end, 50)
  check("search results offered through vim.ui.select", offered and #offered > 0, vim.inspect(offered))
  local pb, pname = page_buffer("[Aa]sync", "pitfall-async-copy")
  check("search result opens its page in a scratch markdown buffer", found, vim.inspect(offered))
  if pb then
    check("page buffer is a scratch buffer", vim.api.nvim_buf_get_option(pb, "buftype") == "nofile", pname)
  end

  -- :KernautPage on __hfma2.
  vim.cmd("buffer " .. buf)
  vim.api.nvim_win_set_cursor(0, { hl + 1, hc })
  vim.cmd("KernautPage")
  local symbol_page = vim.wait(20000, function()
    return page_buffer("__hfma2") ~= nil
  end, 50)
  check(":KernautPage opens the page of __hfma2", symbol_page)

  -- Settings pushed on change.
  vim.cmd("KernautArch sm_75")
  vim.wait(200)
  local resp2 = vim.lsp.buf_request_sync(buf, "textDocument/hover", {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = hl, character = hc },
  }, 20000)
  local hover2
  for _, r in pairs(resp2 or {}) do
    if r.result and r.result.contents then
      hover2 = r.result.contents.value
    end
  end
  check(":KernautArch sm_75 reaches the server (hover says sm_75)", hover2 and hover2:find("sm_75", 1, true), hover2)
end)
if not ok_all then
  check("test script ran without error", false, err)
end
finish()
