// Pure: the extension's settings → the server's initializationOptions (PROTOCOL.md).
// No `vscode` import here, so vitest runs it without an editor.
import * as os from "os";
import * as path from "path";

export type RuleLevel = "off" | "hint" | "info" | "warning" | "error";
export const RULE_LEVELS: readonly RuleLevel[] = ["off", "hint", "info", "warning", "error"];
export const DEFAULT_ARCH = "sm_90";

/** What `kernaut.*` settings hold (any of them may be missing or of the wrong type). */
export interface RawSettings {
  arch?: unknown;
  wikiPaths?: unknown;
  rules?: unknown;
  defaultBlockSize?: unknown;
  inlayHints?: unknown;
  codeLens?: unknown;
}

/** The `initializationOptions` / `settings.kernaut` object the server reads. */
export interface InitOptions {
  arch: string;
  wikiPaths: string[];
  rules: Record<string, RuleLevel>;
  defaultBlockSize?: number | [number, number, number];
  inlayHints: boolean;
  codeLens: boolean;
  /** The extension opens `kernaut://wiki/…` links itself (as `kernaut-wiki:` documents). */
  wikiLinks: "kernaut";
}

export interface ExpandContext {
  /** First workspace folder's path, for `${workspaceFolder}` and relative paths. */
  workspaceFolder?: string;
  home?: string;
}

/** `~`, `${workspaceFolder}`, `${userHome}` and `${env:NAME}` expanded; relative paths resolved against the workspace. */
export function expandPath(p: string, ctx: ExpandContext, env: NodeJS.ProcessEnv = process.env): string {
  const home = ctx.home ?? os.homedir();
  let out = p.trim();
  if (out === "~") out = home;
  else if (out.startsWith("~/")) out = path.join(home, out.slice(2));
  out = out.replace(/\$\{userHome\}/g, home);
  out = out.replace(/\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => env[name] ?? "");
  if (ctx.workspaceFolder !== undefined) {
    out = out.replace(/\$\{workspaceFolder\}/g, ctx.workspaceFolder);
    if (out !== "" && !path.isAbsolute(out)) out = path.resolve(ctx.workspaceFolder, out);
  }
  return out;
}

export function normalizeArch(arch: unknown): string {
  if (typeof arch !== "string") return DEFAULT_ARCH;
  const a = arch.trim().toLowerCase();
  if (/^sm_\d+[a-z]?$/.test(a)) return a;
  if (/^\d+[a-z]?$/.test(a)) return `sm_${a}`; // "90" → sm_90
  const cc = /^(\d+)\.(\d+)$/.exec(a); // "9.0" → sm_90
  if (cc) return `sm_${cc[1]}${cc[2]}`;
  return DEFAULT_ARCH;
}

function blockSize(v: unknown): InitOptions["defaultBlockSize"] {
  const ok = (n: unknown): n is number => typeof n === "number" && Number.isInteger(n) && n > 0;
  if (ok(v)) return v;
  if (Array.isArray(v) && v.length >= 1 && v.length <= 3 && v.every(ok)) {
    const [x, y = 1, z = 1] = v as number[];
    return [x, y, z];
  }
  return undefined;
}

export function toInitOptions(raw: RawSettings, ctx: ExpandContext = {}): InitOptions {
  const wikiPaths = Array.isArray(raw.wikiPaths)
    ? raw.wikiPaths.filter((p): p is string => typeof p === "string" && p.trim() !== "").map((p) => expandPath(p, ctx))
    : [];
  const rules: Record<string, RuleLevel> = {};
  if (raw.rules && typeof raw.rules === "object" && !Array.isArray(raw.rules)) {
    for (const [id, level] of Object.entries(raw.rules as Record<string, unknown>)) {
      if (typeof level === "string" && (RULE_LEVELS as readonly string[]).includes(level)) {
        rules[id] = level as RuleLevel;
      }
    }
  }
  const opts: InitOptions = {
    arch: normalizeArch(raw.arch),
    wikiPaths,
    rules,
    inlayHints: raw.inlayHints !== false,
    codeLens: raw.codeLens !== false,
    wikiLinks: "kernaut",
  };
  const bs = blockSize(raw.defaultBlockSize);
  if (bs !== undefined) opts.defaultBlockSize = bs;
  return opts;
}

/** The `workspace/didChangeConfiguration` params for the same settings. */
export function toDidChangeConfiguration(opts: InitOptions): { settings: { kernaut: InitOptions } } {
  return { settings: { kernaut: opts } };
}

export const ARCHES: readonly string[] = [
  "sm_50", "sm_52", "sm_53", "sm_60", "sm_61", "sm_62", "sm_70", "sm_72", "sm_75",
  "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_100", "sm_103", "sm_110", "sm_120", "sm_121",
];
