"""Differential testing of tilet: random valid programs (tlgen.py), their
meaning by the reference interpreter (tlinterp.py), and what tilet's CUDA
computes on the CPU emulator (emurun.py), compared within dtype tolerances.

usage: scripts/difftest --seed S --count N [--arch A] [options]

Prints one line per finding and a final line "N programs, M mismatches",
where M counts every failing program (a wrong value, a race, an internal
error, a crash or hang of tilet or of its code); exits non-zero on any. Each
failing program is delta-reduced (reduce.py) and written, with what was
wrong, into the directory it names.
"""
import argparse
import math
import os
import random
import re
import shutil
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import emurun    # noqa: E402
import tldtypes  # noqa: E402
import tlgen     # noqa: E402
import tlinterp  # noqa: E402

# ------------------------------------------------------------------ tolerances
#
# The interpreter rounds exactly as the language says (every f32 operation,
# every store), so what may differ is only what the language leaves to the
# implementation: the order of a reduction's or a gemm's sum, an f16
# accumulator's intermediate roundings, tf32 operands of an f32 mma, and the
# math library's last bits. Generated data keep sums exact, so these
# tolerances only absorb math-library differences and their propagation
# through a few operations, plus one rounding of the output dtype either way.
# An element passes if |got - ref| <= rtol * (|ref| + 0.01 * scale), where
# scale is the largest |ref| of the tensor (cancellation next to large values).
# An f64 output gets f32's tolerance: it mostly holds values computed in f32
# (sqrt, rsqrt and the like differ in their last f32 bit between a
# correctly rounded reference and the emulated 1.0f / sqrtf).
RTOL = {"f64": 2e-5, "f32": 2e-5, "tf32": 2e-5, "f16": 2e-3, "bf16": 1.6e-2, "f8e4m3": 0.13, "f8e5m2": 0.26}


def close(got, ref, dtype, scale):
    if dtype not in RTOL:
        return got == ref
    if ref != ref:
        return got != got
    if math.isinf(ref) or got != got or math.isinf(got):
        return got == ref
    return abs(got - ref) <= RTOL[dtype] * (abs(ref) + 0.01 * scale)


# ------------------------------------------------------------------ data

def make_data(interp, kernel, scalars, dyn, seed, ranges=None, byte_ranges=None):
    """Inputs and initial outputs: quarters in [-2, 2] for floats, small
    integers (int8, int4 and uint4: the whole range, to probe C's integer
    promotion and the 4-bit formats' signs). `ranges` gives integer tensors
    that hold counts or indices their valid range: {name: (lo, hi)}, or
    {name: (lo, hi, "sorted")} for offsets that must not decrease (a grouped
    GEMM's group boundaries), or {name: ("values", [v0, v1, ...])} for
    tensors that must hold exactly these (sizes and offsets that agree with
    the constants derived from them), or {name: ("distinct",)} for a float
    tensor whose values must all differ (a top-k selection, which ties would
    leave undefined); `byte_ranges` the range of every byte
    of an integer tensor's elements."""
    rng = random.Random(seed * 7919 + 1)
    ranges = ranges or {}
    byte_ranges = byte_ranges or {}
    params, _ = interp.signature(kernel)
    tensors = {}
    for name, kind, dtype, dims in params:
        if kind != "tensor":
            continue
        n = 1
        for d in interp.shape_of(kernel, name, dyn):
            n *= d
        if name in byte_ranges:
            # Every byte of each element in the range (block-scale words: four 8-bit factors each).
            lo, hi = byte_ranges[name]
            bits = tldtypes.BITS[dtype]
            vals = [sum(rng.randint(lo, hi) << 8 * i for i in range(bits // 8)) for _ in range(n)]
            if dtype.startswith("int"):   # the bytes of a signed element: two's complement
                vals = [v - (1 << bits) if v >> (bits - 1) else v for v in vals]
        elif name in ranges and ranges[name][0] == "distinct":
            # Sixteenths from -n/32 on, shuffled: distinct in f32 (and in f16 up to 2048 elements).
            vals = [(k - n // 2) / 16 for k in range(n)]
            rng.shuffle(vals)
        elif name in ranges and ranges[name][0] == "values":
            vals = list(ranges[name][1])
            if len(vals) != n:
                raise SystemExit(f"values.{name} gives {len(vals)} values; '{name}' has {n} elements")
        elif name in ranges:
            vals = [rng.randint(*ranges[name][:2]) for _ in range(n)]
            if ranges[name][2:] == ("sorted",):
                vals.sort()
        elif dtype == "f4e2m1":
            vals = [rng.choice(tldtypes.E2M1_VALUES) for _ in range(n)]
        elif dtype in tldtypes.SIX_BIT_VALUES:
            # Every code up to 4 in magnitude, subnormals included: the gemms' sums stay exact in f32.
            vals = [rng.choice([v for v in tldtypes.SIX_BIT_VALUES[dtype] if abs(v) <= 4]) for _ in range(n)]
        elif dtype in tldtypes.FLOAT_TYPES:
            vals = [rng.randint(-8, 8) * 0.25 for _ in range(n)]
        elif dtype == "int8":
            vals = [rng.randint(-127, 127) for _ in range(n)]
        elif dtype == "int4":
            vals = [rng.randint(-8, 7) for _ in range(n)]
        elif dtype == "uint4":
            vals = [rng.randint(0, 15) for _ in range(n)]
        elif dtype == "bool":
            vals = [rng.random() < 0.5 for _ in range(n)]
        elif dtype.startswith("uint"):
            vals = [rng.randint(0, 8) for _ in range(n)]
        else:
            vals = [rng.randint(-8, 8) for _ in range(n)]
        tensors[name] = vals
    return tensors


def tensor_dtypes(interp, kernel):
    params, _ = interp.signature(kernel)
    return {name: dtype for name, kind, dtype, dims in params if kind == "tensor"}


# ------------------------------------------------------------------ one program, end to end

class Case:
    """A program with what became of it at each stage."""

    def __init__(self, index, text, arch, kernel, scalars, dyn, seed, features=()):
        self.index, self.text, self.arch, self.kernel = index, text, arch, kernel
        self.scalars, self.dyn, self.seed, self.features = scalars, dyn, seed, features
        self.flags = []          # further tilet flags (-D NAME=VALUE of a ported example)
        self.ranges = {}         # integer tensors' valid values (range.NAME=LO..HI of a ported example; '// difftest: range NAME=LO..HI')
        self.byte_ranges = {}    # the range of each byte of an integer tensor's elements (bytes.NAME=LO..HI; '// difftest: bytes NAME=LO..HI')
        self.unordered = set()   # outputs whose rows hold a set: compared sorted (unordered.NAME of a ported example)
        self.tf32_truncate = False   # f32 gemm operands read as tf32 (tf32.truncate of a ported example)
        self.outcome = None      # pass, mismatch, reject, internal, crash, invalid, interp-error, emu-crash, emu-hang
        self.detail = ""


def interpret(case, tr):
    """The reference result, or sets case.outcome to invalid."""
    try:
        it = tlinterp.Interpreter(tr.ast, case.text)
        it.tf32_truncate = case.tf32_truncate
        data = make_data(it, case.kernel, case.scalars, case.dyn, case.seed, case.ranges, case.byte_ranges)
        before = {k: list(v) for k, v in data.items()}
        it.run(case.kernel, data, case.scalars, case.dyn)
        return it, before, data
    except (tldtypes.InvalidProgram, tlinterp.Unsupported) as e:
        case.outcome, case.detail = "invalid", f"{type(e).__name__}: {e}"
    except Exception as e:   # an interpreter bug: report it, never hide it
        case.outcome, case.detail = "interp-error", "interpreter error: " + "".join(traceback.format_exception(e))[-1500:]
    return None


def max_error(ref, got):
    """The largest |got - ref| of the outputs, relative to the largest |ref| of
    its tensor (finite values only): the figure docs/tilelang-ports.md gives."""
    worst = 0.0
    for name, r in ref.items():
        pairs = [(a, b) for a, b in zip(got[name], r) if isinstance(b, float) and math.isfinite(b) and isinstance(a, float) and math.isfinite(a)]
        scale = max((abs(b) for _, b in pairs), default=0.0)
        if scale > 0:
            worst = max(worst, max(abs(a - b) for a, b in pairs) / scale)
    return worst


def compare(it, kernel, ref, got, overrun, unordered=(), dyn=None):
    """What differs between the reference and the emulated outputs. The rows
    (last dimension) of an `unordered` tensor are sets: atomic fetch-adds
    give the threads their places in whatever order they run."""
    dtypes = tensor_dtypes(it, kernel)
    problems = []
    for name in overrun:
        problems.append(f"{name}: bytes past the end of the tensor were written")
    for name, r in ref.items():
        g = got[name]
        if name in unordered:
            row = it.shape_of(kernel, name, dyn or {})[-1]
            g = [x for k in range(0, len(g), row) for x in sorted(g[k:k + row], key=lambda v: (v is None, v))]
            r = [x for k in range(0, len(r), row) for x in sorted(r[k:k + row], key=lambda v: (v is None, v))]
        dt = dtypes[name]
        finite = [abs(x) for x in r if isinstance(x, float) and math.isfinite(x)]
        scale = max(finite) if finite else 0.0
        bad = [k for k, (a, b) in enumerate(zip(g, r)) if not close(a, b, dt, scale)]
        if bad:
            shape = it.shape_of(kernel, name, {})if False else None
            ex = ", ".join(f"[{k}] {g[k]!r} != {r[k]!r}" for k in bad[:4])
            problems.append(f"{name} ({dt}): {len(bad)} of {len(r)} elements differ: {ex}")
    return problems


def run_cases(cases, tilet, workdir, jobs, batch_size, timeout, emulate=True):
    """Translate, interpret, emulate and compare every case (outcomes set)."""
    os.makedirs(workdir, exist_ok=True)

    def front(case):
        base = os.path.join(workdir, f"p{case.index}")
        path = base + ".tl"
        with open(path, "w") as f:
            f.write(case.text)
        tr = emurun.translate(tilet, path, case.arch, base, flags=case.flags)
        case.translation = tr
        if not tr.ast:
            case.outcome, case.detail = tr.status, tr.message.strip()
            return
        # The interpreter judges validity first: a program it rejects is the
        # generator's fault whatever tilet did with it.
        r = interpret(case, tr)
        if r is None:
            return
        if tr.status != "ok":
            case.outcome, case.detail = tr.status, tr.message.strip()
            if tr.status == "reject" and "not supported yet" in tr.message:
                # docs/language.md section 11 lists what is checked but not
                # yet generated: not a fault of either side.
                case.outcome = "unsupported"
            return
        if not emulate:
            case.outcome = "translated"
            return
        case.interp, case.before, case.ref = r
        params = emurun.launch_params(tr.files["h"], case.kernel)
        dtypes = tensor_dtypes(case.interp, case.kernel)
        case.layout = emurun.Layout([(n, dtypes[n], len(case.before[n])) for n in case.before])
        case.arena = case.layout.pack(case.before)
        case.glue_params = params
        case.prepared = emurun.prepare(tr.files, base + ".emu.cpp")

    emurun.parallel_map(front, cases, jobs)
    ready = [c for c in cases if c.outcome is None]
    # Enough batches to keep every job compiling.
    size = max(1, min(batch_size, -(-len(ready) // max(1, jobs))))
    batches = [ready[i:i + size] for i in range(0, len(ready), size)]

    def build(bi):
        batch = batches[bi]
        entries = []
        for k, c in enumerate(batch):
            c.slot = k
            entries.append((f"p{c.index}", c.prepared,
                            emurun.glue(k, f"p{c.index}", c.kernel, c.glue_params, c.layout, c.scalars, c.dyn)))
        src = os.path.join(workdir, f"batch{bi}.cpp")
        with lock:
            text = emurun.batch_source(entries)
            ranges = list(emurun.last_ranges)
        with open(src, "w") as f:
            f.write(text)
        exe = os.path.join(workdir, f"batch{bi}")
        ok, err = emurun.compile_batch(src, exe)
        if not ok:
            # Only the programs g++ complains about fail; the batch is
            # built again without them.
            bad = emurun.culprits(err, ranges)
            for c in batch:
                if f"p{c.index}" in bad or not bad:
                    c.outcome, c.detail = "emu-build", err[-3000:]
            rest = [c for c in batch if c.outcome is None]
            if bad and rest:
                batches[bi] = rest
                build(bi)
            return
        for c in batch:
            status, arena, msg = emurun.run_program(exe, c.slot, c.arena, workdir, timeout)
            if status != "ok":
                c.outcome, c.detail = "emu-" + status, msg
                continue
            got, overrun = c.layout.unpack(arena)
            problems = compare(c.interp, c.kernel, c.ref, got, overrun, c.unordered, c.dyn)
            c.max_error = max_error(c.ref, got)
            if problems:
                c.outcome, c.detail = "mismatch", "\n".join(problems)
            else:
                c.outcome = "pass"

    lock = threading.Lock()
    emurun.parallel_map(build, list(range(len(batches))), jobs)
    return cases


# ------------------------------------------------------------------ command line

FAILING = ("mismatch", "internal", "crash", "interp-error", "emu-crash", "emu-hang", "emu-build")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="difftest", description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--arch", default="sm_80")
    ap.add_argument("--tilet", default=os.path.join(emurun.ROOT, "build", "tilet"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--batch", type=int, default=40, help="programs per g++ compile")
    ap.add_argument("--timeout", type=int, default=60, help="seconds per emulated program")
    ap.add_argument("--out", default=None, help="where failing programs go (default: difftest-failures)")
    ap.add_argument("--work", default=None, help="scratch directory (default: a temporary one)")
    ap.add_argument("--allow-rejects", action="store_true",
                    help="rejected programs (exit 1) do not fail the run (internal errors always do)")
    ap.add_argument("--no-emulate", action="store_true",
                    help="only translate and interpret (finds rejections, internal errors and invalid programs fast)")
    ap.add_argument("--no-reduce", action="store_true", help="write failing programs as generated")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directory")
    ap.add_argument("--without", action="append", default=[], metavar="FEATURE",
                    help="generate no programs using FEATURE (e.g. block_data_if, for a known bug); repeatable")
    ap.add_argument("--save", default=None, help="also write every generated program (with its header) here")
    ap.add_argument("--regressions", action="store_true",
                    help="run tests/difftest/regressions/*.tl, each against its '// expect:' line")
    ap.add_argument("--ports", default=None, metavar="MANIFEST",
                    help="run the ported examples a manifest lists (tests/difftest/ports.txt) against the interpreter")
    ap.add_argument("files", nargs="*", help="run these .tl files (with a '// difftest:' header) instead of generating")
    args = ap.parse_args(argv)

    start = time.time()
    work = args.work or tempfile.mkdtemp(prefix="difftest-")
    out = args.out or os.path.join(os.getcwd(), "difftest-failures")
    cases = []
    if args.regressions:
        rdir = os.path.join(HERE, "regressions")
        args.files = sorted(os.path.join(rdir, f) for f in os.listdir(rdir) if f.endswith(".tl"))
        args.no_reduce = True
    if args.ports:
        cases = cases_from_manifest(args.ports)
        args.no_reduce = True
    elif args.files:
        for k, path in enumerate(args.files):
            cases.append(case_from_file(k, path, args.arch))
    else:
        for k in range(args.count):
            seed = args.seed + k
            p = tlgen.generate(seed, args.arch, without=set(args.without))
            cases.append(Case(k, p.text, args.arch, p.kernel, p.scalars, p.dyn, seed, p.features))
    if args.save:
        os.makedirs(args.save, exist_ok=True)
        for c in cases:
            with open(os.path.join(args.save, f"seed{c.seed}_{c.arch}.tl"), "w") as f:
                f.write(header(c) + c.text)
    run_cases(cases, args.tilet, work, args.jobs, args.batch, args.timeout, emulate=not args.no_emulate)

    counts = {}
    for c in cases:
        counts[c.outcome] = counts.get(c.outcome, 0) + 1
    failing = [c for c in cases if c.outcome in FAILING or (c.outcome == "reject" and not args.allow_rejects)]
    if args.files or args.ports:
        failing = check_expectations(cases)
    for c in cases:
        if c in failing or c.outcome == "invalid" or c.outcome == "reject":
            first = c.detail.strip().splitlines()[0] if c.detail.strip() else ""
            print(f"seed {c.seed}: {c.outcome}: {first}")
    if failing:
        os.makedirs(out, exist_ok=True)
        import reduce as reducer
        for c in failing:
            text = c.text
            if not args.no_reduce and c.outcome != "emu-build":
                text = reducer.reduce(c, args.tilet, os.path.join(work, f"reduce{c.index}"), timeout=min(args.timeout, 10),
                                      log=print if os.environ.get("DIFFTEST_DEBUG") else None)
            path = os.path.join(out, f"seed{c.seed}_{c.arch}.tl")
            body = "\n".join(l for l in text.splitlines() if not l.startswith("// difftest:")) + "\n"
            with open(path, "w") as f:
                f.write(header(c) + body)
        print(f"failing programs (reduced) written to {out}")
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    archs = ",".join(sorted(set(c.arch for c in cases)))
    print(f"[{archs}] {summary}; {time.time() - start:.0f} s")
    # Every failing program counts: a wrong value, a crash or hang of tilet
    # (or of its code on the emulator), an internal error, a race.
    print(f"{len(cases)} programs, {len(failing)} mismatches")
    if not args.keep and not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failing else 0


def check_expectations(cases):
    """A file's '// expect: pass' (the default) or '// expect: known-failure
    OUTCOME -- why' line: a known failure that no longer fails, or fails
    otherwise, is reported so that its line is updated."""
    failing = []
    for c in cases:
        expect = "pass"
        for line in c.text.splitlines():
            if line.startswith("// expect:"):
                expect = line[len("// expect:"):].split("--")[0].strip()
        name = os.path.basename(getattr(c, "path", str(c.seed)))
        if expect == "pass":
            ok = c.outcome == "pass"
            note = "" if ok else f"expected to pass, got {c.outcome}"
        elif not expect.startswith("known-failure "):
            ok = False
            note = (f"malformed '// expect: {expect}' line: write '// expect: pass' or "
                    "'// expect: known-failure OUTCOME -- why'")
        else:
            want = expect.split()[-1]
            racy = "racy" in expect.split()
            ok = c.outcome == want or (racy and c.outcome == "pass")
            if c.outcome == want:
                note = "known failure, as expected"
            elif c.outcome == "pass":
                note = (f"known failure {want} passed" + (" (racy: it may pass by luck)" if racy else "") +
                        "; once fixed, change its line to '// expect: pass'")
            else:
                note = f"known failure {want} now gives {c.outcome}"
        error = f" (max error {c.max_error:.1e})" if getattr(c, "max_error", None) is not None and c.outcome == "pass" else ""
        print(f"{name}: {c.outcome}{error}{' (' + note + ')' if note else ''}")
        if not ok:
            failing.append(c)
    return failing


def header(c):
    lines = [f"// difftest: arch={c.arch} kernel={c.kernel} seed={c.seed}"]
    if c.scalars:
        lines.append("// difftest: scalars " + " ".join(f"{k}={v!r}" for k, v in c.scalars.items()))
    if c.dyn:
        lines.append("// difftest: dyn " + " ".join(f"{k}={v}" for k, v in c.dyn.items()))
    if c.outcome:
        lines.append(f"// outcome: {c.outcome}")
        for l in c.detail.strip().splitlines()[:12]:
            lines.append("//   " + l)
    return "\n".join(lines) + "\n"


def cases_from_manifest(manifest):
    """One case per line of a ports manifest: `FILE ARCH KERNEL [-D NAME=VALUE
    ...] [range.TENSOR=LO..HI ...] [sorted.TENSOR=LO..HI ...] [values.TENSOR=V0,V1,...] [bytes.TENSOR=LO..HI ...]
    [distinct.TENSOR ...] [unordered.TENSOR ...]
    [dyn.NAME=SIZE ...] [scalar.NAME=VALUE ...]
    [expect=known-failure OUTCOME -- why]`,
    FILE relative to the repository. A ported example keeps its own sizes;
    the -D values make it small enough to emulate, and a range gives the
    values an integer tensor of counts or indices must hold to be valid."""
    cases = []
    root = os.path.dirname(os.path.dirname(HERE))
    for line in open(manifest):
        line = line.split("#", 1)[0].strip() if not line.lstrip().startswith("#") else ""
        if not line:
            continue
        expect = None
        if " expect=" in line:
            line, expect = line.split(" expect=", 1)
        fields = line.split()
        path, arch, kernel, flags = os.path.join(root, fields[0]), fields[1], fields[2], fields[3:]
        ranges = {}
        byte_ranges = {}
        for prefix, table in (("range.", ranges), ("sorted.", ranges), ("bytes.", byte_ranges)):
            for f in [f for f in flags if f.startswith(prefix)]:
                name, span = f[len(prefix):].split("=", 1)
                lo, hi = span.split("..")
                table[name] = (int(lo, 0), int(hi, 0)) + (("sorted",) if prefix == "sorted." else ())
                flags.remove(f)
        unordered = set()
        for f in [f for f in flags if f.startswith(("distinct.", "unordered."))]:
            prefix, name = f.split(".", 1)
            if prefix == "distinct":
                ranges[name] = ("distinct",)
            else:
                unordered.add(name)
            flags.remove(f)
        for f in [f for f in flags if f.startswith("values.")]:
            name, listed = f[len("values."):].split("=", 1)
            ranges[name] = ("values", [int(v, 0) for v in listed.split(",")])
            flags.remove(f)
        # tf32.truncate: the kernel's f32 gemms run on tensor cores (the
        # manifest says so, as the interpreter does not select instructions),
        # which read their operands as tf32, the low 13 mantissa bits cut off.
        tf32_truncate = "tf32.truncate" in flags
        if tf32_truncate:
            flags.remove("tf32.truncate")
        # Dynamic sizes (`dyn NAME` dimensions) and scalar parameters, as a
        # regression's '// difftest: dyn' and 'scalars' lines give them.
        dyn, scalars = {}, {}
        for prefix, table in (("dyn.", dyn), ("scalar.", scalars)):
            for f in [f for f in flags if f.startswith(prefix)]:
                name, v = f[len(prefix):].split("=", 1)
                table[name] = float(v) if prefix == "scalar." and ("." in v or "e" in v) else int(v, 0)
                flags.remove(f)
        text = open(path).read()
        # The sizes are set in the text itself (as -D would set them), so
        # that the interpreter, which reads the source, sees them too.
        for name, value in (f.split("=", 1) for f in flags if f != "-D"):
            # (a comment after the `;` stays)
            text, n = re.subn(rf"^const {re.escape(name)} = [^;\n]*;", f"const {name} = {value};", text, flags=re.M)
            if n != 1:
                raise SystemExit(f"{manifest}: {fields[0]} has no one-line 'const {name} = ...;'")
        if expect:
            text += f"\n// expect: {expect}\n"
        c = Case(len(cases), text, arch, kernel, scalars, dyn, 1)
        c.path = f"{fields[0]} [{arch} {kernel}]"
        c.flags = ["-I", os.path.dirname(path)]   # the files its import_source statements name
        c.ranges = ranges
        c.unordered = unordered
        c.byte_ranges = byte_ranges
        c.tf32_truncate = tf32_truncate
        cases.append(c)
    return cases


def case_from_file(k, path, arch):
    """A program file with '// difftest:' lines giving what the generator
    knew: arch, kernel, seed (of the data), scalars and dynamic sizes."""
    text = open(path).read()
    meta = {"arch": arch, "seed": "1"}
    scalars, dyn, byte_ranges, ranges = {}, {}, {}, {}
    for line in text.splitlines():
        if not line.startswith("// difftest:"):
            continue
        rest = line[len("// difftest:"):].strip()
        if rest.startswith(("bytes ", "range ")):
            # bytes: the range of every byte of each element; range: of each element (an index tensor's valid rows)
            table = byte_ranges if rest.startswith("bytes ") else ranges
            for kv in rest[6:].split():
                name, span = kv.split("=")
                lo, hi = span.split("..")
                table[name] = (int(lo, 0), int(hi, 0))
        elif rest.startswith("scalars "):
            for kv in rest[8:].split():
                name, v = kv.split("=")
                scalars[name] = float(v) if "." in v or "e" in v else int(v)
        elif rest.startswith("dyn "):
            for kv in rest[4:].split():
                name, v = kv.split("=")
                dyn[name] = int(v)
        else:
            for kv in rest.split():
                name, v = kv.split("=")
                meta[name] = v
    c = Case(k, text, meta["arch"], meta["kernel"], scalars, dyn, int(meta["seed"]))
    c.path = path
    c.byte_ranges = byte_ranges
    c.ranges = ranges
    return c


if __name__ == "__main__":
    sys.exit(main())
