import { describe, expect, it } from "vitest";
import { plainSnippet, targetToUriParts, toQuickPickItems, uriPartsToTarget, wikiHrefToTarget } from "../src/search";

describe("toQuickPickItems", () => {
  it("turns kernaut.search results into quick-pick items that open the target", () => {
    const items = toQuickPickItems([
      {
        id: "pitfall-async-copy",
        anchor: "P2",
        title: "`cp.async.wait_group 0` inside the pipelined loop",
        kind: "pitfall",
        score: 12.3,
        snippet: "my **async**-**copy** version is **slower**\n than the plain loop",
        target: "pitfall-async-copy#P2",
      },
      { id: "api-fp16-arithmetic", anchor: null, title: "Half-precision arithmetic", kind: "api", score: 3 },
      { id: "skill-ilp", title: "ILP", kind: "skill", anchor: "S1" },
    ]);
    expect(items).toEqual([
      {
        label: "$(warning) `cp.async.wait_group 0` inside the pipelined loop",
        description: "pitfall-async-copy#P2 · pitfall",
        detail: "my async-copy version is slower than the plain loop",
        target: "pitfall-async-copy#P2",
      },
      {
        label: "$(symbol-method) Half-precision arithmetic",
        description: "api-fp16-arithmetic · api",
        detail: undefined,
        target: "api-fp16-arithmetic",
      },
      { label: "$(lightbulb) ILP", description: "skill-ilp#S1 · skill", detail: undefined, target: "skill-ilp#S1" },
    ]);
  });

  it("keeps unknown kinds without an icon and drops malformed entries", () => {
    expect(toQuickPickItems(null)).toEqual([]);
    expect(toQuickPickItems({ id: "x" })).toEqual([]);
    const items = toQuickPickItems([{ id: "card-x", title: "Card", kind: "card" }, { title: "no id" }, null, 3]);
    expect(items).toEqual([{ label: "Card", description: "card-x · card", detail: undefined, target: "card-x" }]);
  });
});

describe("wiki URIs", () => {
  it("round-trips targets through kernaut-wiki: URI parts", () => {
    for (const t of ["pitfall-bank-conflict#P1", "api-fp16-arithmetic", "skill-x#A b"]) {
      const p = targetToUriParts(t);
      expect(p.scheme).toBe("kernaut-wiki");
      expect(p.path.endsWith(".md")).toBe(true);
      expect(uriPartsToTarget(p)).toBe(t);
    }
    expect(targetToUriParts("pitfall-bank-conflict#P1")).toEqual({
      scheme: "kernaut-wiki",
      path: "/pitfall-bank-conflict.md",
      query: "anchor=P1",
    });
  });

  it("reads a diagnostic's kernaut://wiki link", () => {
    expect(wikiHrefToTarget("kernaut://wiki/pitfall-bank-conflict#P1")).toBe("pitfall-bank-conflict#P1");
    expect(wikiHrefToTarget("kernaut://wiki/api-bf16")).toBe("api-bf16");
    expect(wikiHrefToTarget("https://example.com/x")).toBeUndefined();
  });

  it("plainSnippet removes markdown bold", () => {
    expect(plainSnippet("a **b** c")).toBe("a b c");
  });
});
