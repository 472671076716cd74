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
    -- As the README says: inlay hints need Neovim 0.10+.
    on_attach = function(_, bufnr)
      if vim.lsp.inlay_hint then
        vim.lsp.inlay_hint.enable(true, { bufnr = bufnr })
      end
    end,
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

  -- The diagnostic's wiki link is a file Neovim opens (the server writes the page to
  -- the cache folder for clients that cannot resolve kernaut://): :KernautWiki opens it
  -- at the cited section's heading.
  local href = bank.user_data and bank.user_data.lsp and bank.user_data.lsp.codeDescription
    and bank.user_data.lsp.codeDescription.href
  check("the diagnostic links to a file:// page with an anchor", href and href:match("^file://.+%.md#.+$"), href)
  vim.api.nvim_win_set_cursor(0, { bank.lnum + 1, bank.col })
  vim.cmd("KernautWiki")
  local wiki_buf = vim.api.nvim_get_current_buf()
  local wiki_name = vim.api.nvim_buf_get_name(wiki_buf)
  local anchor = href and href:match("#(.+)$") or "?"
  local heading = vim.api.nvim_get_current_line()
  check(":KernautWiki opens the linked page file", wiki_name:match("pitfall%-bank%-conflict%.md$") ~= nil
    and wiki_name == vim.uri_to_fname(href:gsub("#.*$", "")), wiki_name)
  check(":KernautWiki puts the cursor on the cited section (" .. anchor .. ")",
    heading:match("^#+%s+" .. vim.pesc(anchor)) ~= nil, heading)
  vim.cmd("close")
  vim.cmd("buffer " .. buf)

  -- Inlay hints, where Neovim has them (0.10+), enabled in on_attach as the README shows.
  if vim.lsp.inlay_hint and vim.lsp.inlay_hint.get then
    local hints = {}
    local got_hints = vim.wait(20000, function()
      hints = vim.lsp.inlay_hint.get({ bufnr = buf })
      return #hints > 0
    end, 50)
    local labels = {}
    for _, h in ipairs(hints) do
      local label = h.inlay_hint.label
      table.insert(labels, type(label) == "string" and label or vim.inspect(label))
    end
    check("inlay hints shown (Neovim 0.10+, enabled in on_attach)", got_hints
      and vim.lsp.inlay_hint.is_enabled({ bufnr = buf }), vim.inspect(labels))
  else
    out("# inlay hints: this Neovim has no inlay-hint client (0.10+ has)")
  end
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

  -- Wiki entries of workspace/symbol are file:// pages too, so the quickfix list of
  -- vim.lsp.buf.workspace_symbol() jumps into them.
  vim.cmd("buffer " .. buf)
  local ws_resp = vim.lsp.buf_request_sync(buf, "workspace/symbol", { query = "pitfall-async-copy" }, 20000)
  local sym_uri
  for _, r in pairs(ws_resp or {}) do
    for _, sym in ipairs(r.result or {}) do
      sym_uri = sym_uri or (sym.location and sym.location.uri)
    end
  end
  check("workspace symbols link to file:// pages Neovim can open", sym_uri ~= nil and sym_uri:match("^file://") ~= nil
    and vim.fn.filereadable(vim.uri_to_fname(sym_uri)) == 1 and sym_uri:find("pitfall-async-copy", 1, true) ~= nil, sym_uri)

  -- Code lenses come on their own (refreshed on attach), and again after an edit is
  -- saved: a kernel added at the end gets its lenses.
  vim.cmd("buffer " .. buf)
  local function lenses()
    return vim.lsp.codelens.get(buf) or {}
  end
  local has_lenses = vim.wait(20000, function()
    return #lenses() > 0
  end, 50)
  local titles = {}
  for _, l in ipairs(lenses()) do
    table.insert(titles, (l.range.start.line + 1) .. ": " .. (l.command and l.command.title or "?"))
  end
  check("code lenses shown without asking (refresh on attach)", has_lenses, vim.inspect(titles))
  local last = vim.api.nvim_buf_line_count(buf)
  vim.api.nvim_buf_set_lines(buf, last, last, false, {
    "",
    "__global__ void scale(float* v, float s) {",
    "    v[blockIdx.x * blockDim.x + threadIdx.x] *= s;",
    "}",
  })
  vim.cmd("silent write")
  local new_kernel_line = last + 1 -- 0-based line of `__global__ void scale`
  local refreshed = vim.wait(20000, function()
    for _, l in ipairs(lenses()) do
      if l.range.start.line == new_kernel_line then
        return true
      end
    end
    return false
  end, 50)
  titles = {}
  for _, l in ipairs(lenses()) do
    table.insert(titles, (l.range.start.line + 1) .. ": " .. (l.command and l.command.title or "?"))
  end
  check("code lenses refresh after an edit is saved (the new kernel has one)", refreshed, vim.inspect(titles))

  -- :KernautReport on transpose: the report in a scratch Markdown buffer.
  local function scratch(name)
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_get_name(b):find(name, 1, true) then
        return b, table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n")
      end
    end
  end
  local tline
  for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    if l:find("void transpose", 1, true) then
      tline = i
    end
  end
  vim.api.nvim_win_set_cursor(0, { tline + 2, 4 })
  vim.cmd("KernautReport")
  local got_report = vim.wait(20000, function()
    return scratch("kernaut://report/transpose") ~= nil
  end, 50)
  local rb, report = scratch("kernaut://report/transpose")
  check(":KernautReport shows the report of the kernel at the cursor", got_report
    and report:find("# Kernel report: `transpose` on sm_80", 1, true) ~= nil, report)
  check("the report has its ranked costs", report and report:find("## Costs, ranked", 1, true) ~= nil, report)
  check("the report buffer is scratch Markdown", rb and vim.api.nvim_buf_get_option(rb, "buftype") == "nofile"
    and vim.api.nvim_buf_get_option(rb, "filetype") == "markdown")
  if rb then
    vim.api.nvim_buf_delete(rb, { force = true })
  end

  -- The "report" lens itself, run as a user runs a lens (vim.lsp.codelens.run()).
  vim.cmd("buffer " .. buf)
  local report_lens
  for _, l in ipairs(lenses()) do
    if l.command and l.command.command == "kernaut.kernelReport" and l.range.start.line == tline - 1 then
      report_lens = l
    end
  end
  if check("a report lens above transpose", report_lens ~= nil, vim.inspect(titles)) then
    vim.api.nvim_win_set_cursor(0, { tline, 0 })
    want = report_lens.command.title
    vim.lsp.codelens.run()
    local ran = vim.wait(20000, function()
      return scratch("kernaut://report/transpose") ~= nil
    end, 50)
    local _, text = scratch("kernaut://report/transpose")
    check("running the report lens opens the report", ran and text:find("Kernel report", 1, true) ~= nil, text)
  end

  -- :KernautDoctor: what the server uses for the folder, in a scratch Markdown buffer.
  vim.cmd("buffer " .. buf)
  vim.cmd("KernautDoctor")
  local got_doctor = vim.wait(20000, function()
    return scratch("kernaut://doctor") ~= nil
  end, 50)
  local db, doctor = scratch("kernaut://doctor")
  check(":KernautDoctor shows the doctor's report", got_doctor and doctor:find("# kernaut doctor", 1, true) ~= nil, doctor)
  check("the doctor names the file's target and why (the arch setting)",
    doctor and doctor:find("hover.cu: sm_80 (the kernaut.arch setting", 1, true) ~= nil, doctor)
  check("the doctor says which position encoding was negotiated", doctor and doctor:find("position encoding", 1, true) ~= nil, doctor)
  check("the doctor buffer is scratch Markdown", db and vim.api.nvim_buf_get_option(db, "buftype") == "nofile"
    and vim.api.nvim_buf_get_option(db, "filetype") == "markdown")

  -- Settings pushed on change.
  vim.cmd("buffer " .. buf)
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
