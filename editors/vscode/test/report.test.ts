import { describe, expect, it } from "vitest";
import { pickReportLens, reportPath } from "../src/report";

const lens = (line: number, command = "kernaut.kernelReport", kernel = `k${line}`) => ({
  range: { start: { line, character: 0 }, end: { line, character: 10 } },
  command: { title: "report", command, arguments: [{ uri: "file:///a.cu", kernel }] },
});

describe("pickReportLens", () => {
  const lenses = [lens(3), lens(3, "kernaut.showPage"), lens(10), lens(20, "kernaut.showPage")];

  it("takes the report lens of the kernel the cursor is in", () => {
    expect(pickReportLens(lenses, 12)?.range.start.line).toBe(10);
    expect(pickReportLens(lenses, 10)?.range.start.line).toBe(10);
    expect(pickReportLens(lenses, 5)?.range.start.line).toBe(3);
  });

  it("takes the first kernel's when the cursor is above every kernel", () => {
    expect(pickReportLens(lenses, 0)?.range.start.line).toBe(3);
  });

  it("finds none in a file without a report lens, or in an answer that is not a list", () => {
    expect(pickReportLens([lens(1, "kernaut.showPage")], 4)).toBeUndefined();
    expect(pickReportLens(null, 4)).toBeUndefined();
  });
});

describe("reportPath", () => {
  it("names a Markdown document per kernel", () => {
    expect(reportPath("transpose")).toBe("/report/transpose.md");
    expect(reportPath("ns::k<float>")).toBe("/report/ns::k_float_.md");
  });
});
