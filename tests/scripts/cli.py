#!/usr/bin/env python3
"""Command-line behaviour of tilet: exit statuses, outputs, streams, atomicity.

usage: cli.py TILET EXAMPLES_DIR
"""
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

TILET = os.path.abspath(sys.argv[1])
EXAMPLES = os.path.abspath(sys.argv[2])
failures = []
checks = 0


def run(args, cwd=None, stdin=None, env=None):
    full_env = dict(os.environ)
    full_env.pop("NO_COLOR", None)
    if env:
        full_env.update(env)
    return subprocess.run([TILET] + args, cwd=cwd, input=stdin, capture_output=True, env=full_env)


def expect(cond, what, proc=None):
    global checks
    checks += 1
    if not cond:
        detail = ""
        if isinstance(proc, str):
            detail = "\n  " + proc[-2000:]
        elif proc is not None:
            detail = f"\n  exit {proc.returncode}\n  stdout: {proc.stdout[:2000]!r}\n  stderr: {proc.stderr[:2000]!r}"
        failures.append(what + detail)


SIMPLE = b"""kernel scale(X: f32[256], Y: f32[256]) grid(1) threads(128) {
    for i in parallel(256) { Y[i] = X[i] * 2.0; }
}
"""

with tempfile.TemporaryDirectory() as tmp:
    src = os.path.join(tmp, "scale.tl")
    with open(src, "wb") as f:
        f.write(SIMPLE)

    # --version and --help go to stdout and exit 0.
    p = run(["--version"])
    expect(p.returncode == 0 and p.stdout.startswith(b"tilet "), "--version prints 'tilet X.Y.Z' and exits 0", p)
    p = run(["--help"])
    expect(p.returncode == 0 and b"--arch" in p.stdout and b"--explain" in p.stdout, "--help lists the options and exits 0", p)

    # Usage errors exit 1 (not CLI11's 105/106/109).
    p = run([])
    expect(p.returncode == 1 and b"input" in p.stderr, "a missing input is a usage error with status 1", p)
    p = run([src, "--no-such-option"])
    expect(p.returncode == 1, "an unknown option exits 1", p)
    p = run([src, "--emit=bogus"])
    expect(p.returncode == 1, "a bad --emit value exits 1", p)
    p = run([src, "--dump-ir-after=no-such-pass"])
    expect(p.returncode == 1, "an unknown pass name for --dump-ir-after exits 1", p)

    # -o writes the three files.
    out = os.path.join(tmp, "k.cu")
    p = run([src, "-o", out])
    expect(p.returncode == 0, "translation succeeds", p)
    for name in ("k.cu", "k.host.cpp", "k.h"):
        expect(os.path.exists(os.path.join(tmp, name)), f"-o k.cu writes {name}")
    with open(os.path.join(tmp, "k.host.cpp")) as f:
        host = f.read()
    expect('#include "k.h"' in host, "the host file includes its header by file name")

    # Without -o the outputs go next to the working directory, named after the input.
    work = os.path.join(tmp, "work")
    os.mkdir(work)
    p = run([src], cwd=work)
    expect(p.returncode == 0 and sorted(os.listdir(work)) == ["scale.cu", "scale.h", "scale.host.cpp"],
           "without -o, INPUT.tl gives INPUT.cu, INPUT.host.cpp and INPUT.h in the working directory", p)

    # -o - writes the .cu to stdout and nothing else.
    before = set(os.listdir(tmp))
    p = run([src, "-o", "-"])
    expect(p.returncode == 0 and b"__global__" in p.stdout and set(os.listdir(tmp)) == before,
           "-o - writes only the .cu, to stdout", p)

    # '-' reads standard input; diagnostics then name <stdin>.
    p = run(["-", "-o", "-"], stdin=SIMPLE)
    expect(p.returncode == 0 and b"scale_kernel" in p.stdout, "'-' reads the kernel from stdin", p)
    p = run(["-", "-o", "-"], stdin=b"kernel k() grid(1) { x = 1; }\n")
    expect(p.returncode == 1 and p.stderr.startswith(b"<stdin>:1:"), "diagnostics for stdin name <stdin>", p)

    # Exit 1 and no output for bad input; an existing output is left untouched.
    bad = os.path.join(tmp, "bad.tl")
    with open(bad, "w") as f:
        f.write("kernel k() grid(1) { y = 1; }\n")
    stale = os.path.join(tmp, "bad.cu")
    with open(stale, "w") as f:
        f.write("previous content\n")
    p = run([bad, "-o", stale])
    with open(stale) as f:
        kept = f.read()
    expect(p.returncode == 1 and kept == "previous content\n" and not os.path.exists(os.path.join(tmp, "bad.host.cpp")),
           "an error leaves existing outputs untouched and writes none", p)

    # An unwritable output directory is an error with status 1 and no partial files.
    locked = os.path.join(tmp, "locked")
    os.mkdir(locked)
    os.chmod(locked, stat.S_IRUSR | stat.S_IXUSR)
    if os.geteuid() != 0:
        p = run([src, "-o", os.path.join(locked, "k.cu")])
        expect(p.returncode == 1 and b"cannot write" in p.stderr and os.listdir(locked) == [],
               "an unwritable output directory is reported, nothing is written", p)
    os.chmod(locked, stat.S_IRWXU)
    p = run([src, "-o", os.path.join(tmp, "no", "such", "dir", "k.cu")])
    expect(p.returncode == 1 and b"cannot write" in p.stderr, "a missing output directory is reported with status 1", p)
    p = run([src, "-o", tmp])
    expect(p.returncode == 1 and b"is a directory" in p.stderr, "-o naming a directory is reported", p)

    # A missing input file.
    p = run([os.path.join(tmp, "missing.tl")])
    expect(p.returncode == 1 and b"cannot read input file" in p.stderr, "a missing input is reported with status 1", p)

    # --emit modes.
    for mode, marker in (("ast", b"Kernel scale"), ("ir", b"kernel scale"), ("lowered-ir", b"for ")):
        p = run([src, "--emit=" + mode])
        expect(p.returncode == 0 and marker in p.stdout, f"--emit={mode} prints to stdout", p)

    # --dump-ir-after prints to stderr, with (unchanged) for passes that changed nothing.
    p = run([src, "-o", "-", "--dump-ir-after=all"])
    expect(p.returncode == 0 and b"// ---- IR after infer-layouts" in p.stderr and b"(unchanged)" in p.stderr,
           "--dump-ir-after=all dumps after every pass", p)
    # A pass that only decides a fact about a buffer (here: X is read-only) changed something.
    expect(b"// ---- IR after analyze-params\n" in p.stderr, "--dump-ir-after=all: analyze-params is not '(unchanged)'", p)

    # --time-report: one line per phase and pass (each pass once, whatever
    # the number of kernels), then the total; the output is the same.
    timed_out = os.path.join(tmp, "timed.cu")
    p = run([src, "-o", timed_out, "--time-report"])
    report = p.stderr.decode()
    lines = report.splitlines()
    expect(p.returncode == 0 and lines and lines[0] == "tilet: time report (wall clock, ms)", "--time-report prints its header", p)
    rows = [(l[2:33].rstrip(), l[33:].split()) for l in lines[1:] if l.startswith("  ")]
    names = [name for name, _ in rows]
    for phase in ("targets", "parse", "analyze", "analyze-params", "check-barriers", "simplify", "print .cu", "print host files", "write files", "total"):
        expect(names.count(phase) == 1, f"--time-report lists '{phase}' once", p)
    expect(names[-1] == "total", "--time-report ends with the total", p)
    expect(names.index("parse") < names.index("analyze") < names.index("analyze-params") < names.index("simplify") < names.index("print .cu"),
           "--time-report lists the phases in the order they ran", p)
    total = sum(float(fields[0]) for name, fields in rows if name != "total")
    stated = float(rows[-1][1][0])
    expect(abs(total - stated) < 0.01 + 1e-6 * total, "--time-report's total is the sum of its lines", p)
    with open(timed_out) as f:
        timed_cu = f.read()
    os.makedirs(os.path.join(tmp, "untimed"))
    plain = run([src, "-o", os.path.join(tmp, "untimed", "timed.cu")])
    with open(os.path.join(tmp, "untimed", "timed.cu")) as f:
        expect(f.read() == timed_cu and plain.stderr == b"", "--time-report changes no output, and without it nothing is timed", plain)

    # --explain: remarks, and JSON lines.
    p = run([src, "-o", "-", "--explain"])
    expect(p.returncode == 0 and b"remark: parallel loop" in p.stderr, "--explain prints remarks", p)
    p = run([src, "-o", "-", "--explain=json"])
    lines = [l for l in p.stderr.decode().splitlines() if l.startswith("{")]
    ok = p.returncode == 0 and lines
    for l in lines:
        try:
            obj = json.loads(l)
            ok = ok and {"file", "line", "column", "op", "choice", "why", "rejected"} <= obj.keys()
        except ValueError:
            ok = False
    expect(ok, "--explain=json prints one JSON object per decision", p)

    # -D overrides constants; an unknown name is a warning.
    cfile = os.path.join(tmp, "c.tl")
    with open(cfile, "w") as f:
        f.write("const N = 64;\nkernel k(X: f32[N]) grid(1) threads(32) { for i in parallel(N) { X[i] = 0.0; } }\n")
    p = run([cfile, "--emit=ir", "-D", "N=512"])
    expect(p.returncode == 0 and b"X: global f32[512]" in p.stdout, "-D N=512 overrides the constant", p)
    p = run([cfile, "-o", "-", "-DNOPE=1"])
    expect(p.returncode == 0 and b"warning: -D NOPE does not match any constant" in p.stderr, "unknown -D is a warning", p)
    p = run([cfile, "-o", "-", "-D", "N=abc"])
    expect(p.returncode == 1 and b"invalid value 'abc' for -D N" in p.stderr, "a bad -D value is an error", p)

    # --arch overrides the file; unknown targets list the known ones.
    p = run([cfile, "-o", "-", "--arch", "sm_80"])
    expect(p.returncode == 0 and b"for sm_80" in p.stdout, "--arch selects the target", p)
    p = run([cfile, "-o", "-", "--arch", "sm_91"])
    expect(p.returncode == 1 and b"unknown target 'sm_91'" in p.stderr and b"sm_90a" in p.stderr, "unknown --arch is reported", p)

    # --target-file: a malformed file is a diagnostic with its line and column.
    tf = os.path.join(tmp, "arch.yaml")
    with open(tf, "w") as f:
        f.write("sm_87:\n  base: sm_86\n  arch: [87\n")
    p = run([cfile, "-o", "-", "--target-file", tf])
    expect(p.returncode == 1 and tf.encode() + b":4:1: error: malformed target file" in p.stderr, "a malformed target file is located", p)
    with open(tf, "w") as f:
        f.write("sm_87:\n  base: sm_86\n  arch: 87\n  gencode: arch=compute_87,code=sm_87\n")
    p = run([cfile, "-o", "-", "--target-file", tf, "--arch", "sm_87"])
    expect(p.returncode == 0 and b"for sm_87" in p.stdout, "--target-file adds a target", p)
    with open(tf, "w") as f:
        f.write("sm_87:\n  base: sm_86\n  registers: lots\n")
    p = run([cfile, "-o", "-", "--target-file", tf])
    expect(p.returncode == 1 and tf.encode() + b":3:3: error: unknown target property 'registers'" in p.stderr,
           "an unknown target property is located", p)

    # Colour: never by default off a terminal, always on request, and NO_COLOR wins over auto.
    p = run([bad, "-o", "-", "--color=always"])
    expect(b"\x1b[" in p.stderr, "--color=always colours diagnostics", p)
    p = run([bad, "-o", "-"])
    expect(b"\x1b[" not in p.stderr, "no colour when stderr is not a terminal", p)
    p = run([bad, "-o", "-", "--color=never"])
    expect(b"\x1b[" not in p.stderr, "--color=never", p)

    # --max-errors bounds the errors reported.
    many = os.path.join(tmp, "many.tl")
    with open(many, "w") as f:
        f.write("kernel k() grid(1) {\n" + "".join(f"    a{i} = 1;\n" for i in range(30)) + "}\n")
    p = run([many, "-o", "-", "--max-errors=5"])
    expect(p.returncode == 1 and p.stderr.count(b": error: use of undeclared") == 5 and b"too many errors" in p.stderr,
           "--max-errors=5 stops after five errors", p)

    # --validate runs nvcc (when there is one).
    nvcc = os.environ.get("NVCC") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else shutil.which("nvcc"))
    if nvcc:
        p = run([src, "-o", os.path.join(tmp, "v.cu"), "--validate", "--arch", "sm_80"])
        expect(p.returncode == 0, "--validate accepts code nvcc compiles", p)
        p = run([src, "-o", os.path.join(tmp, "v.cu"), "--validate"], env={"NVCC": "/bin/false"})
        expect(p.returncode == 70 and b"nvcc rejected" in p.stderr, "--validate fails when nvcc does", p)

    # --symbol-prefix: two translations of one file (two architectures) link into one library.
    if nvcc:
        cuda = os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
        objects = []
        for prefix, arch, gencode in (("v80_", "sm_80", "arch=compute_80,code=sm_80"), ("v90_", "sm_90a", "arch=compute_90a,code=sm_90a")):
            os.makedirs(os.path.join(tmp, prefix), exist_ok=True)
            cu = os.path.join(tmp, prefix, "k.cu")
            p = run([src, "-o", cu, "--arch", arch, "--symbol-prefix", prefix])
            expect(p.returncode == 0, f"--symbol-prefix {prefix} translates", p)
            subprocess.run([nvcc, "-gencode", gencode, "-Xcompiler", "-fPIC", "-c", cu, "-o", cu + ".o"], check=True)
            subprocess.run(["g++", "-std=c++17", "-fPIC", "-I", os.path.join(cuda, "include"), "-c", cu[:-3] + ".host.cpp", "-o", cu + ".host.o"],
                           check=True)
            objects += [cu + ".o", cu + ".host.o"]
        with open(os.path.join(tmp, "v80_", "k.h")) as f:
            header = f.read()
        link = subprocess.run(["g++", "-shared", "-o", os.path.join(tmp, "libboth.so")] + objects + ["-L", os.path.join(cuda, "lib64"), "-lcudart"],
                              capture_output=True, text=True)
        syms = subprocess.run(["nm", "-D", "--defined-only", os.path.join(tmp, "libboth.so")], capture_output=True, text=True).stdout
        expect(link.returncode == 0 and " v80_k_init" in syms and " v90_k_init" in syms and " v80_scale" in syms
               and " v90_scale" in syms and "cudaError_t v80_scale(" in header,
               "two prefixed translations of one file link into one library, each with its own init and launch functions",
               link.stderr + syms[-500:])
    p = run([src, "-o", os.path.join(tmp, "bad.cu"), "--symbol-prefix", "9x"])
    expect(p.returncode == 1 and b"invalid --symbol-prefix '9x'" in p.stderr, "a prefix that cannot start an identifier is a command-line error", p)

    # Internal errors are never blamed on the user: exit status 70 is reserved for them.

    # Warning controls, spelled as gcc spells them.
    wout = os.path.join(tmp, "w.cu")
    p = run([src, "-o", wout, "-D", "UNUSED=1"])
    expect(p.returncode == 0 and b"warning: -D UNUSED does not match any constant [-Wunused-define]" in p.stderr,
           "an unused -D is a warning with its group", p)
    if os.path.exists(wout):
        os.remove(wout)
    p = run([src, "-o", wout, "-D", "UNUSED=1", "-Werror"])
    expect(p.returncode == 1 and b"error: -D UNUSED does not match any constant [-Werror,-Wunused-define]" in p.stderr
           and not os.path.exists(wout), "-Werror turns the warning into an error and writes nothing", p)
    p = run([src, "-o", wout, "-D", "UNUSED=1", "-Werror", "-Wno-unused-define"])
    expect(p.returncode == 0 and b"UNUSED" not in p.stderr, "-Wno-unused-define silences that group, also under -Werror", p)
    p = run([src, "-o", wout, "-Wno-no-such-group"])
    expect(p.returncode == 1 and b"no-such-group" in p.stderr, "an unknown warning group is a usage error", p)

    # Dependency files, as gcc writes them.
    lib = os.path.join(tmp, "lib $.tl")
    with open(lib, "w") as f:
        f.write("const N = 256;\n")
    user = os.path.join(tmp, "user.tl")
    with open(user, "w") as f:
        f.write('import "lib $.tl";\n' + SIMPLE.decode().replace("256", "N"))
    p = run(["user.tl", "-M"], cwd=tmp)
    expect(p.returncode == 0 and p.stdout.decode() == "user.cu user.host.cpp user.h: \\\n  user.tl \\\n  lib\\ $$.tl\n"
           and not os.path.exists(os.path.join(tmp, "user.cu")),
           "-M prints the rule (outputs: main file and imports, space and $ escaped for make) and translates nothing", p)
    spaced = os.path.join(tmp, "out dir")
    os.mkdir(spaced)
    p = run(["user.tl", "-o", "out dir/k.cu", "-MD", "-MP"], cwd=tmp)
    with open(os.path.join(spaced, "k.d")) as f:
        dep = f.read()
    expect(p.returncode == 0 and dep.startswith("out\\ dir/k.cu out\\ dir/k.host.cpp out\\ dir/k.h:") and dep.endswith("\nlib\\ $$.tl:\n")
           and os.path.exists(os.path.join(spaced, "k.cu")), "-MD writes OUT.d beside the outputs; -MP adds a phony rule per import", p)
    p = run(["user.tl", "-o", "k2.cu", "-MMD", "-MFdeps.d", "-MT", "custom", "-MQ", "a b"], cwd=tmp)
    with open(os.path.join(tmp, "deps.d")) as f:
        dep = f.read()
    expect(p.returncode == 0 and dep.startswith("custom a\\ b:"), "-MF names the file; -MT and -MQ replace the targets in order", p)
    os.mkdir(os.path.join(tmp, "cuda"))
    with open(os.path.join(tmp, "cuda", "twice.cuh"), "w") as f:
        f.write("__device__ void twice(float *x) { *x *= 2.0f; }\n")
    with open(os.path.join(tmp, "ext.tl"), "w") as f:
        f.write('kernel k(X: f32[32]) grid(1) threads(32) as (t) {\n    import_source("twice.cuh");\n'
                '    call_extern("twice", access_ptr(X[t], "rw"));\n}\n')
    p = run(["ext.tl", "-I", "cuda", "-M"], cwd=tmp)
    expect(p.returncode == 0 and p.stdout.decode() == "ext.cu ext.host.cpp ext.h: \\\n  ext.tl \\\n  cuda/twice.cuh\n",
           "-M lists the CUDA file of an import_source (found through -I) as a dependency", p)
    # #line directives: each statement's code names its .tl line; --no-line-directives leaves them out.
    p = run(["user.tl", "-o", "lines.cu"], cwd=tmp)
    with open(os.path.join(tmp, "lines.cu")) as f:
        cu_lines = f.read().splitlines()
    kernel_at = next((i for i, l in enumerate(cu_lines) if l.startswith('extern "C" __global__')), 0)
    directives = [l for l in cu_lines[kernel_at:] if l.startswith("#line ")]
    expect(p.returncode == 0 and directives and all(re.fullmatch(r'#line \d+ "(user\.tl|lines\.cu)"', l) for l in directives)
           and directives[-1] == f'#line {cu_lines.index(directives[-1]) + 2} "lines.cu"',
           "the kernel's code carries #line directives into user.tl, and the .cu's own numbering resumes after it", "\n".join(directives))
    p = run(["user.tl", "-o", "nolines.cu", "--no-line-directives"], cwd=tmp)
    with open(os.path.join(tmp, "nolines.cu")) as f:
        expect(p.returncode == 0 and "#line" not in f.read(), "--no-line-directives: no #line", p)
    p = run(["user.tl", "-o", "-", "-MD"], cwd=tmp)
    expect(p.returncode == 1 and b"-MF" in p.stderr and p.stdout == b"", "-MD with the output on stdout needs -MF", p)
    p = run(["bad.tl", "-o", "bad2.cu", "-MD"], cwd=tmp)
    expect(p.returncode == 1 and not os.path.exists(os.path.join(tmp, "bad2.d")), "bad input writes no dependency file either", p)

    # Machine-readable diagnostics.
    twoerrors = os.path.join(tmp, "two.tl")
    with open(twoerrors, "w") as f:
        f.write("kernel k() grid(1) {\n    y = 1;\n    z = 2;\n}\n")
    p = run([twoerrors, "-o", os.path.join(tmp, "two.cu"), "--diagnostics-format=json"])
    lines = [json.loads(l) for l in p.stderr.decode().splitlines() if l.strip()]
    expect(p.returncode == 1 and len(lines) == 2 and [(d["line"], d["column"], d["severity"], d["rule"]) for d in lines] == [(2, 5, "error", "semantic"), (3, 5, "error", "semantic")]
           and lines[0]["file"].endswith("two.tl") and "'y'" in lines[0]["message"],
           "--diagnostics-format=json: one object per diagnostic with file, 1-based line and column, severity and message", p)
    p = run([twoerrors, "-o", os.path.join(tmp, "two.cu"), "--diagnostics-format=sarif", "-D", "UNUSED=1"])
    try:
        log = json.loads(p.stderr)
        run0 = log["runs"][0]
        rules = {r["id"] for r in run0["tool"]["driver"]["rules"]}
        results = run0["results"]
        regions = [r["locations"][0]["physicalLocation"]["region"] for r in results if "locations" in r]
        ok = (log["version"] == "2.1.0" and "$schema" in log and run0["tool"]["driver"]["name"] == "tilet"
              and all(r["ruleId"] in rules and r["level"] in ("error", "warning", "note") and r["message"]["text"] for r in results)
              and [r["level"] for r in results] == ["warning", "error", "error"] and results[0]["ruleId"] == "unused-define"
              and [(g["startLine"], g["startColumn"]) for g in regions] == [(2, 5), (3, 5)]
              and all(g["endColumn"] > g["startColumn"] for g in regions) and run0["columnKind"] == "unicodeCodePoints")
    except (ValueError, KeyError, IndexError, TypeError):
        ok = False
    expect(p.returncode == 1 and ok, "--diagnostics-format=sarif: one SARIF 2.1.0 log with rules, levels and 1-based regions", p)

    # The man page: one paragraph per option, its text beside it (CLI11 wraps long options' text onto the next line).
    man = os.path.join(tmp, "tilet.1")
    subprocess.run([sys.executable, os.path.join(os.path.dirname(EXAMPLES), "scripts", "help2man.py"), TILET, man, "0"], check=True)
    with open(man) as f:
        roff = f.read().split("\n")
    options = [roff[i + 1] for i in range(len(roff) - 1) if roff[i] == ".TP"]
    texts = {roff[i + 1]: roff[i + 2] for i in range(len(roff) - 2) if roff[i] == ".TP"}
    emit = [o for o in options if "\\-\\-emit" in o]
    expect(len(options) > 20 and emit and texts[emit[0]].startswith("what to write")
           and not any("\\-\\-" in t and "\\-\\-explain" in t for t in texts.values()),
           "the man page gives every option its own paragraph with its text", "\n".join(roff[:80]))

    # What the command line names is a command-line error, in every format, and notes carry their diagnostic's rule.
    p = run([os.path.join(tmp, "missing.tl"), "-o", os.path.join(tmp, "m.cu"), "--diagnostics-format=json"])
    lines = [json.loads(l) for l in p.stderr.decode().splitlines() if l.strip()]
    expect(p.returncode == 1 and [d["rule"] for d in lines] == ["command-line"], "a missing input file is a command-line error", p)
    p = run([twoerrors, "-o", os.path.join(tmp, "two.cu"), "--arch", "sm_99", "--diagnostics-format=json"])
    lines = [json.loads(l) for l in p.stderr.decode().splitlines() if l.strip()]
    expect(p.returncode == 1 and len(lines) == 1 and lines[0]["rule"] == "command-line" and lines[0]["notes"][0]["rule"] == "command-line"
           and "sm_80" in lines[0]["notes"][0]["message"], "an unknown --arch is a command-line error; its note has the same rule", p)
    p = run([twoerrors, "-o", os.path.join(tmp, "two.cu"), "--arch", "sm_99", "--diagnostics-format=sarif"])
    try:
        related = json.loads(p.stderr)["runs"][0]["results"][0]["relatedLocations"]
        ok = any("known targets" in r["message"]["text"] and "physicalLocation" not in r for r in related)
    except (ValueError, KeyError, IndexError, TypeError):
        ok = False
    expect(p.returncode == 1 and ok, "SARIF keeps a note without a location as a related location with its message", p)
    good = os.path.join(tmp, "good.tl")
    with open(good, "w") as f:
        f.write("kernel k(A: f32[128]) grid(1) threads(128) {\n    for i in parallel(128) { A[i] = A[i] * 2.0; }\n}\n")
    p = run([good, "-o", os.path.join(tmp, "good.cu"), "--explain=json", "--diagnostics-format=sarif"])
    try:
        results = json.loads(p.stderr)["runs"][0]["results"]
        ok = len(results) > 0 and all(r["ruleId"] == "decision" and r["level"] == "note" for r in results)
    except (ValueError, KeyError, IndexError, TypeError):
        ok = False
    expect(p.returncode == 0 and ok, "--explain=json with SARIF diagnostics: one valid log, each decision a result", p)

for f in failures:
    print("FAIL " + f)
print(f"cli: {checks} check(s), {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
