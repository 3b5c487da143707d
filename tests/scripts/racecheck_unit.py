#!/usr/bin/env python3
"""The race detector's own tests: every kernel of racecheck_kernels.cu.in.

usage: racecheck_unit.py EXE KERNELS.cu.in

A line ending in "// racecheck: KIND" must be named by a report of that
kind, as the access (error) or as the other access (note); every report of
a kernel must name only such lines of its kind, and the run must fail. A
kernel without such lines must run cleanly: no report, exit status 0. So
each check is shown to fire on its bug and to stay silent on the fixed
kernel next to it. "racecheck: KIND maybe:OTHER" also lets a report of kind
OTHER name the line without requiring one (a bug whose consequence shows in
some schedules only: a lost phase that, in an unlucky run, also deadlocks).
Then the machinery around the reports: known failures
(EMU_RACECHECK_KNOWN) and deletions (EMU_DELETE_LINE).
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "emu"))
import prepare  # noqa: E402

import checklist  # noqa: E402

REPORT = re.compile(r"^(?P<file>[^:\s]+):(?P<line>\d+): (?P<severity>error|warning): racecheck\[(?P<kind>[\w-]+)\]")
NOTE = re.compile(r"^(?P<file>[^:\s]+):(?P<line>\d+): note: ")
EXPECT = re.compile(r"//\s*racecheck:\s*([\w-]+)((?:\s+maybe:[\w-]+)*)\s*$")


def reports(stderr):
    """(kind, line, note line or None) of every report in the output."""
    found = []
    for text in stderr.splitlines():
        m = REPORT.match(text)
        if m:
            found.append([m.group("kind"), int(m.group("line")), None])
            continue
        m = NOTE.match(text)
        if m and found and found[-1][2] is None:
            found[-1][2] = int(m.group("line"))
    return [tuple(r) for r in found]


def run(exe, kernel, **env):
    return subprocess.run([exe, kernel], capture_output=True, text=True, timeout=120, env=dict(os.environ, **env))


def main():
    exe, source = sys.argv[1:3]
    text = open(source).read()
    lines = text.split("\n")
    kernels = prepare.kernels(text)
    for index, (first, name) in enumerate(kernels):
        last = kernels[index + 1][0] if index + 1 < len(kernels) else len(lines) + 1
        expected, allowed = {}, {}
        for number in range(first, last):
            m = EXPECT.search(lines[number - 1])
            if m:
                expected.setdefault(m.group(1), set()).add(number)
                for kind in re.findall(r"maybe:([\w-]+)", m.group(2)):
                    allowed.setdefault(kind, set()).add(number)
        try:
            p = run(exe, name)
        except subprocess.TimeoutExpired:
            checklist.expect(False, f"{name}: timed out (a hang the detector did not report)")
            continue
        found = reports(p.stderr)
        problems = []
        if not expected:
            if p.returncode != 0 or found:
                problems.append(f"expected a clean run, got exit status {p.returncode} and {len(found)} report(s)")
        else:
            if p.returncode == 0:
                problems.append("expected the run to fail")
            named = {}
            for kind, line, note in found:
                lines_named = {line} | ({note} if note else set())
                if lines_named <= allowed.get(kind, set()):
                    continue
                if kind not in expected or not lines_named <= expected[kind]:
                    problems.append(f"unexpected report {kind} naming line(s) {sorted(lines_named)}")
                named.setdefault(kind, set()).update(lines_named)
            for kind, want in expected.items():
                if named.get(kind, set()) != want:
                    problems.append(f"{kind}: expected line(s) {sorted(want)} named, got {sorted(named.get(kind, set()))}")
        checklist.expect(not problems, f"{name}: " + "; ".join(problems), p.stderr)
        print(f"{'FAIL' if problems else 'ok  '} {name}: " + (", ".join(f"{k} {sorted(v)}" for k, v in sorted(expected.items())) or "clean"))
    # The machinery around the reports. A known failure is a warning and
    # the run passes; a known failure that does not occur fails the run.
    p = run(exe, "raw_kernel", EMU_RACECHECK_KNOWN="race:raw_kernel")
    checklist.expect(p.returncode == 0 and "warning: racecheck[race]" in p.stderr and "[known failure]" in p.stderr,
                     "a known failure: reported as a warning, the run passes", p.stderr)
    p = run(exe, "raw_ok_kernel", EMU_RACECHECK_KNOWN="race:raw_ok_kernel")
    checklist.expect(p.returncode != 0 and "did not occur" in p.stderr, "a known failure that does not occur fails the run", p.stderr)
    # EMU_DELETE_LINE removes a synchronisation statement, as the mutation
    # test uses it: raw_ok_kernel without its barrier is raw_kernel.
    first = dict((name, line) for line, name in kernels)["raw_ok_kernel"]
    barrier = next(n for n in range(first, len(lines) + 1) if lines[n - 1].strip() == "__syncthreads();")
    p = run(exe, "raw_ok_kernel", EMU_DELETE_LINE=str(barrier))
    checklist.expect(p.returncode != 0 and any(kind == "race" for kind, _, _ in reports(p.stderr))
                     and f"deleted line {barrier}, reached 128 times" in p.stderr,
                     "EMU_DELETE_LINE deletes the barrier (128 threads skip it) and the race shows", p.stderr)
    checklist.finish("racecheck-unit")


if __name__ == "__main__":
    main()
