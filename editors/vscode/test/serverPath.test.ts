import { describe, expect, it } from "vitest";
import { Host, resolveServerPath } from "../src/serverPath";

function host(files: string[], env: NodeJS.ProcessEnv = {}, platform: NodeJS.Platform = "linux"): Host {
  return { env, platform, home: "/home/u", isExecutable: (p) => files.includes(p) };
}

describe("resolveServerPath", () => {
  it("uses the setting when it is set, with ~ and ${workspaceFolder} expanded", () => {
    const r = resolveServerPath("~/bin/kernaut-lsp", host(["/home/u/bin/kernaut-lsp"]));
    expect(r).toMatchObject({ found: true, path: "/home/u/bin/kernaut-lsp", source: "setting" });
    const w = resolveServerPath("${workspaceFolder}/target/debug/kernaut-lsp", host(["/ws/target/debug/kernaut-lsp"]), {
      workspaceFolder: "/ws",
    });
    expect(w).toMatchObject({ found: true, path: "/ws/target/debug/kernaut-lsp" });
  });

  it("does not fall back to PATH when the setting points at nothing, and says how to install", () => {
    const r = resolveServerPath("/nope/kernaut-lsp", host(["/usr/bin/kernaut-lsp"], { PATH: "/usr/bin" }));
    expect(r.found).toBe(false);
    if (!r.found) {
      expect(r.message).toContain("/nope/kernaut-lsp");
      expect(r.message).toContain("kernaut.server.path");
      expect(r.message).toContain("cargo install --path lsp");
    }
  });

  it("takes $KERNAUT_LSP, then PATH in order, then ~/.cargo/bin", () => {
    const files = ["/env/kernaut-lsp", "/b/kernaut-lsp", "/c/kernaut-lsp", "/home/u/.cargo/bin/kernaut-lsp"];
    expect(resolveServerPath("", host(files, { KERNAUT_LSP: "/env/kernaut-lsp", PATH: "/a:/b" }))).toMatchObject({
      path: "/env/kernaut-lsp",
      source: "env",
    });
    expect(resolveServerPath(undefined, host(files, { PATH: "/a::/b:/c" }))).toMatchObject({
      path: "/b/kernaut-lsp",
      source: "PATH",
      tried: ["/a/kernaut-lsp", "/b/kernaut-lsp"],
    });
    expect(resolveServerPath(undefined, host(files, { PATH: "/a" }))).toMatchObject({
      path: "/home/u/.cargo/bin/kernaut-lsp",
      source: "cargo",
    });
    expect(resolveServerPath(undefined, host(["/ch/bin/kernaut-lsp"], { CARGO_HOME: "/ch" }))).toMatchObject({
      path: "/ch/bin/kernaut-lsp",
    });
  });

  it("prefers the setting and $KERNAUT_LSP, then the bundled server, over PATH", () => {
    const files = ["/ext/server/kernaut-lsp", "/usr/bin/kernaut-lsp", "/mine/kernaut-lsp"];
    const h = (env: NodeJS.ProcessEnv) => ({ ...host(files, env), bundledDir: "/ext/server" });
    expect(resolveServerPath("/mine/kernaut-lsp", h({ PATH: "/usr/bin" }))).toMatchObject({ source: "setting" });
    expect(resolveServerPath("", h({ PATH: "/usr/bin" }))).toMatchObject({
      path: "/ext/server/kernaut-lsp",
      source: "bundled",
    });
    // A .vsix without a server (the universal one): PATH as before.
    expect(resolveServerPath("", { ...host(["/usr/bin/kernaut-lsp"], { PATH: "/usr/bin" }), bundledDir: "/ext/server" })).toMatchObject({
      path: "/usr/bin/kernaut-lsp",
      source: "PATH",
      tried: ["/ext/server/kernaut-lsp", "/usr/bin/kernaut-lsp"],
    });
    const win = { ...host(["C:\\ext\\server\\kernaut-lsp.exe"], {}, "win32"), bundledDir: "C:\\ext\\server" };
    expect(resolveServerPath("", win)).toMatchObject({ source: "bundled" });
  });

  it("explains a missing binary with the install command", () => {
    const r = resolveServerPath(undefined, host([], { PATH: "/usr/bin" }));
    expect(r.found).toBe(false);
    if (!r.found) {
      expect(r.tried).toEqual(["/usr/bin/kernaut-lsp", "/home/u/.cargo/bin/kernaut-lsp"]);
      expect(r.message).toMatch(/could not find the language server `kernaut-lsp`/);
      expect(r.message).toContain("cargo install --path lsp");
    }
  });

  it("looks for kernaut-lsp.exe on Windows, with ; in PATH", () => {
    const r = resolveServerPath(undefined, host(["C:\\tools\\kernaut-lsp.exe"], { PATH: "C:\\x;C:\\tools" }, "win32"));
    expect(r).toMatchObject({ found: true, path: "C:\\tools\\kernaut-lsp.exe" });
  });
});
