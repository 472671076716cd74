import { describe, expect, it } from "vitest";
import { expandPath, normalizeArch, toDidChangeConfiguration, toInitOptions } from "../src/config";

const ctx = { workspaceFolder: "/ws", home: "/home/u" };

describe("toInitOptions", () => {
  it("gives the server's defaults for empty settings", () => {
    expect(toInitOptions({}, ctx)).toEqual({
      arch: "sm_90",
      wikiPaths: [],
      rules: {},
      inlayHints: true,
      codeLens: true,
      wikiLinks: "kernaut",
    });
  });

  it("passes every setting through in the contract's shape", () => {
    const opts = toInitOptions(
      {
        arch: "sm_80",
        wikiPaths: ["~/kernelwiki", "${workspaceFolder}/wiki", "docs/wiki", "/abs/wiki"],
        rules: { "bank-conflict": "error", "ilp/over-unroll": "off" },
        defaultBlockSize: 128,
        inlayHints: false,
        codeLens: false,
      },
      ctx,
    );
    expect(opts).toEqual({
      arch: "sm_80",
      wikiPaths: ["/home/u/kernelwiki", "/ws/wiki", "/ws/docs/wiki", "/abs/wiki"],
      rules: { "bank-conflict": "error", "ilp/over-unroll": "off" },
      defaultBlockSize: 128,
      inlayHints: false,
      codeLens: false,
      wikiLinks: "kernaut",
    });
  });

  it("drops values of the wrong type instead of sending them", () => {
    const opts = toInitOptions(
      {
        arch: 90,
        wikiPaths: ["", 3, "/w"],
        rules: { "bank-conflict": "loud", "x/y": "hint", z: 2 },
        defaultBlockSize: -4,
        inlayHints: "yes",
      },
      ctx,
    );
    expect(opts.arch).toBe("sm_90");
    expect(opts.wikiPaths).toEqual(["/w"]);
    expect(opts.rules).toEqual({ "x/y": "hint" });
    expect(opts).not.toHaveProperty("defaultBlockSize");
    expect(opts.inlayHints).toBe(true);
  });

  it("fills a block size given as [x] or [x, y] to [x, y, z]", () => {
    expect(toInitOptions({ defaultBlockSize: [32, 8] }, ctx).defaultBlockSize).toEqual([32, 8, 1]);
    expect(toInitOptions({ defaultBlockSize: [32, 8, 2] }, ctx).defaultBlockSize).toEqual([32, 8, 2]);
    expect(toInitOptions({ defaultBlockSize: [1, 2, 3, 4] }, ctx)).not.toHaveProperty("defaultBlockSize");
  });

  it("wraps the same object for workspace/didChangeConfiguration", () => {
    const opts = toInitOptions({ arch: "sm_75" }, ctx);
    expect(toDidChangeConfiguration(opts)).toEqual({ settings: { kernaut: opts } });
  });
});

describe("normalizeArch", () => {
  it.each([
    ["sm_90", "sm_90"],
    [" SM_80 ", "sm_80"],
    ["90", "sm_90"],
    ["9.0", "sm_90"],
    ["sm_90a", "sm_90a"],
    ["12.0", "sm_120"],
    ["hopper", "sm_90"],
    [undefined, "sm_90"],
  ])("%s → %s", (input, out) => expect(normalizeArch(input)).toBe(out));
});

describe("expandPath", () => {
  it("expands ~, ${userHome} and ${env:NAME}", () => {
    expect(expandPath("~", ctx)).toBe("/home/u");
    expect(expandPath("${userHome}/w", ctx)).toBe("/home/u/w");
    expect(expandPath("${env:WIKI}/x", ctx, { WIKI: "/data" })).toBe("/data/x");
  });
  it("leaves relative paths alone without a workspace", () => {
    expect(expandPath("wiki", { home: "/h" })).toBe("wiki");
  });
});
