#!/usr/bin/env python3
"""Error tests: each input must produce exactly the diagnostics it expects.

A test is a file DIR/NAME.tl (any bytes). Its expectations are lines

    // EXPECT: LINE:COL: error: message
    // EXPECT: other.tl:LINE:COL: note: message     (a diagnostic in another file)
    // EXPECT: error: message                       (a diagnostic without a location)

in the file itself, or, for inputs that cannot hold comments (binary data, an
unterminated comment), in DIR/NAME.tl.expect. A first line "// ARGS: ..."
adds tilet flags. Errors and warnings must match exactly and in order; notes
are checked only when the test expects at least one. Whenever an error is
expected, tilet must exit with status 1, write no output file, and never
report an internal error.

usage: errors.py TILET DIR
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile

DIAG = re.compile(r"^(?:(?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+): |tilet: )(?P<sev>error|warning|note|remark): (?P<msg>.*)$")


def expectations(path):
    sidecar = path + ".expect"
    source = sidecar if os.path.exists(sidecar) else path
    with open(source, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    args = []
    if lines and lines[0].startswith("// ARGS:"):
        args = shlex.split(lines[0][len("// ARGS:"):])
    expected = []
    for line in lines:
        i = line.find("// EXPECT: ")
        if i >= 0:
            expected.append(line[i + len("// EXPECT: "):].strip())
    return args, expected


def normalize(expected, default_file):
    """Expected text -> (file, line, col, sev, msg)."""
    m = re.match(r"^(?:(?:(?P<file>[^:]+):)?(?P<line>\d+):(?P<col>\d+): )?(?P<sev>error|warning|note|remark): (?P<msg>.*)$", expected)
    if not m:
        raise ValueError(f"malformed EXPECT line: {expected}")
    if m.group("line") is None:
        return ("", 0, 0, m.group("sev"), m.group("msg"))
    return (m.group("file") or default_file, int(m.group("line")), int(m.group("col")), m.group("sev"), m.group("msg"))


def show(d):
    f, line, col, sev, msg = d
    return f"{f}:{line}:{col}: {sev}: {msg}" if f else f"{sev}: {msg}"


def run_one(tilet, path):
    directory, filename = os.path.split(path)
    args, expected_text = expectations(path)
    if not expected_text:
        return [f"FAIL {path}: no EXPECT lines"]
    try:
        expected = [normalize(e, filename) for e in expected_text]
    except ValueError as e:
        return [f"FAIL {path}: {e}"]
    with tempfile.TemporaryDirectory() as tmp:
        out_cu = os.path.join(tmp, "out.cu")
        cmd = [tilet, filename, "-o", out_cu, "--color=never"] + args
        proc = subprocess.run(cmd, cwd=directory or ".", capture_output=True)
        stderr = proc.stderr.decode("utf-8", errors="replace")
        leftovers = os.listdir(tmp)
    actual = []
    for line in stderr.splitlines():
        m = DIAG.match(line)
        if m:
            actual.append((m.group("file") or "", int(m.group("line") or 0), int(m.group("col") or 0), m.group("sev"), m.group("msg")))
    check_notes = any(e[3] == "note" for e in expected)
    keep = lambda ds: [d for d in ds if d[3] in ("error", "warning") or (check_notes and d[3] == "note")]
    problems = []
    shown = " ".join(shlex.quote(c) for c in cmd)
    if keep(actual) != keep(expected):
        problems.append("diagnostics differ\n  expected:\n" + "".join(f"    {show(d)}\n" for d in keep(expected)) +
                        "  actual:\n" + "".join(f"    {show(d)}\n" for d in keep(actual)))
    if "internal compiler error" in stderr:
        problems.append("tilet reported an internal compiler error")
    wants_error = any(e[3] == "error" for e in expected)
    if wants_error and proc.returncode != 1:
        problems.append(f"exit status {proc.returncode}, expected 1")
    if not wants_error and proc.returncode != 0:
        problems.append(f"exit status {proc.returncode}, expected 0")
    if wants_error and leftovers:
        problems.append(f"output written despite errors: {leftovers}")
    if problems:
        return [f"FAIL {path}\n  cd {directory} && {shown}\n  " + "\n  ".join(problems) + f"\n  stderr was:\n{stderr}"]
    return []


def main():
    tilet = os.path.abspath(sys.argv[1])
    root = sys.argv[2]
    tests = sorted(os.path.join(root, f) for f in os.listdir(root)
                   if os.path.isfile(os.path.join(root, f)) and not f.endswith(".expect"))
    if not tests:
        print("errors: no tests found")
        return 1
    failures = []
    for t in tests:
        failures.extend(run_one(tilet, t))
    for f in failures:
        print(f)
    print(f"errors: {len(tests)} test(s), {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
