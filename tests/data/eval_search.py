#!/usr/bin/env python3
"""Evaluate `ktui search` against held-out symptom queries.

Each TSV row is: query<TAB>expected targets separated by '|'.
A target is `id#anchor`, or a bare `id` for a whole-page hit.
Lines starting with '#' and the header row are skipped.

Usage:
  python3 tests/data/eval_search.py                      # built-in set, built-in wiki
  python3 tests/data/eval_search.py --set reference      # reference set, reference wiki
  python3 tests/data/eval_search.py --bin /tmp/kernaut-bin/ktui --pages wiki/pages
      (an older binary: test the current pages with --no-builtin --wiki DIR)
"""
import argparse, json, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
REFERENCE_WIKI = "/work/shared/reference/kernelwiki"


def load(path):
    rows, group = [], ""
    for ln in open(path, encoding="utf-8"):
        ln = ln.rstrip("\n")
        if ln.startswith("#"):
            group = ln.lstrip("# ").split(" ")[0]
            continue
        if not ln.strip() or ln.startswith("query\t"):
            continue
        q, exp = ln.split("\t")
        rows.append((group, q, [e.strip() for e in exp.split("|") if e.strip()]))
    return rows


def key(hit):
    a = hit.get("anchor")
    return f"{hit['id']}#{a}" if a else hit["id"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", choices=["builtin", "reference"], default="builtin")
    ap.add_argument("--tsv", help="query file (default: by --set)")
    ap.add_argument("--bin", help="ktui binary (default: target/release/ktui, else /tmp/kernaut-bin/ktui)")
    ap.add_argument("--pages", help="for --set builtin: test this folder with --no-builtin --wiki DIR")
    ap.add_argument("--limit", type=int, default=3)
    ap.add_argument("--quiet", action="store_true", help="only print the summary")
    a = ap.parse_args()

    binp = a.bin
    if not binp:
        cand = os.path.join(ROOT, "target/release/ktui")
        binp = cand if os.path.exists(cand) else "/tmp/kernaut-bin/ktui"
    tsv = a.tsv or os.path.join(HERE, f"symptom_queries_{a.set}.tsv")
    if a.set == "reference":
        extra = ["--no-builtin", "--wiki", REFERENCE_WIKI]
    elif a.pages:
        extra = ["--no-builtin", "--wiki", a.pages]
    else:
        extra = []

    rows = load(tsv)
    top1 = top3 = 0
    misses = []
    groups = {}
    for g, q, exp in rows:
        cmd = [binp, "search", "--json", "--limit", str(a.limit), *extra, "--", q]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"ERROR {q!r}: {r.stderr.strip()}", file=sys.stderr)
            hits = []
        else:
            hits = json.loads(r.stdout or "[]")
        got = [key(h) for h in hits]
        rank = next((i + 1 for i, g in enumerate(got) if g in exp), None)
        if rank == 1:
            top1 += 1
        gs = groups.setdefault(g, [0, 0, 0])
        gs[0] += 1
        gs[1] += rank == 1
        if rank is not None and rank <= 3:
            top3 += 1
            gs[2] += 1
        else:
            misses.append((q, exp, hits))
        if rank not in (None, 1) and not a.quiet:
            print(f"rank{rank}: {q}  -> expected {'|'.join(exp)}; top1 {got[0]}")

    n = len(rows)
    print(f"\n{a.set}: {n} queries  bin={binp} args={' '.join(extra) or '(built-in)'}")
    print(f"top-1: {top1}/{n} = {top1/n:.1%}")
    print(f"top-3: {top3}/{n} = {top3/n:.1%}")
    print("per group (n, top-1, top-3): " + ", ".join(
        f"{g or '-'} {v[0]}/{v[1]}/{v[2]}" for g, v in groups.items()))
    if not a.quiet:
        print(f"\nmisses ({len(misses)}):")
        for q, exp, hits in misses:
            print(f"- {q}\n    expected: {' | '.join(exp)}")
            for h in hits:
                print(f"    got: {key(h):45s} {h['score']:7.2f}  {h['title'][:70]}")


if __name__ == "__main__":
    main()
