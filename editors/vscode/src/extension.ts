// The VS Code side of kernaut: starts `kernaut-lsp` for CUDA files and adds the wiki
// commands. Everything that can be decided without an editor lives in config.ts,
// serverPath.ts and search.ts (unit-tested); this file is the glue.
import * as fs from "fs";
import * as os from "os";
import * as vscode from "vscode";
import {
  CodeLensRequest,
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
} from "vscode-languageclient/node";
import { ARCHES, ExpandContext, InitOptions, RawSettings, toDidChangeConfiguration, toInitOptions } from "./config";
import {
  PageItem,
  targetToUriParts,
  toQuickPickItems,
  uriPartsToTarget,
  WIKI_SCHEME,
  wikiHrefToTarget,
} from "./search";
import { DOCTOR_PATH, pickReportLens, REPORT_COMMAND, reportPath } from "./report";
import { INSTALL_HINT, resolveServerPath } from "./serverPath";

const SELECTOR = [
  { scheme: "file", language: "cuda-cpp" },
  { scheme: "file", language: "cuda" },
  { scheme: "untitled", language: "cuda-cpp" },
  { scheme: "untitled", language: "cuda" },
];

interface WikiPage {
  id: string;
  title: string;
  markdown: string;
}

let client: LanguageClient | undefined;
let output: vscode.OutputChannel;
let status: vscode.StatusBarItem;
let missingMessage: string | undefined;
const pages = new Map<string, string>();
const pageChanged = new vscode.EventEmitter<vscode.Uri>();

function expandContext(): ExpandContext {
  const folder = vscode.workspace.workspaceFolders?.[0];
  return { workspaceFolder: folder?.uri.scheme === "file" ? folder.uri.fsPath : undefined, home: os.homedir() };
}

function settings(): InitOptions {
  const c = vscode.workspace.getConfiguration("kernaut");
  const raw: RawSettings = {
    arch: c.get("arch"),
    wikiPaths: c.get("wikiPaths"),
    rules: c.get("rules"),
    defaultBlockSize: c.get("defaultBlockSize"),
    inlayHints: c.get("inlayHints"),
    codeLens: c.get("codeLens"),
  };
  return toInitOptions(raw, expandContext());
}

function isExecutable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

function updateStatus(): void {
  const arch = settings().arch;
  if (missingMessage) {
    status.text = `$(error) kernaut ${arch}`;
    status.tooltip = missingMessage;
    status.command = "kernaut.restartServer";
  } else {
    status.text = `$(chip) ${arch}`;
    status.tooltip = `kernaut: target architecture ${arch} (click to change kernaut.arch)`;
    status.command = "kernaut.selectArch";
  }
  status.show();
}

function wikiUri(target: string): vscode.Uri {
  const p = targetToUriParts(target);
  return vscode.Uri.from({ scheme: p.scheme, path: p.path, query: p.query });
}

async function executeOnServer<T>(command: string, args: unknown[]): Promise<T> {
  const c = await readyClient();
  return c.sendRequest(ExecuteCommandRequest.type, { command, arguments: args }) as Promise<T>;
}

/** Opens a wiki page (a `kernaut-wiki:` virtual document) in the Markdown preview. */
async function openPage(target: string, page?: WikiPage): Promise<void> {
  const uri = wikiUri(target);
  if (page) {
    pages.set(uri.toString(), page.markdown);
    pageChanged.fire(uri);
  }
  try {
    await vscode.commands.executeCommand("markdown.showPreview", uri);
  } catch {
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: true });
  }
}

async function readyClient(): Promise<LanguageClient> {
  if (!client) {
    const msg = missingMessage ?? "kernaut: the language server is not running.";
    void showMissing(msg);
    throw new Error(msg);
  }
  if (client.state !== State.Running) await client.start();
  return client;
}

const SOURCE_WORDS = {
  setting: "the kernaut.server.path setting",
  env: "$KERNAUT_LSP",
  bundled: "the server bundled with this extension",
  PATH: "found on PATH",
  cargo: "found in ~/.cargo/bin",
} as const;

async function showMissing(message: string): Promise<void> {
  const settingsBtn = "Open Settings";
  const copyBtn = "Copy install command";
  // Notifications show no Markdown: `code` becomes "code".
  const plain = message.replace(/`([^`]*)`/g, '"$1"');
  const pick = await vscode.window.showErrorMessage(plain, settingsBtn, copyBtn);
  if (pick === settingsBtn) {
    await vscode.commands.executeCommand("workbench.action.openSettings", "kernaut.server.path");
  } else if (pick === copyBtn) {
    await vscode.env.clipboard.writeText("cargo install --path lsp");
  }
}

async function startClient(context: vscode.ExtensionContext): Promise<void> {
  const setting = vscode.workspace.getConfiguration("kernaut").get<string>("server.path");
  const res = resolveServerPath(setting, {
    env: process.env,
    platform: process.platform,
    home: os.homedir(),
    isExecutable,
    bundledDir: context.asAbsolutePath("server"),
  }, expandContext());
  if (!res.found) {
    missingMessage = res.message;
    output.appendLine(`${res.message}\nLooked at:\n  ${res.tried.join("\n  ")}`);
    updateStatus();
    void showMissing(res.message);
    return;
  }
  missingMessage = undefined;
  output.appendLine(`kernaut: starting ${res.path} (${SOURCE_WORDS[res.source]})`);

  const serverOptions: ServerOptions = { command: res.path, args: [], options: { env: process.env } };
  const clientOptions: LanguageClientOptions = {
    documentSelector: SELECTOR,
    initializationOptions: settings(),
    outputChannel: output,
    middleware: {
      // Code actions and lenses carry `kernaut.showPage`: show the page instead of only
      // asking the server for its markdown.
      executeCommand: async (command, args, next) => {
        if (command === "kernaut.showPage" && typeof args[0] === "string") {
          const page = (await next(command, args)) as WikiPage | null;
          if (page) await openPage(args[0], page);
          return page;
        }
        // The "report" lens: the kernel report as Markdown, opened in the preview. From
        // the command palette (no arguments): the report lens of the kernel at the cursor.
        if (command === REPORT_COMMAND) {
          const lensArgs = args.length > 0 ? args : await reportArgsAtCursor();
          if (!lensArgs) return null;
          const report = (await next(command, lensArgs)) as KernelReport | null;
          if (report) await openMarkdown(reportPath(report.kernel), report.markdown);
          return report;
        }
        // The doctor: what the server uses for the workspace folder, and why.
        if (command === "kernaut.doctor") {
          const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === "file");
          const doctorArgs = args.length > 0 ? args : folder ? [folder.uri.fsPath] : [];
          const doctor = (await next(command, doctorArgs)) as { markdown: string } | null;
          if (doctor) await openMarkdown(DOCTOR_PATH, doctor.markdown);
          return doctor;
        }
        return next(command, args);
      },
      // Wiki entries of "Go to Symbol in Workspace" (`kernaut://wiki/…` locations) open as
      // `kernaut-wiki:` documents, like the diagnostics' links.
      provideWorkspaceSymbols: async (query, token, next) => {
        const symbols = await next(query, token);
        for (const sym of symbols ?? []) {
          const target = wikiHrefToTarget(sym.location.uri.toString(true));
          if (target) sym.location = new vscode.Location(wikiUri(target), new vscode.Position(0, 0));
        }
        return symbols;
      },
      // `kernaut://wiki/<id>#<anchor>` in a diagnostic's code → the page as a virtual document.
      handleDiagnostics: (uri, diagnostics, next) => {
        for (const d of diagnostics) {
          const code = d.code;
          if (code && typeof code === "object" && code.target) {
            const target = wikiHrefToTarget(code.target.toString(true));
            if (target) d.code = { value: code.value, target: wikiUri(target) };
          }
        }
        next(uri, diagnostics);
      },
    },
  };
  client = new LanguageClient("kernaut", "kernaut", serverOptions, clientOptions);
  try {
    await client.start();
  } catch (e) {
    const msg = `kernaut: ${res.path} failed to start as a language server (${String(e)}). ` +
      `It needs a kernaut-lsp that speaks LSP on stdio. ${INSTALL_HINT}`;
    missingMessage = msg;
    void showMissing(msg);
  }
  updateStatus();
  context.subscriptions.push({ dispose: () => void client?.stop() });
}

/** What `kernaut.kernelReport` returns. */
interface KernelReport {
  kernel: string;
  markdown: string;
}

/** Shows Markdown from the server (a report, the doctor) as a `kernaut-wiki:` document in the preview. */
async function openMarkdown(docPath: string, markdown: string): Promise<void> {
  const uri = vscode.Uri.from({ scheme: WIKI_SCHEME, path: docPath });
  pages.set(uri.toString(), markdown);
  pageChanged.fire(uri);
  try {
    await vscode.commands.executeCommand("markdown.showPreview", uri);
  } catch {
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri), { preview: true });
  }
}

/** The arguments of the "report" lens of the kernel at the cursor, or undefined (said). */
async function reportArgsAtCursor(): Promise<unknown[] | undefined> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || !client) {
    void vscode.window.showInformationMessage("kernaut: open a CUDA file and put the cursor in a kernel.");
    return undefined;
  }
  const lenses = await client.sendRequest(CodeLensRequest.type, {
    textDocument: { uri: client.code2ProtocolConverter.asUri(editor.document.uri) },
  });
  const lens = pickReportLens(lenses, editor.selection.active.line);
  if (!lens || !lens.command) {
    void vscode.window.showInformationMessage("kernaut: no kernel in this file to report on.");
    return undefined;
  }
  return lens.command.arguments ?? [];
}

async function restartClient(context: vscode.ExtensionContext): Promise<void> {
  const old = client;
  client = undefined;
  if (old) await old.stop().catch(() => undefined);
  await startClient(context);
}

async function searchPitfalls(): Promise<void> {
  const query = await vscode.window.showInputBox({
    title: "kernaut: Search pitfalls by symptom",
    prompt: "Describe what you see, in your own words",
    placeHolder: "my async-copy version is slower than the plain loop",
  });
  if (!query || query.trim() === "") return;
  const results = await executeOnServer<unknown>("kernaut.search", [query, 30]);
  const items = toQuickPickItems(results);
  if (items.length === 0) {
    void vscode.window.showInformationMessage(`kernaut: nothing in the wiki matches "${query}".`);
    return;
  }
  const pick = await vscode.window.showQuickPick<PageItem & vscode.QuickPickItem>(items, {
    title: `kernaut: ${items.length} pages for "${query}"`,
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (!pick) return;
  const page = await executeOnServer<WikiPage>("kernaut.showPage", [pick.target]);
  await openPage(pick.target, page);
}

async function showSymbolPage(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showInformationMessage("kernaut: open a CUDA file and put the cursor on a symbol.");
    return;
  }
  const c = await readyClient();
  const pos = editor.selection.active;
  const page = await executeOnServer<WikiPage | null>("kernaut.symbolPage", [
    {
      uri: c.code2ProtocolConverter.asUri(editor.document.uri),
      position: { line: pos.line, character: pos.character },
    },
  ]);
  if (!page) {
    const word = editor.document.getText(editor.document.getWordRangeAtPosition(pos));
    void vscode.window.showInformationMessage(`kernaut: no wiki page for ${word ? `\`${word}\`` : "the symbol under the cursor"}.`);
    return;
  }
  await openPage(page.id, page);
}

async function selectArch(): Promise<void> {
  const current = settings().arch;
  const pick = await vscode.window.showQuickPick(
    ARCHES.map((a) => ({ label: a, description: a === current ? "current" : undefined })),
    { title: "kernaut: target architecture" },
  );
  if (!pick) return;
  const target = vscode.workspace.workspaceFolders ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  await vscode.workspace.getConfiguration("kernaut").update("arch", pick.label, target);
}

export interface KernautApi {
  client(): LanguageClient | undefined;
}

export async function activate(context: vscode.ExtensionContext): Promise<KernautApi> {
  output = vscode.window.createOutputChannel("kernaut");
  status = vscode.window.createStatusBarItem("kernaut.arch", vscode.StatusBarAlignment.Right, 100);
  status.name = "kernaut target architecture";
  context.subscriptions.push(output, status, pageChanged);

  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(WIKI_SCHEME, {
      onDidChange: pageChanged.event,
      provideTextDocumentContent: async (uri) => {
        const cached = pages.get(uri.toString());
        if (cached !== undefined) return cached;
        const target = uriPartsToTarget({ path: uri.path, query: uri.query });
        try {
          const page = await executeOnServer<WikiPage>("kernaut.showPage", [target]);
          pages.set(uri.toString(), page.markdown);
          return page.markdown;
        } catch (e) {
          return `# ${target}\n\nkernaut could not load this page: ${String(e)}\n`;
        }
      },
    }),
    vscode.commands.registerCommand("kernaut.searchPitfalls", () => searchPitfalls().catch(reportError)),
    vscode.commands.registerCommand("kernaut.showSymbolPage", () => showSymbolPage().catch(reportError)),
    vscode.commands.registerCommand("kernaut.selectArch", () => selectArch().catch(reportError)),
    vscode.commands.registerCommand("kernaut.restartServer", () => restartClient(context).catch(reportError)),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration("kernaut")) return;
      if (e.affectsConfiguration("kernaut.server.path") || !client) {
        void restartClient(context);
        return;
      }
      updateStatus();
      void client.sendNotification(DidChangeConfigurationNotification.type, toDidChangeConfiguration(settings()));
    }),
  );

  updateStatus();
  await startClient(context);
  return { client: () => client };
}

function reportError(e: unknown): void {
  const msg = e instanceof Error ? e.message : String(e);
  if (missingMessage && msg === missingMessage) return; // already shown with its buttons
  void vscode.window.showErrorMessage(`kernaut: ${msg}`);
}

export async function deactivate(): Promise<void> {
  if (client) await client.stop();
}
