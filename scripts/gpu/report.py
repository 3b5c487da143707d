#!/usr/bin/env python3
"""The table and JSON file at the end of scripts/gpu-check.

usage: report.py RESULTS.jsonl OUT.json [KEY=VALUE...]

RESULTS.jsonl holds one result a line, the JSON of the checks' RESULT lines
(and of the lines scripts/gpu-check writes itself for a build that failed,
a check that timed out, crashed or printed no result, or one skipped).
Prints one table (check, shape, status, max error, TFLOP/s or GB/s, the
baseline, its figure, the ratio of the baseline's time to the kernel's:
above 1 the kernel is faster, and compute-sanitizer's verdict on the
example's small translation), the notes and the counts, writes OUT.json
({"run": {KEY: VALUE...}, "results": [...], "summary": {...}}), and exits 1
when any result is FAIL (or a line is unreadable), else 0. Standard library
only.
"""
import json
import sys


def number(value, digits=3):
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if value == 0:
        return "0"
    if abs(value) >= 100:
        return f"{value:.0f}"
    return f"{value:.{digits}g}"


def perf(record, prefix=""):
    """The figure to read: TFLOP/s for compute-bound checks, GB/s for the
    memory-bound ones (those that give GB/s)."""
    gbps = record.get(prefix + "gbps")
    if gbps is not None:
        return f"{number(gbps)} GB/s"
    tflops = record.get(prefix + "tflops")
    return f"{number(tflops)} TFLOP/s" if tflops is not None else ""


def checks_examples():
    """{check: example} from scripts/gpu/checks.txt, beside this script."""
    import os
    out = {}
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "checks.txt"), encoding="utf-8") as f:
        for line in f:
            fields = [x.strip() for x in line.split("|")]
            if len(fields) >= 2 and fields[0] and not fields[0].startswith("#"):
                out[fields[0]] = fields[1]
    return out


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    results, unreadable = [], 0
    with open(argv[1], encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                if not isinstance(record, dict) or "check" not in record or "status" not in record:
                    raise ValueError("no check or status")
            except ValueError as e:
                record = {"check": "?", "status": "FAIL", "note": f"unreadable result line ({e}): {line.strip()[:200]}"}
                unreadable += 1
            results.append(record)
    run = dict(a.split("=", 1) for a in argv[3:])

    # compute-sanitizer's results (records with a "tool") go in a column of
    # the rows of the checks of their example (checks.txt gives the example).
    examples = checks_examples()
    tools = {}
    for r in results:
        if r.get("tool"):
            tools.setdefault(r.get("example", "?"), []).append(r)
    shown = set()

    def sanitizers(example):
        records = tools.get(example)
        if not records:
            return ""
        shown.add(example)
        failed = [r["tool"] for r in records if r["status"] == "FAIL"]
        if failed:
            return "FAIL " + ",".join(failed)
        if all(r["status"] == "SKIP" for r in records):
            return "SKIP"
        skipped = [r["tool"] for r in records if r["status"] == "SKIP"]
        return "PASS" + (" (skipped " + ",".join(skipped) + ")" if skipped else "")

    columns = ["check", "shape", "status", "max error", "kernel", "baseline", "baseline figure", "ratio", "sanitizers"]
    rows = [[r["check"], r.get("shape", ""), r["status"], number(r.get("max_error")), perf(r), r.get("baseline", ""),
             perf(r, "baseline_"), number(r.get("ratio"), 2), sanitizers(examples.get(r["check"]))]
            for r in results if not r.get("tool")]
    rows += [[example + " (sanitizers only)", "small", "", "", "", "", "", "", sanitizers(example)]
             for example in tools if example not in shown]
    # Columns no row fills (a dry run has no figures, a run without compute-sanitizer no verdicts) go.
    keep = [i for i, c in enumerate(columns) if c in ("check", "status") or any(row[i] for row in rows)]
    columns, rows = [columns[i] for i in keep], [[row[i] for i in keep] for row in rows]
    widths = [max(len(c), *(len(row[i]) for row in rows)) if rows else len(c) for i, c in enumerate(columns)]
    print()
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths)).rstrip())
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip())
    # Notes of what did not pass, and of measurements (a baseline's fallback,
    # an error that changed); the same note once, with the checks it is about.
    notes = {}
    for r in results:
        if r.get("note") and (r["status"] != "PASS" or r.get("time_ms") is not None):
            notes.setdefault((r["status"], r["note"]), []).append(r["check"])
    if notes:
        print()
        for (status, note), checks in notes.items():
            names = ", ".join(checks[:6]) + (f" and {len(checks) - 6} more" if len(checks) > 6 else "")
            print(f"  {status} {names}: {note}")

    summary = {s: sum(1 for r in results if r["status"] == s) for s in ("PASS", "FAIL", "SKIP")}
    summary["other"] = len(results) - sum(summary.values())
    with open(argv[2], "w", encoding="utf-8") as f:
        json.dump({"run": run, "results": results, "summary": summary}, f, indent=1)
        f.write("\n")
    print()
    print(f"{summary['PASS']} passed, {summary['FAIL']} failed, {summary['SKIP']} skipped"
          + (f", {summary['other']} with another status" if summary["other"] else "") + f"  ({argv[2]})")
    return 1 if summary["FAIL"] or summary["other"] or unreadable or not results else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
