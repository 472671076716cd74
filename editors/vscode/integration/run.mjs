// Integration test of the packaged extension in a real VS Code build: code-server
// (installed by setup-code-server.sh) in headless Debian Chromium driven by
// playwright-core. Opens a .cu file, checks the status bar, hover on __hfma2, applies the
// bank-conflict quick fix and runs "kernaut: Search pitfalls by symptom".
//
//   CODE_SERVER_DIR=/tmp/kernaut-code-server KERNAUT_LSP=/path/to/kernaut-lsp node integration/run.mjs
//   CODE_SERVER_DIR=/tmp/kernaut-code-server KERNAUT_VSIX=dist/kernaut-linux-x64-0.1.0.vsix node integration/run.mjs
//
// With KERNAUT_LSP, the `kernaut.server.path` setting points at it. Without it, the
// .vsix must be the platform one `scripts/dist --vsix` builds, with the server inside:
// code-server then runs with no kernaut-lsp on PATH, no $KERNAUT_LSP and a HOME without
// ~/.cargo/bin, so the hover can only come from the bundled server. SCREENSHOT_DIR, when
// set, receives PNGs of the hover and the quick fix.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const ext = path.resolve(here, "..");
const editors = path.resolve(ext, "..");
const csDir = process.env.CODE_SERVER_DIR || "/tmp/kernaut-code-server";
const entry = path.join(csDir, "node_modules/code-server/out/node/entry.js");
const server = process.env.KERNAUT_LSP || "";
const bundled = server === "";
const vsix = process.env.KERNAUT_VSIX || path.join(ext, "kernaut.vsix");
const chromium = process.env.CHROMIUM || "/usr/bin/chromium";
const shots = process.env.SCREENSHOT_DIR;
const port = Number(process.env.PORT || 18000 + Math.floor(Math.random() * 1000));

if (!fs.existsSync(entry)) {
  console.error(`code-server is not in ${csDir}: run integration/setup-code-server.sh (CODE_SERVER_DIR=${csDir})`);
  process.exit(2);
}
if (!fs.existsSync(vsix)) {
  console.error(`${vsix} is missing: run npm run build && npm run package first`);
  process.exit(2);
}
const { chromium: pw } = createRequire(path.join(csDir, "package.json"))("playwright-core");

let passed = 0;
let failed = 0;
function check(name, ok, detail) {
  if (ok) {
    passed++;
    console.log(`ok - ${name}`);
  } else {
    failed++;
    console.log(`not ok - ${name}${detail ? `\n  ${String(detail).slice(0, 2000).replace(/\n/g, "\n  ")}` : ""}`);
  }
  return ok;
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "kernaut-vscode-"));
const ws = path.join(tmp, "ws");
const userData = path.join(tmp, "user");
const extDir = path.join(tmp, "ext");
fs.mkdirSync(path.join(ws, ".vscode"), { recursive: true });
fs.mkdirSync(path.join(userData, "User"), { recursive: true });
fs.copyFileSync(path.join(editors, "fixtures/hover.cu"), path.join(ws, "hover.cu"));
fs.writeFileSync(
  path.join(userData, "User/settings.json"),
  JSON.stringify({
    "security.workspace.trust.enabled": false,
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": false,
    "telemetry.telemetryLevel": "off",
    "extensions.autoUpdate": false,
    "extensions.autoCheckUpdates": false,
    "editor.hover.delay": 100,
    "window.commandCenter": false,
  }),
);
fs.writeFileSync(
  path.join(ws, ".vscode/settings.json"),
  JSON.stringify(bundled ? { "kernaut.arch": "sm_80" } : { "kernaut.server.path": server, "kernaut.arch": "sm_80" }),
);
// The environment of code-server (and so of the extension host): in the bundled mode no
// kernaut-lsp anywhere the extension looks besides its own folder.
const csEnv = { ...process.env, KERNAUT_LSP: "" };
if (bundled) {
  const home = path.join(tmp, "home");
  fs.mkdirSync(home, { recursive: true });
  csEnv.HOME = home;
  delete csEnv.CARGO_HOME;
  csEnv.PATH = (process.env.PATH || "")
    .split(":")
    .filter((d) => d !== "" && !fs.existsSync(path.join(d, "kernaut-lsp")))
    .join(":");
}

function run(args) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [entry, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (out += d));
    p.on("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(`code-server ${args.join(" ")}: ${code}\n${out}`))));
  });
}

const common = ["--user-data-dir", userData, "--extensions-dir", extDir];
let cs;
let csLog = "";
try {
  const installed = await run([...common, "--install-extension", vsix]);
  check("the .vsix installs into code-server", /successfully installed/.test(installed), installed);
  if (bundled) {
    const dirs = fs.existsSync(extDir) ? fs.readdirSync(extDir).filter((d) => d.startsWith("kernaut.")) : [];
    const exe = dirs.map((d) => path.join(extDir, d, "server/kernaut-lsp")).find((p) => fs.existsSync(p));
    let executable = false;
    try {
      fs.accessSync(exe, fs.constants.X_OK);
      executable = true;
    } catch {
      executable = false;
    }
    check("the installed extension holds an executable server/kernaut-lsp", executable, `${extDir}: ${dirs.join(", ")}`);
    check("no kernaut-lsp on code-server's PATH", !csEnv.PATH.split(":").some((d) => fs.existsSync(path.join(d, "kernaut-lsp"))));
  }

  cs = spawn(
    process.execPath,
    [entry, ...common, "--auth", "none", "--bind-addr", `127.0.0.1:${port}`, "--disable-telemetry",
      "--disable-update-check", "--disable-workspace-trust", "--disable-getting-started-override", ws],
    { stdio: ["ignore", "pipe", "pipe"], env: csEnv },
  );
  cs.stdout.on("data", (d) => (csLog += d));
  cs.stderr.on("data", (d) => (csLog += d));
  await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`code-server did not start:\n${csLog}`)), 60000);
    const poll = setInterval(() => {
      if (/HTTP server listening/.test(csLog)) {
        clearTimeout(t);
        clearInterval(poll);
        resolve();
      }
    }, 100);
  });

} catch (e) {
  check("code-server installs the extension and starts", false, e && e.stack ? e.stack : e);
  if (cs) cs.kill("SIGTERM");
  fs.rmSync(tmp, { recursive: true, force: true });
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(1);
}

const browser = await pw.launch({ executablePath: chromium, headless: true, args: ["--no-sandbox"] });
const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
const mod = "Control";
const shot = async (name) => {
  if (shots) {
    fs.mkdirSync(shots, { recursive: true });
    await page.screenshot({ path: path.join(shots, name) });
  }
};
const text = (sel) => page.locator(sel).first().innerText({ timeout: 5000 }).catch(() => "");
const norm = (s) => s.replace(/\u00a0/g, " ");

async function command(title) {
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input.input");
  await input.waitFor({ state: "visible", timeout: 10000 });
  await input.fill(`>${title}`);
  await page.locator(".quick-input-list .monaco-list-row").first().waitFor({ timeout: 10000 });
  await page.keyboard.press("Enter");
}

async function waitForTab(re) {
  let tabs = "";
  for (let i = 0; i < 60 && !re.test(tabs); i++) {
    await page.waitForTimeout(300);
    tabs = norm(await text(".tabs-container"));
  }
  return tabs;
}

async function focusTab(name) {
  await page.locator(".tabs-container .tab").filter({ hasText: name }).first().click();
  await page.waitForTimeout(300);
}

async function gotoLineCol(line, col) {
  await page.keyboard.press(`${mod}+G`);
  const input = page.locator(".quick-input-widget input.input");
  await input.waitFor({ state: "visible", timeout: 10000 });
  await input.fill(`:${line}:${col}`);
  await page.keyboard.press("Enter");
  await page.waitForTimeout(300);
}

try {
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
  await page.locator(".monaco-workbench").waitFor({ timeout: 60000 });
  await page.waitForTimeout(2000);

  // Open hover.cu with quick open.
  await page.keyboard.press(`${mod}+P`);
  const qi = page.locator(".quick-input-widget input.input");
  await qi.waitFor({ state: "visible", timeout: 10000 });
  await qi.fill("hover.cu");
  await page.locator(".quick-input-list .monaco-list-row").first().waitFor({ timeout: 10000 });
  await page.keyboard.press("Enter");
  await page.locator(".monaco-editor .view-lines").first().waitFor({ timeout: 20000 });

  // Status bar: the arch from the workspace settings.
  let status = "";
  for (let i = 0; i < 60 && !status.includes("sm_80"); i++) {
    await page.waitForTimeout(500);
    status = norm(await text(".statusbar"));
  }
  check("status bar shows the target arch (sm_80)", status.includes("sm_80"), status);

  // Hover on __hfma2 (line 7, column 17 of the fixture).
  let hover = "";
  for (let i = 0; i < 10 && !hover.includes("__hfma2"); i++) {
    await gotoLineCol(7, 17);
    await page.keyboard.press(`${mod}+K`);
    await page.keyboard.press(`${mod}+I`);
    await page.waitForTimeout(1000);
    hover = norm(await text(".monaco-hover:not(.hidden)"));
  }
  check("hover on __hfma2 shows its wiki entry", hover.includes("__hfma2") && hover.includes("sm_53"), hover);
  check("hover reflects kernaut.arch (sm_80)", hover.includes("sm_80"), hover);
  await shot("vscode-hover.png");
  await page.keyboard.press("Escape");

  // "kernaut: Show wiki page for symbol" on __hfma2.
  await command("kernaut: Show wiki page for symbol");
  const symTabs = await waitForTab(/Preview api-fp16-arithmetic/);
  check("Show wiki page for symbol opens the page of __hfma2", /Preview api-fp16-arithmetic/.test(symTabs), symTabs);
  await focusTab("hover.cu");

  // Diagnostics → quick fix on the column load of line 15.
  let problems = "";
  for (let i = 0; i < 20 && !problems.includes("bank conflict"); i++) {
    await page.waitForTimeout(500);
    problems = norm(await page.locator(".squiggly-warning, .squiggly-error").count().then((n) => (n > 0 ? "bank conflict" : "")));
  }
  check("a bank-conflict squiggle is shown", problems.includes("bank conflict"));

  // The diagnostic's code links to its wiki anchor (kernaut://wiki/… rewritten to a
  // kernaut-wiki: document): hover the squiggle and follow the link.
  let diagHover = "";
  for (let i = 0; i < 10 && !diagHover.includes("bank-conflict"); i++) {
    await gotoLineCol(15, 30);
    await page.keyboard.press(`${mod}+K`);
    await page.keyboard.press(`${mod}+I`);
    await page.waitForTimeout(800);
    diagHover = norm(await text(".monaco-hover:not(.hidden)"));
  }
  const codeLink = page.locator(".monaco-hover:not(.hidden) a").filter({ hasText: "bank-conflict" }).first();
  let linkTabs = "";
  try {
    await codeLink.click({ timeout: 5000 });
    linkTabs = await waitForTab(/pitfall-bank-conflict\.md/);
  } catch (e) {
    linkTabs = `${e}`;
  }
  check("the diagnostic's code links to its wiki page", /pitfall-bank-conflict\.md/.test(linkTabs), `${diagHover}\n${linkTabs}`);
  await shot("vscode-diagnostic-link.png");
  await focusTab("hover.cu");

  // The code action "Show wiki page" (a kernaut.showPage command) opens the page. The
  // server files it as a source action (Source Action… menu); the stand-in as a quick
  // fix (Ctrl+.): look in both.
  async function pickAction(title, open) {
    await open();
    const row = page.locator(".action-widget .monaco-list-row:not(.group-header)").filter({ hasText: title }).first();
    try {
      await row.waitFor({ timeout: 4000 });
    } catch {
      await page.keyboard.press("Escape");
      return false;
    }
    // The menu is driven by keyboard (a pointer-block layer covers it for mouse clicks).
    const rows = await page.locator(".action-widget .monaco-list-row:not(.group-header)").allInnerTexts();
    const idx = rows.findIndex((r) => r.includes(title));
    for (let i = 0; i < idx; i++) await page.keyboard.press("ArrowDown");
    return true;
  }
  await gotoLineCol(15, 30);
  const quickFixMenu = () => page.keyboard.press(`${mod}+.`);
  const sourceMenu = () => command("Source Action...");
  if (!(await pickAction("Show wiki", quickFixMenu))) {
    await gotoLineCol(15, 30);
    check("a 'Show wiki' action is offered (quick fix or source action)", await pickAction("Show wiki", sourceMenu));
  }
  await page.keyboard.press("Enter");
  const wikiTabs = await waitForTab(/Preview pitfall-bank-conflict/);
  check("the code action 'Show wiki page' opens the pitfall in a preview", /Preview pitfall-bank-conflict/.test(wikiTabs), wikiTabs);
  await focusTab("hover.cu");
  await gotoLineCol(15, 30);
  await page.keyboard.press(`${mod}+.`);
  const item = page.locator(".action-widget .monaco-list-row, .action-widget li").filter({ hasText: "Pad the rows" }).first();
  let offered = "";
  try {
    await item.waitFor({ timeout: 10000 });
    offered = norm(await text(".action-widget"));
    await shot("vscode-quickfix.png");
    // The menu is driven by keyboard (a pointer-block layer covers it for mouse clicks).
    const rows = await page.locator(".action-widget .monaco-list-row:not(.group-header)").allInnerTexts();
    const idx = rows.findIndex((r) => r.includes("Pad the rows"));
    for (let i = 0; i < idx; i++) await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
  } catch (e) {
    offered = `${e}`;
  }
  let line12 = "";
  for (let i = 0; i < 20 && !line12.includes("tile[32][33]"); i++) {
    await page.waitForTimeout(300);
    line12 = norm(await text(".monaco-editor .view-lines"));
  }
  check("quick fix 'Pad the rows of tile' applied (tile[32][33])", line12.includes("tile[32][33]"), `${offered}\n${line12}`);

  // The text of the Markdown preview (a webview: its text lives in a nested frame) once
  // it holds `needle`.
  async function previewText(needle) {
    let rendered = "";
    for (let i = 0; i < 40 && !rendered.includes(needle); i++) {
      await page.waitForTimeout(500);
      for (const f of page.frames()) {
        const t = await f.evaluate(() => (document.body ? document.body.innerText : "")).catch(() => "");
        if (t.includes(needle)) rendered = t;
      }
    }
    return norm(rendered);
  }

  // A wiki entry picked in "Go to Symbol in Workspace" opens as a page.
  await focusTab("hover.cu");
  await command("Go to Symbol in Workspace...");
  const symInput = page.locator(".quick-input-widget input.input");
  await symInput.waitFor({ state: "visible", timeout: 10000 });
  await symInput.fill("#pitfall-async-copy");
  let symbols = "";
  for (let i = 0; i < 20 && !symbols.includes("pitfall-async-copy"); i++) {
    await page.waitForTimeout(300);
    symbols = norm(await text(".quick-input-list"));
  }
  await page.keyboard.press("Enter");
  const symTabs2 = await waitForTab(/pitfall-async-copy\.md/);
  check("a wiki symbol from Go to Symbol in Workspace opens its page", /pitfall-async-copy\.md/.test(symTabs2),
    `${symbols}\n${symTabs2}`);
  await focusTab("hover.cu");

  // The kernel report of the kernel at the cursor, from the command palette.
  await focusTab("hover.cu");
  await gotoLineCol(13, 5);
  await command("kernaut: Kernel report of the kernel at the cursor");
  const reportTabs = await waitForTab(/Preview transpose\.md/);
  check("Kernel report opens the report of transpose in a preview", /Preview transpose\.md/.test(reportTabs), reportTabs);
  const report = await previewText("Kernel report: transpose on sm_80");
  check("the preview renders the report (Kernel report: transpose on sm_80, costs ranked)",
    report.includes("Kernel report: transpose on sm_80") && report.includes("Costs, ranked"), report.slice(0, 1500));
  await shot("vscode-kernel-report.png");

  // The doctor, from the command palette.
  await focusTab("hover.cu");
  await command("kernaut: Doctor");
  const doctorTabs = await waitForTab(/Preview doctor\.md/);
  check("Doctor opens its report in a preview", /Preview doctor\.md/.test(doctorTabs), doctorTabs);
  const doctor = await previewText("kernaut doctor");
  check("the doctor names the file's target and why (the kernaut.arch setting)",
    doctor.includes("hover.cu: sm_80 (the kernaut.arch setting"), doctor.slice(0, 1500));
  await shot("vscode-doctor.png");

  if (bundled) {
    // The extension says which server it started.
    await command("Output: Show Output Channels...");
    const oc = page.locator(".quick-input-widget input.input");
    await oc.waitFor({ state: "visible", timeout: 10000 });
    await oc.fill("kernaut");
    await page.locator(".quick-input-list .monaco-list-row").first().waitFor({ timeout: 10000 });
    await page.keyboard.press("Enter");
    let log = "";
    for (let i = 0; i < 20 && !log.includes("bundled"); i++) {
      await page.waitForTimeout(300);
      // The panel wraps long lines: compare with the line breaks as spaces.
      log = norm(await text(".part.panel .monaco-editor .view-lines")).replace(/\s+/g, " ");
    }
    check("the extension started the server bundled with it", log.includes("(the server bundled with this extension)"), log);
  }

  // Search pitfalls by symptom → quick pick → Markdown preview.
  await command("kernaut: Search pitfalls by symptom");
  const box = page.locator(".quick-input-widget input.input");
  await box.waitFor({ state: "visible", timeout: 10000 });
  await page.waitForTimeout(300);
  await box.fill("my async-copy version is slower than the plain loop");
  await page.keyboard.press("Enter");
  let picks = "";
  for (let i = 0; i < 20 && !picks.includes("pitfall-async-copy"); i++) {
    await page.waitForTimeout(300);
    picks = norm(await text(".quick-input-list"));
  }
  check("search results in a quick pick", picks.includes("pitfall-async-copy"), picks);
  // The end of the first item's title, as the rendered page will show it (the preview
  // panel is reused, so the check must tell this page from the previous one).
  const firstLabel = norm(await text(".quick-input-list .monaco-list-row .label-name")).replace(/`/g, "").trim();
  const titleTail = firstLabel.slice(-24);
  await page.keyboard.press("Enter");
  const tabs = await waitForTab(/Preview.*pitfall-async-copy/);
  check("the chosen page opens in a Markdown preview", /Preview.*pitfall-async-copy/.test(tabs), tabs);
  // The preview is a webview: its text lives in a nested frame.
  let rendered = "";
  for (let i = 0; i < 40 && !rendered.includes(titleTail); i++) {
    await page.waitForTimeout(500);
    for (const f of page.frames()) {
      const t = await f.evaluate(() => (document.body ? document.body.innerText : "")).catch(() => "");
      if (t.includes(titleTail)) rendered = t;
    }
  }
  check(`the preview renders the chosen page ("…${titleTail}")`, titleTail !== "" && rendered.includes(titleTail), firstLabel);
  await page.waitForTimeout(500);
  await shot("vscode-search-preview.png");

  // A server path that points at nothing: the error says how to install the server.
  fs.writeFileSync(
    path.join(ws, ".vscode/settings.json"),
    JSON.stringify({ "kernaut.server.path": "/nonexistent/kernaut-lsp", "kernaut.arch": "sm_80" }),
  );
  let toast = "";
  for (let i = 0; i < 40 && !toast.includes("cargo install --path lsp"); i++) {
    await page.waitForTimeout(500);
    toast = norm(await text(".notifications-toasts"));
  }
  check("a missing kernaut-lsp gives an error naming `cargo install --path lsp`", toast.includes("cargo install --path lsp"), toast);
  await shot("vscode-missing-server.png");
} catch (e) {
  check("integration test ran without error", false, e && e.stack ? e.stack : e);
  await shot("vscode-failure.png");
} finally {
  await browser.close();
  cs.kill("SIGTERM");
  fs.rmSync(tmp, { recursive: true, force: true });
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
