// Pure: which "report" lens a command run from the palette means, and the virtual
// documents the doctor and the kernel report open in.

/** A code lens as the server sends it (only the fields read here). */
export interface Lens {
  range: { start: { line: number } };
  command?: { title?: string; command: string; arguments?: unknown[] };
}

export const REPORT_COMMAND = "kernaut.kernelReport";

/**
 * The "report" lens of the kernel at `line` (0-based): the last one that starts at or
 * above it, else the first in the file; undefined when the file has none.
 */
export function pickReportLens(lenses: unknown, line: number): Lens | undefined {
  if (!Array.isArray(lenses)) return undefined;
  const reports = (lenses as Lens[]).filter(
    (l) => l && l.command && l.command.command === REPORT_COMMAND && typeof l.range?.start?.line === "number",
  );
  let best: Lens | undefined;
  for (const l of reports) {
    if (l.range.start.line <= line && (!best || l.range.start.line > best.range.start.line)) best = l;
  }
  return best ?? reports[0];
}

/** The path of the virtual Markdown document of a kernel's report. */
export function reportPath(kernel: string): string {
  return `/report/${kernel.replace(/[^A-Za-z0-9_.:-]/g, "_")}.md`;
}

/** The path of the doctor's virtual Markdown document. */
export const DOCTOR_PATH = "/doctor.md";
