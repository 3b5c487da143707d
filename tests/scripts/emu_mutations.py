#!/usr/bin/env python3
"""Mutation test of the race detector: delete one synchronisation statement
at a time from each emulated kernel's generated .cu and expect a report.

usage: emu_mutations.py EXPECTATIONS [--jobs N] [--only CASE]
                        --case NAME EXE CU KNOWN SMS [--case ...]

For every statement prepare.py marks as synchronisation (block and named
barriers, mbarrier waits and arrivals, proxy and mbarrier-init fences,
cluster barriers, cp.async / wgmma / bulk-store waits) the case's
emulation runs with that statement deleted (EMU_DELETE_LINE: prepare.py
wraps each one in `if (emu::keep(__LINE__))`, so that no rebuild is
needed) and must fail with a race detector report naming lines of the .cu:
one of the two conflicting accesses, or the wait that deadlocks.

A statement whose deletion cannot be detected must be listed in
EXPECTATIONS with the reason; a listed one that is detected after all, or
one that is no longer in the .cu, fails the test too, so the list stays
true.
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "emu"))
import prepare  # noqa: E402

import checklist  # noqa: E402

REPORT = re.compile(r"^(?P<file>[^:\s]+):(?P<line>\d+): error: racecheck\[(?P<kind>[\w-]+)\]")
NOTE = re.compile(r"^(?P<file>[^:\s]+):(?P<line>\d+): note: ")
REACHED = re.compile(r"^emu: deleted line \d+, reached (\d+) times", re.M)


def read_expectations(path):
    """{(case, kernel, statement, ordinal): reason} of the deletions no report
    can show; ordinal "*" stands for every such statement of the kernel. A
    reason may go on over the lines that follow, indented."""
    expected = {}
    key = None
    for number, text in enumerate(open(path), 1):
        if text.startswith((" ", "\t")) and text.strip() and key:
            expected[key] += " " + text.strip()
            continue
        text = text.strip()
        key = None
        if not text or text.startswith("#"):
            continue
        m = re.match(r"(\S+) (\S+) #(\d+|\*) (.+?) -- (.+)$", text)
        if not m:
            sys.exit(f"{path}:{number}: expected 'CASE KERNEL #N STATEMENT -- REASON'")
        ordinal = m.group(3) if m.group(3) == "*" else int(m.group(3))
        key = (m.group(1), m.group(2), m.group(4), ordinal)
        expected[key] = m.group(5)
    return expected


def sites(cu):
    """(line, kernel, statement, ordinal) of every synchronisation statement;
    ordinal counts the same statement within its kernel, from 1."""
    text = open(cu).read()
    kernels = prepare.kernels(text)
    out, seen = [], {}
    for line, statement in prepare.sync_sites(text):
        kernel = [name for first, name in kernels if first <= line][-1]
        seen[(kernel, statement)] = seen.get((kernel, statement), 0) + 1
        out.append((line, kernel, statement, seen[(kernel, statement)]))
    return out


def run(exe, cu, known, sms, line):
    """(outcome, detail): 'detected' with the first report, 'unreached', or
    'undetected'. `sms`: the emulated device's SMs (num_sms()), as the case's test runs it."""
    env = dict(os.environ, EMU_DELETE_LINE=str(line), EMU_RACECHECK_FIRST="1", EMU_RACECHECK_KNOWN=known, TILET_EMU_SMS=sms)
    try:
        p = subprocess.run([exe], capture_output=True, text=True, timeout=300, env=env)
    except subprocess.TimeoutExpired:
        return "undetected", "timed out: a hang the detector did not report"
    reached = REACHED.search(p.stderr)
    lines = p.stderr.splitlines()
    for i, text in enumerate(lines):
        m = REPORT.match(text)
        if not m:
            continue
        if os.path.basename(m.group("file")) != os.path.basename(cu):
            return "undetected", f"a report naming another file: {text}"
        note = NOTE.match(lines[i + 1]) if i + 1 < len(lines) else None
        named = m.group("line") + (f" and {note.group('line')}" if note else "")
        return "detected", f"{m.group('kind')} at line {named}"
    if reached and reached.group(1) == "0":
        return "unreached", "the harness never executes it"
    tail = " | ".join(lines[-3:])
    return "undetected", f"exit status {p.returncode}, no report ({tail})"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("expectations")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", default="")
    parser.add_argument("--case", nargs=5, action="append", default=[], metavar=("NAME", "EXE", "CU", "KNOWN", "SMS"))
    args = parser.parse_args()
    expected = read_expectations(args.expectations)
    jobs = []
    for name, exe, cu, known, sms in args.case:
        if args.only and name != args.only:
            continue
        for line, kernel, statement, ordinal in sites(cu):
            jobs.append((name, exe, cu, known, sms, line, kernel, statement, ordinal))
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda j: run(j[1], j[2], j[3], j[4], j[5]), jobs))
    listed_seen = set()
    counts = {}
    for (name, exe, cu, known, sms, line, kernel, statement, ordinal), (outcome, detail) in zip(jobs, results):
        key = (name, kernel, statement, ordinal)
        if key not in expected:
            key = (name, kernel, statement, "*")
        reason = expected.get(key)
        if reason is not None:
            listed_seen.add(key)
        where = f"{name} {kernel} #{ordinal} {statement} (line {line})"
        if outcome == "detected":
            # "sometimes:" marks a deletion whose failure depends on how the
            # emulator's threads happen to be scheduled: either outcome is true.
            sometimes = reason is not None and reason.startswith("sometimes:")
            checklist.expect(reason is None or sometimes,
                             f"{where}: detected ({detail}) but listed as undetectable: remove it from {args.expectations}")
        else:
            checklist.expect(reason is not None, f"{where}: {outcome}: {detail}")
        counts[outcome] = counts.get(outcome, 0) + 1
        print(f"{outcome:10} {where}: {detail}" + (f" [listed: {reason}]" if reason else ""))
    if not args.only:
        for key in expected:
            checklist.expect(key in listed_seen, f"{' '.join(map(str, key))}: listed in {args.expectations} but not in the .cu any more")
    print(", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    checklist.finish("emu-mutations")


if __name__ == "__main__":
    main()
