// Pure: `kernaut.search` results → quick-pick items; wiki targets ↔ virtual-document URIs.

/** One result of `workspace/executeCommand kernaut.search` (PROTOCOL.md). */
export interface SearchResult {
  id: string;
  anchor?: string | null;
  title: string;
  kind?: string;
  score?: number;
  snippet?: string;
  target?: string;
}

/** The shape of vscode.QuickPickItem we fill, plus the page to open. */
export interface PageItem {
  label: string;
  description: string;
  detail?: string;
  target: string;
}

export function targetOf(r: SearchResult): string {
  if (r.target) return r.target;
  return r.anchor ? `${r.id}#${r.anchor}` : r.id;
}

/** `**marked**` words of a snippet shown plain (quick picks highlight the filter, not markdown). */
export function plainSnippet(s: string): string {
  return s.replace(/\*\*(.*?)\*\*/g, "$1").replace(/\s+/g, " ").trim();
}

const KIND_ICON: Record<string, string> = {
  pitfall: "$(warning)",
  skill: "$(lightbulb)",
  api: "$(symbol-method)",
};

/** Results that are not objects with an id and a title are dropped (a newer server may send more). */
export function toQuickPickItems(results: unknown): PageItem[] {
  if (!Array.isArray(results)) return [];
  const items: PageItem[] = [];
  for (const r of results as SearchResult[]) {
    if (!r || typeof r !== "object" || typeof r.id !== "string" || typeof r.title !== "string") continue;
    const icon = r.kind && KIND_ICON[r.kind] ? `${KIND_ICON[r.kind]} ` : "";
    const target = targetOf(r);
    items.push({
      label: `${icon}${r.title}`,
      description: r.kind ? `${target} · ${r.kind}` : target,
      detail: r.snippet ? plainSnippet(r.snippet) : undefined,
      target,
    });
  }
  return items;
}

export const WIKI_SCHEME = "kernaut-wiki";

/** `pitfall-bank-conflict#P1` → path and query of a `kernaut-wiki:` document (a `.md` path, so it opens as Markdown). */
export function targetToUriParts(target: string): { scheme: string; path: string; query: string } {
  const [id, anchor] = target.split("#", 2);
  return { scheme: WIKI_SCHEME, path: `/${id}.md`, query: anchor ? `anchor=${encodeURIComponent(anchor)}` : "" };
}

export function uriPartsToTarget(p: { path: string; query: string }): string {
  const id = p.path.replace(/^\//, "").replace(/\.md$/, "");
  const m = /(?:^|&)anchor=([^&]*)/.exec(p.query);
  return m && m[1] !== "" ? `${id}#${decodeURIComponent(m[1])}` : id;
}

/** A diagnostic's `kernaut://wiki/<id>#<anchor>` link → its wiki target, or undefined. */
export function wikiHrefToTarget(href: string): string | undefined {
  const m = /^kernaut:\/\/wiki\/([^#?]+)(?:#(.+))?$/.exec(href);
  if (!m) return undefined;
  return m[2] ? `${m[1]}#${m[2]}` : m[1];
}
