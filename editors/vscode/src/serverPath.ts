// Pure: where `kernaut-lsp` is. The file system and environment are passed in so the
// unit tests can describe any machine.
import * as path from "path";
import { expandPath, ExpandContext } from "./config";

export const SERVER_NAME = "kernaut-lsp";
export const INSTALL_HINT =
  "Install the kernaut extension for your platform (it bundles the server), or a prebuilt archive, " +
  "or run `cargo install --path lsp` from a kernaut checkout (it lands in ~/.cargo/bin), " +
  "or set `kernaut.server.path` to the binary.";

export interface Host {
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  home: string;
  /** true when the path is a file this user may execute */
  isExecutable(p: string): boolean;
  /** the folder of the server bundled in a platform-specific .vsix (`<extension>/server`) */
  bundledDir?: string;
}

export type Resolution =
  | { found: true; path: string; source: "setting" | "env" | "bundled" | "PATH" | "cargo"; tried: string[] }
  | { found: false; tried: string[]; message: string };

function exeName(platform: NodeJS.Platform): string {
  return platform === "win32" ? `${SERVER_NAME}.exe` : SERVER_NAME;
}

export function resolveServerPath(setting: string | undefined, host: Host, ctx: ExpandContext = {}): Resolution {
  const tried: string[] = [];
  const pathMod = host.platform === "win32" ? path.win32 : path.posix;
  const check = (p: string) => {
    tried.push(p);
    return host.isExecutable(p);
  };
  const fullCtx = { home: host.home, ...ctx };

  if (setting && setting.trim() !== "") {
    const p = expandPath(setting, fullCtx, host.env);
    if (check(p)) return { found: true, path: p, source: "setting", tried };
    return {
      found: false,
      tried,
      message:
        `kernaut: the language server was not found at \`${p}\` (setting \`kernaut.server.path\`). ` + INSTALL_HINT,
    };
  }
  const fromEnv = host.env.KERNAUT_LSP;
  if (fromEnv && fromEnv.trim() !== "") {
    const p = expandPath(fromEnv, fullCtx, host.env);
    if (check(p)) return { found: true, path: p, source: "env", tried };
  }
  if (host.bundledDir) {
    const p = pathMod.join(host.bundledDir, exeName(host.platform));
    if (check(p)) return { found: true, path: p, source: "bundled", tried };
  }
  const sep = host.platform === "win32" ? ";" : ":";
  const pathVar = host.env.PATH ?? host.env.Path ?? "";
  for (const dir of pathVar.split(sep)) {
    if (dir === "") continue;
    const p = pathMod.join(dir, exeName(host.platform));
    if (check(p)) return { found: true, path: p, source: "PATH", tried };
  }
  const cargoHome = host.env.CARGO_HOME && host.env.CARGO_HOME !== "" ? host.env.CARGO_HOME : pathMod.join(host.home, ".cargo");
  const cargo = pathMod.join(cargoHome, "bin", exeName(host.platform));
  if (check(cargo)) return { found: true, path: cargo, source: "cargo", tried };
  return {
    found: false,
    tried,
    message: `kernaut: could not find the language server \`${SERVER_NAME}\` (not on PATH, not in ${pathMod.join(cargoHome, "bin")}). ${INSTALL_HINT}`,
  };
}
