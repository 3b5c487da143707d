"""Generator of random valid tile programs, Csmith-style: one seed, one
program, always the same.

A program is one kernel whose blocks each own a tile of every output
tensor. It stages input tiles (random shapes, offsets and strides, partly
outside the tensors, where reads give 0) through shared memory and
fragments, computes with element-wise parallel loops, reductions and gemms,
branches on indices and on data, loops serially, pipelined and for run-time
trip counts, and stores its tiles.

Validity is kept by construction (docs/language.md):
- every element read has been written on every path (per-path tracking of
  what is initialised; loops run at least once);
- fragments are grouped in *families* of one shape whose members always
  share a distribution over the threads: a family's first statement fixes
  its layout and every later parallel loop over it indexes a member that
  already has it (section 8: "a fragment used later with another
  distribution is an error");
- values carry a class (exact or not, quantum, magnitude bound): data are
  multiples of 1/4 or small integers, so sums and products stay exact in
  f32 and conditions, casts and floor only ever see exact values -- a
  difference of rounding between the interpreter and tilet can then never
  flip a branch;
- blocks write disjoint tiles of the outputs (no races between blocks).
"""
import re
import random

# ------------------------------------------------------------------ value classes


class VC:
    """What is known of a value: exact (computed without rounding), a
    quantum it is a multiple of (exact values only), a bound on |value|,
    and integer-ness."""
    __slots__ = ("exact", "q", "m", "integer")

    def __init__(self, exact, q, m, integer=False):
        self.exact, self.q, self.m, self.integer = exact, q, m, integer


MANTISSA = {"f32": 24, "f64": 53, "f16": 11, "bf16": 8, "tf32": 11, "f8e4m3": 4, "f8e5m2": 3}
MAXF = {"f32": 3e38, "f64": 1e300, "f16": 60000.0, "bf16": 3e38, "f8e4m3": 440.0, "f8e5m2": 57000.0}
INT_RANGE = {"int8": (-128, 127), "int16": (-32768, 32767), "int32": (-2 ** 31, 2 ** 31 - 1),
             "uint8": (0, 255), "uint16": (0, 65535), "uint32": (0, 2 ** 32 - 1), "int64": (-2 ** 63, 2 ** 63 - 1)}


def fits(vc, dtype):
    """Whether a value of class vc is stored in dtype without rounding."""
    if dtype in INT_RANGE:
        lo, hi = INT_RANGE[dtype]
        return vc.integer and vc.exact and vc.m <= min(hi, -lo)
    if not vc.exact or vc.m > MAXF[dtype] / 2:
        return False
    if vc.m == 0:
        return True
    bits = MANTISSA[dtype]
    # Subnormal limits of the narrow formats: keep quanta well above them.
    if dtype in ("f16",) and vc.q < 2 ** -14:
        return False
    if dtype.startswith("f8") and vc.q < 2 ** -6:
        return False
    return vc.m / vc.q < 2 ** bits


def stored(vc, dtype):
    """The class of a value after a store into dtype."""
    # `integer` means of an integer dtype (integer operators take only
    # those), not merely integer-valued.
    if fits(vc, dtype):
        return VC(True, vc.q, vc.m, dtype in INT_RANGE)
    return VC(False, 0, vc.m * 1.01 + 1e-3, dtype in INT_RANGE)


def join(a, b):
    if a is None:
        return b
    if b is None:
        return a
    exact = a.exact and b.exact
    return VC(exact, min(a.q, b.q) if exact else 0, max(a.m, b.m), a.integer and b.integer)


# ------------------------------------------------------------------ program state


class Tile:
    """A buffer: tensor, shared tile, fragment, 1-D reduction vector or local array."""

    def __init__(self, name, kind, dtype, shape, family=None, axis=None, role=None):
        self.name, self.kind, self.dtype, self.shape = name, kind, dtype, list(shape)
        self.family, self.axis, self.role = family, axis, role
        self.vc = None          # join of every value stored so far
        self.pipelined = False  # loaded by a pipelined loop: used inside it only


class Family:
    def __init__(self, fid, shape):
        self.fid, self.shape = fid, tuple(shape)
        # (whether a member has its layout: Gen.fam_laid)
        self.members = []


FLOAT_TILE_TYPES = ["f32"] * 6 + ["f16"] * 2 + ["bf16"] * 2 + ["f64"]
GEMM_TYPES_SM80 = [("f16", "f32"), ("f16", "f32"), ("f16", "f16"), ("bf16", "f32"), ("f32", "f32"), ("int8", "int32")]
QUARTER = 0.25


class Gen:
    def __init__(self, seed, arch):
        self.rng = random.Random(seed)
        # Choices added later draw from their own stream, so that the
        # programs of every seed stay what they were.
        self.extra_rng = random.Random(seed * 7919 + 17)
        self.seed, self.arch = seed, arch
        self.lines = []
        self.depth = 1
        self.n = 0
        self.tensors, self.shared, self.families, self.vectors, self.locals = [], [], [], [], []
        self.init = set()        # names written on every path so far
        self.laid = set()        # fragments with a layout (static, program order)
        self.scope_vars = []     # (name, lo, hi) serial loop variables in scope
        self.scalars, self.dyn = {}, {}
        self.vars = []           # block-level vars: (name, dtype, VC)
        self.pipeline_depth = 0
        self.in_branch = 0
        self.features = set()
        self.without = set()
        self.observed = 0
        self.visible = set()     # names of buffers in scope
        self.scopes = [[]]       # names defined in each open block

    def define(self, t):
        self.visible.add(t.name)
        self.scopes[-1].append(t.name)

    def open_scope(self):
        self.scopes.append([])

    def close_scope(self):
        # Let what the block computed be seen: a tile of this scope that
        # nothing stored would leave its statements untested.
        local = [t for t in self.observable() if t.name in self.scopes[-1]]
        if local and self.chance(0.6):
            self.observe(self.pick(local))
        for n in self.scopes.pop():
            self.visible.discard(n)
            self.init.discard(n)

    def vis(self, tiles):
        return [t for t in tiles if t.name in self.visible]

    def members(self, fam):
        return [m for m in fam.members if m.name in self.visible]

    def fam_laid(self, fam):
        return any(m.name in self.laid for m in self.members(fam))

    # -------------------------------------------------------------- helpers
    def name(self, base):
        self.n += 1
        return f"{base}{self.n}"

    def emit(self, text):
        self.lines.append("    " * self.depth + text)

    def chance(self, p):
        return self.rng.random() < p

    def pick(self, xs):
        return self.rng.choice(xs)

    # -------------------------------------------------------------- the kernel
    def program(self):
        r = self.rng
        if self.arch in ("sm_90a", "sm_100a") and "ws_pipeline" not in self.without and self.chance(0.15):
            return self.ws_pipeline_program()
        self.threads = self.pick([32, 64, 128, 128, 128, 256])
        self.g0 = self.pick([1, 2, 2, 3, 4])
        # Clusters (sm_90 and later): pairs of blocks along x.
        self.cluster = 1
        if self.arch in ("sm_90a", "sm_100a") and self.chance(0.25):
            self.cluster = 2
            self.g0 = self.pick([2, 4])
        self.g1 = self.pick([1, 1, 2])
        self.bm = self.pick([1, 2, 4, 8, 8, 16, 16, 32])
        self.bn = self.pick([4, 8, 16, 32, 32, 48, 64])
        while self.bm * self.bn > 2048:
            self.bm //= 2
        # Inputs: 2-D tensors with random sizes (reads may run off their edges),
        # sometimes one with a dynamic dimension, and 1-D vectors.
        for _ in range(r.randint(1, 3)):
            dt = self.pick(["f32", "f32", "f16", "bf16", "int32", "int8", "f64"])
            # At least as large as any tile (a tile larger than a tensor is an
            # error); reads past the edges come from the indices instead.
            rows = r.randint(64, max(64, self.g0 * self.bm + 8))
            cols = self.pick([64, max(64, self.bn * self.g1), r.randint(64, 100)])
            t = Tile(self.name("X"), "global", dt, [rows, cols], role="in")
            if self.chance(0.2):
                dname = self.name("n")
                self.dyn[dname] = rows
                t.dynrows = dname
            self.tensors.append(t)
        if self.chance(0.4):
            t = Tile(self.name("V"), "global", self.pick(["f32", "f16", "int32"]), [r.randint(64, 128)], role="in")
            self.tensors.append(t)
        for t in self.tensors:
            t.vc = self.input_class(t.dtype)
        # Outputs: one tile of (bm, bn) per block, the last row/column of
        # tiles sometimes cut short (writes outside are dropped).
        for _ in range(r.randint(1, 2)):
            dt = self.pick(["f32", "f32", "f16", "bf16", "int32", "f64"])
            # (never below one tile: a tile larger than its tensor is an error)
            rows = self.g0 * self.bm - (r.randint(0, self.bm - 1) if self.g0 > 1 and self.chance(0.3) else 0)
            cols = self.g1 * self.bn - (r.randint(0, self.bn - 1) if self.g1 > 1 and self.chance(0.3) else 0)
            self.tensors.append(Tile(self.name("Y"), "global", dt, [rows, cols], role="out"))
        if self.chance(0.3):
            self.scalars[self.name("s")] = ("f32", self.pick([0.5, 1.25, -2.0, 3.0]))
        if self.chance(0.3):
            self.scalars[self.name("m")] = ("int32", r.randint(1, 5))

        body_start = len(self.lines)
        for _ in range(r.randint(3, 9)):
            self.statement(0)
        for t in self.tensors:
            if t.role == "out":
                self.store_output(t, final=True)
        live = self.observable()
        self.rng.shuffle(live)
        for t in live[:4]:
            self.observe(t)
        body = self.lines[body_start:]
        return self.render(body)

    def ws_pipeline_program(self):
        """The shape of program tilet warp-specializes by itself (docs/
        language.md section 5): every buffer allocated first, one pipelined
        loop whose global->shared copies TMA can make (no conversion, rows
        of whole 16-byte units), whole warp groups; K often ends in a
        partial tile (TMA reads zeros past the edge)."""
        r = self.rng
        self.features.add("ws_pipeline")
        self.threads = self.pick([128, 128, 256])
        dt = self.pick(["f16", "f16", "bf16"])
        bm = 64 if self.threads == 128 else self.pick([64, 128])
        bn = self.pick([32, 64, 128])
        bk = self.pick([32, 64])
        self.g0, self.g1 = self.pick([1, 2]), self.pick([1, 2])
        ksize = self.pick([bk, 2 * bk, 3 * bk, 2 * bk + 8, 4 * bk - 24])
        stages = self.pick([2, 3, 4])
        trans_b = self.chance(0.4)
        m, n = self.g1 * bm, self.g0 * bn
        a = Tile(self.name("A"), "global", dt, [m, ksize], role="in")
        b = Tile(self.name("B"), "global", dt, [n, ksize] if trans_b else [ksize, n], role="in")
        o = Tile(self.name("C"), "global", self.pick(["f32", dt]), [m, n], role="out")
        self.tensors += [a, b, o]
        for t in (a, b):
            t.vc = self.input_class(dt)
        self.bm, self.bn = bm, bn
        body = []
        e = body.append
        e(f"    let As = alloc_shared([{bm}, {bk}], {dt});")
        e(f"    let Bs = alloc_shared([{bn}, {bk}], {dt});" if trans_b else f"    let Bs = alloc_shared([{bk}, {bn}], {dt});")
        e(f"    let Acc = alloc_fragment([{bm}, {bn}], f32);")
        elementwise = self.chance(0.2) and ksize >= bn
        if elementwise:
            e(f"    let Xs = alloc_shared([{bm}, {bn}], {dt});")
        e("    clear(Acc);")
        trip = f"ceildiv({ksize}, {bk})"
        e(f"    for k in pipelined({trip}, stages = {stages}) {{")
        e(f"        copy({a.name}[by * {bm}, k * {bk}], As);")
        e(f"        copy({b.name}[bx * {bn}, k * {bk}], Bs);" if trans_b else f"        copy({b.name}[k * {bk}, bx * {bn}], Bs);")
        if elementwise:
            e(f"        copy({a.name}[by * {bm}, k * 8], Xs);")
        e(f"        gemm(As, Bs, Acc{', transpose_B = true' if trans_b else ''});")
        if elementwise:
            e(f"        for i, j in parallel({bm}, {bn}) {{")
            e(f"            Acc[i, j] = Acc[i, j] + Xs[i, j];")
            e("        }")
        e("    }")
        if self.chance(0.5):
            e(f"    for i, j in parallel({bm}, {bn}) {{")
            e(f"        Acc[i, j] = {self.pick(['max(Acc[i, j], 0.0)', 'Acc[i, j] * 0.5 - 1.0', 'abs(Acc[i, j])'])};")
            e("    }")
        e(f"    copy(Acc, {o.name}[by * {bm}, bx * {bn}]);")
        self.g0, self.g1 = self.g0, self.g1
        text = self.render_ws(body)
        return text

    def render_ws(self, body):
        params = [f"{t.name}: {t.dtype}[{', '.join(map(str, t.shape))}]" for t in self.tensors]
        self.kernel = f"k{self.seed}"
        head = [f"// difftest program, seed {self.seed}, {self.arch}",
                f"kernel {self.kernel}({', '.join(params)})",
                f"    grid({self.g0}, {self.g1}) as (bx, by)",
                f"    threads({self.threads})",
                "{"]
        return "\n".join(head + body + ["}"]) + "\n"

    def input_class(self, dt):
        if dt in ("int8",):
            return VC(True, 1, 127, True)
        if dt.startswith("int") or dt.startswith("uint"):
            return VC(True, 1, 8, True)
        return VC(True, QUARTER, 2.0)

    def render(self, body):
        params = []
        for t in self.tensors:
            dims = [f"dyn {t.dynrows}" if getattr(t, "dynrows", None) else str(t.shape[0])] + [str(d) for d in t.shape[1:]]
            params.append(f"{t.name}: {t.dtype}[{', '.join(dims)}]")
        for s, (dt, _) in self.scalars.items():
            params.append(f"{s}: {dt}")
        self.kernel = f"k{self.seed}"
        grid = f"grid({self.g0}, {self.g1}) as (bx, by)" if self.g1 > 1 else f"grid({self.g0}) as (bx)"
        decls, params, body = self.dtype_constant(params, body)
        fns, body = self.outline_fn(body, params)
        head = [f"// difftest program, seed {self.seed}, {self.arch}"] + decls + fns + [
                f"kernel {self.kernel}({', '.join(params)})",
                f"    {grid}",
                f"    threads({self.threads})"]
        if self.cluster > 1:
            head.append(f"    cluster({self.cluster}, 1, 1)")
        head.append("{")
        return "\n".join(head + body + ["}"]) + "\n"

    def dtype_constant(self, params, body):
        """Sometimes one dtype is a dtype constant (`const dt_f16 = f16;`) in
        the parameter types and allocations that use it."""
        if self.extra_rng.random() >= 0.3:
            return [], params, body
        used = sorted({p.split(": ")[1].split("[")[0] for p in params})
        dt = self.extra_rng.choice(used)
        name = "dt_" + dt
        params = [p.replace(f": {dt}[", f": {name}[") if p.split(": ")[1].startswith(dt + "[") else p for p in params]
        body = [re.sub(r"(alloc_\w+\(\[[^\]]*\]), " + dt + r"\)", r"\1, " + name + ")", line) for line in body]
        self.features.add("dtype_constant")
        return [f"const {name} = {dt};"], params, body

    def outline_fn(self, body, params):
        """Sometimes one statement of the kernel's body (not a binding) becomes
        a fn, called in its place with the kernel-level names it uses."""
        if self.extra_rng.random() >= 0.3:
            return [], body
        starts = []
        for i, line in enumerate(body):
            if line.startswith("    ") and not line.startswith("     ") and not re.match(r"    (let|var|\}) ?", line):
                starts.append(i)
        if not starts:
            return [], body
        start = self.extra_rng.choice(starts)
        end = start
        if body[start].endswith("{"):
            while body[end] != "    }":
                end += 1
        block = body[start:end + 1]
        known = {p.split(":")[0] for p in params} | set(self.dyn)
        known |= {m.group(1) for line in body[:start] for m in [re.match(r"    (?:let|var) (\w+)", line)] if m}
        used = []
        for name in re.findall(r"\b[A-Za-z_]\w*\b", "\n".join(block)):
            if name in known and name not in used:
                used.append(name)
        fn = f"f{self.seed}"
        self.features.add("fn")
        return ([f"fn {fn}({', '.join(used)}) {{"] + block + ["}"],
                body[:start] + [f"    {fn}({', '.join(used)});"] + body[end + 1:])

    def block_index(self, axis):
        if axis == 1 and self.g1 == 1:
            return "0"
        return "bx" if axis == 0 else "by"

    # -------------------------------------------------------------- statements
    def statement(self, level):
        choices = [(self.load, 5), (self.compute, 8), (self.reduce, 3), (self.stash, 2), (self.gemm, 3),
                   (self.store_some, 2), (self.fill, 1), (self.vector_loop, 1)]
        if level < 2:
            choices += [(self.serial_loop, 3), (self.index_if, 2), (self.data_if, 1)]
            if self.arch not in ("sm_70", "sm_75") and not self.pipeline_depth and not self.in_branch and level == 0:
                choices += [(self.pipelined_loop, 2)]
        choices += [(self.scalar_var, 1), (self.local_array, 1), (self.atomic, 1)]
        if level == 0 and self.arch in ("sm_90a", "sm_100a") and not self.in_branch:
            choices += [(self.ws_roles, 2)]
            if self.cluster > 1:
                choices += [(self.cluster_exchange, 2)]
        choices = [(fn, w) for fn, w in choices if fn.__name__ not in self.without]
        total = sum(w for _, w in choices)
        for _ in range(8):
            x = self.rng.uniform(0, total)
            for fn, w in choices:
                x -= w
                if x <= 0:
                    break
            if fn(level) is not False:
                return

    # ---- allocation
    def alloc_shared(self, shape, dtype):
        t = Tile(self.name("S"), "shared", dtype, shape)
        self.emit(f"let {t.name} = alloc_shared([{', '.join(map(str, shape))}], {dtype});")
        self.shared.append(t)
        self.define(t)
        return t

    def family(self, shape):
        for f in self.families:
            if f.shape == tuple(shape) and self.chance(0.8):
                return f
        f = Family(len(self.families), shape)
        self.families.append(f)
        return f

    def alloc_fragment(self, fam, dtype):
        t = Tile(self.name("F"), "fragment", dtype, fam.shape, family=fam)
        self.emit(f"let {t.name} = alloc_fragment([{', '.join(map(str, fam.shape))}], {dtype});")
        fam.members.append(t)
        self.define(t)
        return t

    def tile_shape(self):
        r = self.rng
        h = self.pick([1, 2, 4, 8, 16, self.bm, self.bm])
        w = self.pick([4, 8, 16, 32, self.bn, self.bn, 64, 12, 24])
        while h * w > 2048:
            h = max(1, h // 2)
        return [h, w]

    # ---- global loads
    def input_origin(self, t, h, w):
        """Row and column index expressions of a tile of t: relative to the
        block, or from a loop variable, sometimes off the edge."""
        r = self.rng
        rows = t.shape[0]
        cols = t.shape[1] if len(t.shape) > 1 else None
        row = self.pick([f"{self.block_index(0)} * {h}", f"{self.block_index(0)} * {self.bm}", str(r.randint(0, max(0, rows - h))),
                         f"{self.block_index(0)} * {h} + {r.randint(0, 3)}"])
        if self.scope_vars and self.chance(0.5):
            v, lo, hi = self.pick(self.scope_vars)
            row = f"{v} * {self.pick([1, 2, h])}"
        col = None
        if cols is not None:
            col = self.pick([f"{self.block_index(1)} * {w}", str(r.randint(0, max(0, cols - w))), "0",
                             f"{self.block_index(0)} + {r.randint(0, cols)}"])
            if self.scope_vars and self.chance(0.4):
                v, lo, hi = self.pick(self.scope_vars)
                col = f"{v} * {self.pick([4, 8, w])}"
        return row, col

    def load(self, level, into=None):
        ins = [t for t in self.tensors if t.role == "in" and len(t.shape) == 2]
        if not ins:
            return False
        src = self.pick(ins)
        if into is None:
            shape = self.tile_shape()
            if self.chance(0.5):
                dst = self.alloc_shared(shape, self.pick([src.dtype, src.dtype, "f32"]))
            else:
                fam = self.family(shape)
                if self.fam_laid(fam) and not self.chance(0.5):
                    cands = [m for m in self.members(fam) if m.name in self.laid]
                    dst = self.pick(cands) if cands else self.alloc_fragment(fam, src.dtype)
                    if dst.name not in self.laid:
                        return False
                elif not self.fam_laid(fam):
                    dst = self.alloc_fragment(fam, self.pick([src.dtype, "f32"]))
                else:
                    return False
        else:
            dst = into
        h, w = dst.shape
        row, col = self.input_origin(src, h, w)
        if self.chance(0.5):
            region = f"{src.name}[{row}, {col}]"
        else:
            region = f"{src.name}[{row}:{row} + {h}, {col}:{col} + {w}]"
        self.emit(f"copy({region}, {dst.name});")
        self.written(dst, stored(src.vc, dst.dtype))
        return dst

    def written(self, t, vc):
        t.vc = join(t.vc, vc) if t.name in self.init or t.vc is not None else vc
        self.init.add(t.name)
        if t.kind == "fragment":
            self.laid.add(t.name)

    # ---- parallel loops
    def operands(self, fam_shape, fam, vars_, dst=None):
        """Readable operands of a loop over fam_shape: (code, VC). The
        destination is read only at the iteration's own element (the
        iterations of a parallel loop are independent)."""
        i, j = vars_
        h, w = fam_shape
        ops = []
        if fam is not None:
            for m in self.members(fam):
                if m.name in self.init and m.name in self.laid:
                    ops.append((f"{m.name}[{i}, {j}]", m.vc, "laid"))
            for v in self.vis(self.vectors):
                if v.family is fam and v.name in self.init:
                    ops.append((f"{v.name}[{i if v.axis == 0 else j}]", v.vc, "vec"))
        for s in self.vis(self.shared):
            if s.name not in self.init or s.pipelined and not self.pipeline_depth:
                continue
            if len(s.shape) == 2 and s.shape == [h, w]:
                ops.append((f"{s.name}[{i}, {j}]", s.vc, "shared"))
            if s is dst:
                continue
            if len(s.shape) == 2 and s.shape == [h, w] and h > 1 and self.chance(0.5):
                # Another row of the same column: beside s[i, j] in one loop,
                # two loads of s that vectorization must keep apart.
                ops.append((f"{s.name}[{h - 1} - {i}, {j}]", s.vc, "shared"))
            if len(s.shape) == 2 and s.shape == [w, h]:
                ops.append((f"{s.name}[{j}, {i}]", s.vc, "shared"))
            if len(s.shape) == 2 and s.shape[0] >= 1 and s.shape[1] == w and s.shape != [h, w]:
                ops.append((f"{s.name}[{self.rng.randint(0, s.shape[0] - 1)}, {j}]", s.vc, "shared"))
        for t in self.tensors:
            if t.role != "in":
                continue
            if len(t.shape) == 2:
                r0 = self.pick([f"{self.block_index(0)} * {h} + {i}", f"{i}", f"{i} + {self.rng.randint(0, 9)}"])
                c0 = self.pick([f"{j}", f"{self.block_index(1)} * {w} + {j}", f"{j} + {self.rng.randint(1, 5)}", f"{j} * 2"])
                if self.scope_vars and self.chance(0.3):
                    c0 = f"{j} + {self.pick(self.scope_vars)[0]}"
                ops.append((f"{t.name}[{r0}, {c0}]", t.vc, "global"))
            else:
                ops.append((f"{t.name}[{self.pick([j, i, f'{j} + {i}'])}]", t.vc, "global"))
        for l in self.vis(self.locals):
            if l.name in self.init:
                ops.append((f"{l.name}[{self.rng.randint(0, l.shape[0] - 1)}]", l.vc, "local"))
        for name, dt, vc in self.vars:
            if name not in self.visible:
                continue

            ops.append((name, vc, "var"))
        for s, (dt, val) in self.scalars.items():
            ops.append((s, VC(True, 0.25 if dt == "f32" else 1, abs(val), dt == "int32"), "scalar"))
        return ops

    def expr(self, ops, depth, want_int=False):
        """A random expression: (code, VC). Float expressions unless want_int."""
        r = self.rng
        if want_int:
            return self.int_expr(ops, depth)
        if depth <= 0 or self.chance(0.25):
            floats = [o for o in ops if not o[1].integer]
            if floats and self.chance(0.85):
                code, vc, _ = self.pick(floats)
                return code, vc
            if ops and self.chance(0.5):
                code, vc, _ = self.pick(ops)
                if vc.integer:
                    return f"cast({code}, f32)", VC(vc.exact, 1, vc.m)
                return code, vc
            c = self.pick([0.5, 1.0, 2.0, -1.5, 0.25, 3.0])
            return repr(c), VC(True, 0.25, abs(c))
        a, va = self.expr(ops, depth - 1)
        kind = self.pick(["add", "sub", "mul", "mulc", "max", "min", "abs", "neg", "div2", "sel", "math", "divx",
                          "clamp", "floor", "intcast"])
        if kind in ("add", "sub", "mul", "max", "min"):
            b, vb = self.expr(ops, depth - 1)
            if kind == "mul":
                vc = VC(va.exact and vb.exact, va.q * vb.q, va.m * vb.m)
                if vc.m > 1e4:
                    return f"min(max({a}, -4.0), 4.0)", VC(va.exact, va.q, min(va.m, 4.0))
                vc = VC(vc.exact and vc.m / max(vc.q, 1e-30) < 2 ** 22, vc.q, vc.m)
                return f"{a} * {b}", vc
            if kind in ("max", "min"):
                return f"{kind}({a}, {b})", VC(va.exact and vb.exact, min(va.q, vb.q), max(va.m, vb.m))
            vc = VC(va.exact and vb.exact, min(va.q, vb.q), va.m + vb.m)
            vc.exact = vc.exact and vc.m / max(vc.q, 1e-30) < 2 ** 22
            op = "+" if kind == "add" else "-"
            return f"({a} {op} {b})", vc
        if kind == "mulc":
            c = self.pick([2.0, 0.5, -3.0, 1.5])
            return f"{a} * {c}", VC(va.exact, va.q * (0.5 if c in (0.5, 1.5) else 1), va.m * abs(c))
        if kind == "abs":
            return f"abs({a})", va
        if kind == "neg":
            return f"-{a}" if not a.startswith("-") else f"-({a})", va
        if kind == "div2":
            return f"{a} / 4.0", VC(va.exact, va.q / 4, va.m / 4)
        if kind == "clamp":
            return f"min(max({a}, -2.5), 2.5)", VC(va.exact, va.q, min(va.m, 2.5))
        if kind == "floor" and va.exact:
            return f"floor({a})", VC(True, 1, va.m + 1)
        if kind == "intcast" and va.exact and va.m < 1e6:
            return f"cast(cast({a}, int32), f32)", VC(True, 1, va.m)
        if kind == "sel":
            c = self.condition(ops)
            if c is None:
                return a, va
            b, vb = self.expr(ops, depth - 1)
            return f"({c} ? {a} : {b})", join(va, vb)
        if kind == "divx":
            b, vb = self.expr(ops, depth - 1)
            return f"{a} / (1.0 + abs({b}))", VC(False, 0, va.m)
        fn = self.pick(["exp", "sqrt", "tanh", "sigmoid", "sin", "log", "exp2", "rsqrt", "cos"])
        self.features.add("math")
        if fn == "exp" or fn == "exp2":
            return f"{fn}(min({a}, 3.0))", VC(False, 0, 21.0)
        if fn in ("sqrt",):
            return f"sqrt(abs({a}))", VC(False, 0, va.m ** 0.5 + 1)
        if fn == "log":
            return f"log(abs({a}) + 1.0)", VC(False, 0, va.m + 1)
        if fn == "rsqrt":
            return f"rsqrt(abs({a}) + 0.5)", VC(False, 0, 1.5)
        return f"{fn}({a})", VC(False, 0, 1.0)

    def int_expr(self, ops, depth):
        ints = [o for o in ops if o[1].integer and o[1].exact]
        if depth <= 0 or self.chance(0.3) or not ints:
            if ints and self.chance(0.8):
                code, vc, _ = self.pick(ints)
                return code, vc
            c = self.rng.randint(-3, 7)
            return str(c), VC(True, 1, abs(c), True)
        a, va = self.int_expr(ops, depth - 1)
        b, vb = self.int_expr(ops, depth - 1)
        kind = self.pick(["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "max", "min"])
        if kind in ("+", "-"):
            return f"({a} {kind} {b})", VC(True, 1, va.m + vb.m, True)
        if kind == "*":
            if va.m * vb.m > 1e6:
                return a, va
            return f"{a} * {b}", VC(True, 1, va.m * vb.m, True)
        if kind in ("/", "%"):
            c = self.rng.randint(1, 5)
            return f"{a} {kind} {c}", VC(True, 1, va.m, True)
        if kind in ("&", "|", "^"):
            return f"({a} {kind} {b})", VC(True, 1, max(va.m, vb.m) * 2 + 1, True)
        if kind in ("<<", ">>"):
            # (a left shift of a negative value is undefined in C; tilet
            # reports one between constants as an overflow)
            a, va = f"abs({a})", VC(True, 1, va.m, True)
            c = self.rng.randint(0, 3)
            if kind == "<<" and va.m * 8 > 1e6:
                return a, va
            return f"({a} {kind} {c})", VC(True, 1, va.m * (8 if kind == "<<" else 1), True)
        return f"{kind}({a}, {b})", VC(True, 1, max(va.m, vb.m), True)

    def condition(self, ops):
        """A bool from exact values only (so rounding never decides it)."""
        exact = [o for o in ops if o[1].exact]
        if not exact:
            return None
        code, vc, _ = self.pick(exact)
        cmp = self.pick(["<", "<=", ">", ">=", "==", "!="])
        if vc.integer:
            c = str(self.rng.randint(-2, 4))
        else:
            c = self.pick(["0.0", "0.5", "-0.25", "1.0"])
        cond = f"{code} {cmp} {c}"
        if self.chance(0.2):
            code2, vc2, _ = self.pick(exact)
            c2 = "1" if vc2.integer else "0.0"
            cond = f"({cond}) {self.pick(['&&', '||'])} {code2} > {c2}"
        return cond

    def compute(self, level):
        """A parallel loop over a family's shape writing one of its
        fragments, a shared tile or the block's tile of an output."""
        shape = self.tile_shape() if not self.families or self.chance(0.3) else list(self.pick(self.families).shape)
        fam = self.family(shape)
        i, j = self.name("i"), self.name("j")
        ops = self.operands(fam.shape, fam, (i, j))
        laid_ops = [o for o in ops if o[2] == "laid"]
        # The destination.
        target = self.pick(["frag", "frag", "frag", "shared", "out"])
        if target == "out" and "output_overwrite" in self.without:
            target = "shared"
        dst_code, dst = None, None
        if target == "frag":
            cands = [m for m in self.members(fam) if m.name in self.laid] if self.fam_laid(fam) else []
            if self.fam_laid(fam) and (not cands or self.chance(0.5)):
                if not laid_ops:
                    return False
                dst = self.alloc_fragment(fam, self.pick(FLOAT_TILE_TYPES + ["int32"]))
            elif cands:
                dst = self.pick(cands)
            else:
                dst = self.alloc_fragment(fam, self.pick(FLOAT_TILE_TYPES + ["int32"]))
            dst_code = f"{dst.name}[{i}, {j}]"
        elif target == "shared":
            cands = [s for s in self.vis(self.shared) if s.shape == list(shape) and not s.pipelined]
            dst = self.pick(cands) if cands and self.chance(0.5) else self.alloc_shared(shape, self.pick(FLOAT_TILE_TYPES + ["int32"]))
            dst_code = f"{dst.name}[{i}, {j}]"
        else:
            outs = [t for t in self.tensors if t.role == "out"]
            dst = self.pick(outs)
            h, w = shape
            if h > self.bm or w > self.bn:
                return False
            r0 = self.rng.randint(0, self.bm - h)
            c0 = self.rng.randint(0, self.bn - w)
            dst_code = f"{dst.name}[{self.block_index(0)} * {self.bm} + {r0} + {i}, {self.block_index(1)} * {self.bn} + {c0} + {j}]"
        if dst.kind == "shared":
            # Only the iteration's own element of the destination may be read.
            own = f"{dst.name}[{i}, {j}]"
            ops = [o for o in ops if not o[0].startswith(dst.name + "[") or o[0] == own]
        is_int = dst.dtype.startswith("int") and self.chance(0.7)
        # A loop that reads the family's fragments takes its layout from a
        # member indexed exactly by its variables: the destination, or else
        # the anchor term added below.
        needs_anchor = self.fam_laid(fam) and (dst.kind == "fragment" and dst.name not in self.laid or
                                               dst.kind != "fragment" and laid_ops and self.chance(0.5))
        if dst.kind != "fragment" and not needs_anchor:
            ops = [o for o in ops if o[2] not in ("laid", "vec")]
        if needs_anchor:
            # The loop must take the family's layout from a member that has it.
            anchor_code, anchor_vc, _ = self.pick(laid_ops)
            e, vc = self.expr(ops, 2, want_int=is_int)
            if anchor_vc.integer:
                anchor_code = f"cast({anchor_code}, f32)"
            if is_int:
                e, vc = f"({e} + cast({anchor_code}, int32))" if anchor_vc.exact and anchor_vc.m < 1e6 else e, vc
                if "cast(" + anchor_code not in e:
                    return False
            else:
                e = f"({e} + {anchor_code})"
                vc = VC(vc.exact and anchor_vc.exact, min(vc.q, anchor_vc.q) if vc.exact and anchor_vc.exact else 0, vc.m + anchor_vc.m)
        else:
            e, vc = self.expr(ops, self.rng.randint(1, 3), want_int=is_int)
        if not is_int and dst.dtype.startswith("int"):
            # floor keeps the value integral; it must fit the integer dtype
            lo, hi = INT_RANGE[dst.dtype]
            if not vc.exact or vc.m + 1 > min(hi, -lo):
                return False
            e, vc = f"cast({e}, {dst.dtype})", VC(True, 1, vc.m + 1, True)
        if not is_int and dst.dtype in ("f16", "bf16") and vc.m > 1000:
            e, vc = f"min(max({e}, -1000.0), 1000.0)", VC(vc.exact, vc.q, 1000.0)
        self.features.add("parallel")
        self.emit(f"for {i}, {j} in parallel({shape[0]}, {shape[1]}) {{")
        self.depth += 1
        if self.chance(0.25) and (dst.name in self.init or True):
            c = self.condition(ops)
            if c is not None:
                e2, vc2 = self.expr(ops, 1, want_int=is_int)
                if not is_int and dst.dtype.startswith("int"):
                    if not vc2.exact or vc2.m + 1 > min(INT_RANGE[dst.dtype][1], -INT_RANGE[dst.dtype][0]):
                        e2, vc2 = "0", VC(True, 1, 0, True)
                    else:
                        e2 = f"cast({e2}, {dst.dtype})"
                if is_int and not dst.dtype.startswith("int"):
                    pass
                self.features.add("data_if")
                self.emit(f"if ({c}) {{")
                self.emit(f"    {dst_code} = {e};")
                self.emit("} else {")
                self.emit(f"    {dst_code} = {e2};")
                self.emit("}")
                vc = join(vc, vc2)
            else:
                self.emit(f"{dst_code} = {e};")
        else:
            self.emit(f"{dst_code} = {e};")
        self.depth -= 1
        self.emit("}")
        if dst.kind in ("fragment", "shared"):
            self.written(dst, stored(vc, dst.dtype))
        return True

    def vector_loop(self, level):
        vs = [v for v in self.vis(self.vectors) if v.name in self.init]
        if not vs:
            return False
        v = self.pick(vs)
        i = self.name("i")
        ops = [(f"{u.name}[{i}]", u.vc, "vec") for u in self.vectors if u.family is v.family and u.axis == v.axis and u.name in self.init]
        e, vc = self.expr(ops, 2)
        if v.dtype.startswith("int"):
            return False
        self.emit(f"for {i} in parallel({v.shape[0]}) {{")
        self.emit(f"    {v.name}[{i}] = {e};")
        self.emit("}")
        self.written(v, stored(vc, v.dtype))
        return True

    def reduce(self, level):
        if self.extra_rng.random() < 0.25 and self.reduce_shared():
            return True
        fams = [f for f in self.families if any(m.name in self.init and m.name in self.laid for m in self.members(f))]
        if not fams:
            return False
        fam = self.pick(fams)
        src = self.pick([m for m in self.members(fam) if m.name in self.init and m.name in self.laid])
        dim = self.rng.randint(0, 1)
        axis = 0 if dim == 1 else 1   # which loop variable indexes the result
        op = self.pick(["sum", "max", "min", "abssum", "absmax"])
        n = src.shape[dim]
        cands = [v for v in self.vis(self.vectors) if v.family is fam and v.axis == axis]
        clear = True
        if cands and self.chance(0.5):
            dst = self.pick(cands)
            clear = not (dst.name in self.init and self.chance(0.5))
        else:
            dt = "f32" if not src.dtype.startswith("int") else self.pick(["int32", "f32"])
            dst = Tile(self.name("R"), "fragment", dt, [src.shape[1 - dim]], family=fam, axis=axis)
            self.emit(f"let {dst.name} = alloc_fragment([{dst.shape[0]}], {dt});")
            self.vectors.append(dst)
            self.define(dst)
        vc = src.vc
        if op in ("sum", "abssum"):
            vc = VC(vc.exact, vc.q, vc.m * n, vc.integer)
            if not clear and dst.vc is not None:
                vc = VC(vc.exact and dst.vc.exact, min(vc.q, dst.vc.q), vc.m + dst.vc.m, vc.integer)
            if dst.dtype.startswith("int") and not vc.integer:
                return False
        if dst.dtype.startswith("int") and (not vc.exact or not vc.integer or vc.m > 1e6):
            return False
        kw = f", dim = {dim}" if dim != 1 or self.chance(0.5) else ""
        if not clear:
            kw += ", clear = false"
        self.emit(f"reduce_{op}({src.name}, {dst.name}{kw});")
        self.features.add("reduce")
        vc2 = stored(vc, dst.dtype)
        if not clear:
            vc2 = join(vc2, dst.vc)
        dst.vc = vc2 if dst.name not in self.init else join(dst.vc, vc2)
        self.init.add(dst.name)
        self.laid.add(dst.name)
        return True

    def reduce_shared(self):
        """reduce_* of a shared tile (staged through a fragment, TileLang's
        reduce_macro) into a fresh fragment vector or a fresh shared vector,
        which is observed at once (neither joins a family)."""
        srcs = [t for t in self.vis(self.shared) if t.name in self.init and not t.pipelined and len(t.shape) == 2
                and not t.dtype.startswith("int") and t.vc is not None]
        if not srcs:
            return False
        x = self.extra_rng
        src = x.choice(srcs)
        dim = x.randint(0, 1)
        op = x.choice(["sum", "max", "min", "abssum", "absmax"])
        n = src.shape[dim]
        scope = x.choice(["fragment", "shared"])
        dst = Tile(self.name("R" if scope == "fragment" else "SR"), scope, "f32", [src.shape[1 - dim]])
        self.emit(f"let {dst.name} = alloc_{scope}([{dst.shape[0]}], f32);")
        self.define(dst)
        clear = True
        if x.random() < 0.4:
            # clear = false on a value of its own first.
            self.emit(f"fill({dst.name}, 1.0);")
            clear = False
        vc = src.vc
        if op in ("sum", "abssum"):
            vc = VC(vc.exact, vc.q, vc.m * n, vc.integer)
        kw = f", dim = {dim}" + ("" if clear else ", clear = false")
        self.emit(f"reduce_{op}({src.name}, {dst.name}{kw});")
        self.features.add("reduce_shared")
        dst.vc = stored(vc, "f32") if clear else join(stored(VC(vc.exact, vc.q, vc.m + 1, vc.integer), "f32"), VC(True, 1, 1))
        self.init.add(dst.name)
        if scope == "fragment":
            self.laid.add(dst.name)
        self.observe(dst)
        return True

    def stash(self, level):
        """copy between a fragment and a shared tile of the same shape."""
        frs = [m for f in self.families for m in self.members(f) if m.name in self.init and m.name in self.laid]
        if frs and self.chance(0.6):
            src = self.pick(frs)
            cands = [s for s in self.vis(self.shared) if s.shape == src.shape and not s.pipelined]
            dst = self.pick(cands) if cands and self.chance(0.5) else self.alloc_shared(src.shape, self.pick([src.dtype, "f32"]))
            self.emit(f"copy({src.name}, {dst.name});")
            self.written(dst, stored(src.vc, dst.dtype))
            return True
        shs = [s for s in self.vis(self.shared) if s.name in self.init and not s.pipelined and len(s.shape) == 2]
        if not shs:
            return False
        src = self.pick(shs)
        fam = self.family(src.shape)
        cands = [m for m in self.members(fam) if m.name in self.laid]
        if self.fam_laid(fam) and cands:
            dst = self.pick(cands)
        elif not self.fam_laid(fam):
            dst = self.alloc_fragment(fam, self.pick([src.dtype, "f32"]))
        else:
            return False
        if dst.dtype in INT_RANGE and not fits(src.vc, dst.dtype):
            return False   # a float converted to an integer it may not fit
        self.emit(f"copy({src.name}, {dst.name});")
        self.written(dst, stored(src.vc, dst.dtype))
        return True

    def fill(self, level):
        shs = [s for s in self.vis(self.shared) if not s.pipelined]
        frs = [m for f in self.families for m in self.members(f) if m.name in self.laid or not self.fam_laid(f)]
        if shs and (not frs or self.chance(0.5)):
            t = self.pick(shs)
        elif frs:
            t = self.pick(frs)
        else:
            return False
        if t.dtype.startswith("int"):
            v = self.rng.randint(-3, 3)
            vc = VC(True, 1, abs(v), True)
        else:
            v = self.pick([0.0, 1.5, -0.25, 2.0])
            vc = VC(True, 0.25, abs(v))
        if self.chance(0.3):
            self.emit(f"clear({t.name});")
            vc = VC(True, 1, 0, t.dtype.startswith("int"))
        else:
            self.emit(f"fill({t.name}, {v});")
        self.written(t, vc)
        return True

    # ---- gemm
    def gemm(self, level):
        if self.arch in ("sm_70",):
            return False
        ta, tc = self.pick(GEMM_TYPES_SM80)
        if ta == "int8" and self.arch == "sm_75":
            return False
        # mma.sync: each warp owns a multiple of 16 rows and 8 columns of C.
        warps = self.threads // 32
        shapes = [(m, n) for m in (16, 32, 64) for n in (8, 16, 32, 64) if m * n <= 4096 and
                  any(warps % wm == 0 and (m // 16) % wm == 0 and (n // 8) % (warps // wm) == 0 for wm in (1, 2, 4, 8))]
        if not shapes:
            return False
        m, n = self.pick(shapes)
        kstep = {"f16": 16, "bf16": 16, "f32": 8, "int8": 32}[ta]
        k = min(64, kstep * self.pick([1, 2, 4]))
        if self.arch == "sm_75":
            if ta != "f16":
                return False
        trans_a, trans_b = self.chance(0.3), self.chance(0.3)
        if ta == "int8":
            trans_a, trans_b = False, self.chance(0.5)
        a_shape = [k, m] if trans_a else [m, k]
        b_shape = [n, k] if trans_b else [k, n]
        ins = [t for t in self.tensors if t.role == "in" and len(t.shape) == 2]
        if not ins:
            return False
        a = self.alloc_shared(a_shape, ta)
        b = self.alloc_shared(b_shape, ta)
        fam = Family(len(self.families), (m, n))
        self.families.append(fam)
        c = self.alloc_fragment(fam, tc)
        # The operands come from the inputs, converted (exactly: the data are
        # quarters of magnitude 2 or small integers).
        for buf in (a, b):
            src = self.pick(ins)
            if ta == "int8" and not src.dtype.startswith("int"):
                self.fill_operand(buf)
                continue
            row, col = self.input_origin(src, buf.shape[0], buf.shape[1])
            self.emit(f"copy({src.name}[{row}, {col}], {buf.name});")
            vc = stored(src.vc, ta)
            if not vc.exact:
                vc = stored(VC(False, 0, src.vc.m), ta)
            self.written(buf, vc)
        if tc == "f16" and not fits(VC(True, a.vc.q * b.vc.q, a.vc.m * b.vc.m * k), "f16"):
            # An f16 accumulator rounds at every step the instruction takes:
            # only an exact sum is the same in every order.
            tc = c.dtype = "f32"
            for idx, line in enumerate(self.lines):
                if line.strip().startswith(f"let {c.name} = alloc_fragment("):
                    self.lines[idx] = line.replace("f16);", "f32);")
        kw = []
        if trans_a:
            kw.append("transpose_A = true")
        if trans_b:
            kw.append("transpose_B = true")
        clear_first = self.chance(0.5)
        if not clear_first:
            self.emit(f"clear({c.name});")
            kw.append(self.pick(["", "clear_accum = false"]))
        else:
            kw.append("clear_accum = true")
        kw = [x for x in kw if x]
        self.emit(f"gemm({a.name}, {b.name}, {c.name}{''.join(', ' + x for x in kw)});")
        vc = VC(a.vc.exact and b.vc.exact, a.vc.q * b.vc.q, a.vc.m * b.vc.m * k, ta == "int8")
        self.written(c, stored(vc, tc))
        self.features.add("gemm")
        return True

    def fill_operand(self, buf):
        self.emit(f"fill({buf.name}, {self.rng.randint(-3, 3)});")
        self.written(buf, VC(True, 1, 3, True))
        return True

    # ---- stores
    def store_some(self, level):
        if "output_overwrite" in self.without:
            return False
        outs = [t for t in self.tensors if t.role == "out"]
        return self.store_output(self.pick(outs), final=False)

    def store_output(self, t, final):
        """copy a tile into this block's part of output t."""
        srcs = [s for s in self.vis(self.shared) if s.name in self.init and len(s.shape) == 2 and not s.pipelined]
        srcs += [m for f in self.families for m in self.members(f) if m.name in self.init and m.name in self.laid]
        srcs = [s for s in srcs if s.shape[0] <= self.bm and s.shape[1] <= self.bn]
        if t.dtype.startswith("int"):
            srcs = [s for s in srcs if s.vc is not None and s.vc.exact and s.vc.m < 1e6]
        if not srcs:
            if not final:
                return False
            # Always leave something to compare: a loop over the whole tile.
            i, j = self.name("i"), self.name("j")
            ops = [o for o in self.operands((self.bm, self.bn), None, (i, j)) if o[2] in ("global", "scalar")]
            e, vc = self.expr(ops, 2, want_int=t.dtype.startswith("int"))
            if t.dtype.startswith("int") and not vc.integer:
                e = "0"
            self.emit(f"for {i}, {j} in parallel({self.bm}, {self.bn}) {{")
            self.emit(f"    {t.name}[{self.block_index(0)} * {self.bm} + {i}, {self.block_index(1)} * {self.bn} + {j}] = {e};")
            self.emit("}")
            return True
        s = self.pick(srcs)
        h, w = s.shape
        r0 = self.rng.randint(0, self.bm - h)
        c0 = self.out_col(t, w)
        if c0 is None:
            return False
        row = f"{self.block_index(0)} * {self.bm} + {r0}"
        col = f"{self.block_index(1)} * {self.bn} + {c0}"
        if self.chance(0.5):
            self.emit(f"copy({s.name}, {t.name}[{row}, {col}]);")
        else:
            self.emit(f"copy({s.name}, {t.name}[{row}:{row} + {h}, {col}:{col} + {w}]);")
        return True

    def out_col(self, t, w):
        """A column offset in the block's tile of output t. Without a second
        grid dimension the region's column is a constant, which must keep
        the tile inside the tensor (an error otherwise)."""
        hi = self.bn - w
        if self.g1 == 1:
            hi = min(hi, t.shape[1] - w)
        return self.rng.randint(0, hi) if hi >= 0 else None

    def observable(self):
        """Live tiles written on every path: shared, fragments with a
        layout, reduction vectors."""
        out = []
        for t in self.vis(self.shared) + self.vis(self.vectors) + [m for f in self.families for m in self.members(f)]:
            if t.name not in self.init or t.pipelined and not self.pipeline_depth:
                continue
            if t.kind == "fragment" and t.name not in self.laid:
                continue
            if t.dtype in ("f64", "int8", "bf16", "f16", "f32", "int32"):
                out.append(t)
        return out

    def observe(self, t):
        """Copy tile t into a fresh output of its own, at this block's place."""
        if self.observed >= 8:
            return
        self.observed += 1
        blocks = f"({self.block_index(0)} * {self.g1} + {self.block_index(1)})" if self.g1 > 1 else self.block_index(0)
        dt = t.dtype if t.dtype != "int8" else "int32"
        if len(t.shape) == 1:
            o = Tile(self.name("O"), "global", dt, [self.g0 * self.g1 * t.shape[0]], role="observe")
            self.emit(f"copy({t.name}, {o.name}[{blocks} * {t.shape[0]}]);")
        else:
            h, w = t.shape
            o = Tile(self.name("O"), "global", dt, [self.g0 * h, self.g1 * w], role="observe")
            self.emit(f"copy({t.name}, {o.name}[{self.block_index(0)} * {h}, {self.block_index(1)} * {w}]);")
        self.tensors.append(o)
        self.features.add("observe")

    # ---- atomics, warp roles, clusters
    def atomic(self, level):
        """atomic_add of a tile, or of elements in a parallel loop, into an
        output every block adds to (exact values: the sum's order is free)."""
        dt = self.pick(["f32", "f32", "int32"])
        ints = dt == "int32"
        order = self.extra_rng.choice([None, None, "relaxed", "consume", "acquire", "release", "acq_rel", "seq_cst"])
        order = f", memory_order = {order}" if order else ""
        srcs = [t for t in self.observable() if t.vc is not None and t.vc.exact and t.vc.m < 1e5 and len(t.shape) == 2
                and (t.vc.integer or not ints)]
        acc = getattr(self, "acc_out", {}).get(dt)
        if srcs and self.chance(0.6):
            src = self.pick(srcs)
            h, w = src.shape
            if acc is None or acc.shape != [h, w]:
                acc = Tile(self.name("A"), "global", dt, [h, w], role="atomic")
                self.tensors.append(acc)
            self.emit(f"atomic_add({acc.name}, {src.name}{order});")
        else:
            h, w = self.tile_shape()
            if acc is None or acc.shape != [h, w]:
                acc = Tile(self.name("A"), "global", dt, [h, w], role="atomic")
                self.tensors.append(acc)
            i, j = self.name("i"), self.name("j")
            ops = [o for o in self.operands((h, w), None, (i, j)) if o[2] in ("global", "shared", "scalar", "var", "local")
                   and o[1].exact]
            e, vc = self.expr(ops, 1, want_int=ints)
            if not vc.exact or vc.m > 1e5 or (ints and not vc.integer):
                return False
            self.emit(f"for {i}, {j} in parallel({h}, {w}) {{")
            self.emit(f"    atomic_add({acc.name}[{i}, {j}], {e}{order});")
            self.emit("}")
        self.acc_out = {**getattr(self, "acc_out", {}), dt: acc}
        self.features.add("atomic_add")
        return True

    def ws_roles(self, level):
        """ws(0) produces a tile into shared memory per iteration, ws(1)
        consumes it, handed over by two mbarriers (full, empty) as in the
        seed's warp-specialized gemm (docs/language.md section 13)."""
        if self.threads != 256 or self.in_branch or self.pipeline_depth:
            return False
        ins = [t for t in self.tensors if t.role == "in" and len(t.shape) == 2]
        if not ins:
            return False
        src = self.pick(ins)
        h, w = self.pick([(4, 32), (8, 32), (16, 16), (8, 64), (16, 64), (2, 64)])
        trip = self.rng.randint(1, 3)
        sh = self.alloc_shared([h, w], self.pick([src.dtype, "f32"]) if not src.dtype.startswith("int") else "f32")
        fam = Family(len(self.families), (h, w))
        fam.role = 1
        self.families.append(fam)
        acc = Tile(self.name("F"), "fragment", "f32", [h, w], family=fam)
        self.emit(f"let {acc.name} = alloc_fragment([{h}, {w}], f32);")
        full, empty = self.name("full"), self.name("empty")
        self.emit(f"let {full} = alloc_barrier(arrive_count = 128);")
        self.emit(f"let {empty} = alloc_barrier(arrive_count = 128);")
        self.emit("ws(1) {")
        self.emit(f"    clear({acc.name});")
        self.emit("}")
        k = self.name("k")
        i, j = self.name("i"), self.name("j")
        self.emit(f"for {k} in serial({trip}) {{")
        self.emit("    ws(0) {")
        self.emit(f"        barrier_wait({empty}, ({k} + 1) % 2);")
        self.emit(f"        copy({src.name}[{self.block_index(0)} * {h}, {k} * {w // 2}], {sh.name});")
        self.emit(f"        barrier_arrive({full});")
        self.emit("    }")
        self.emit("    ws(1) {")
        self.emit(f"        barrier_wait({full}, {k} % 2);")
        self.emit(f"        for {i}, {j} in parallel({h}, {w}) {{")
        c = self.pick(["", " * 2.0", " + 1.0"])
        self.emit(f"            {acc.name}[{i}, {j}] = {acc.name}[{i}, {j}] + {sh.name}[{i}, {j}]{c};")
        self.emit("        }")
        self.emit(f"        barrier_arrive({empty});")
        self.emit("    }")
        self.emit("}")
        blocks_row = f"{self.block_index(0)} * {h}"
        o = Tile(self.name("O"), "global", "f32", [self.g0 * h, self.g1 * w], role="observe")
        self.tensors.append(o)
        self.emit("ws(1) {")
        self.emit(f"    copy({acc.name}, {o.name}[{blocks_row}, {self.block_index(1)} * {w}]);")
        self.emit("}")
        self.features.add("ws")
        return True

    def cluster_exchange(self, level):
        """Blocks of a cluster swap tiles through distributed shared memory
        (copy_cluster with dst_block) or share one load (a multicast)."""
        ins = [t for t in self.tensors if t.role == "in" and len(t.shape) == 2]
        if not ins:
            return False
        src = self.pick(ins)
        h, w = self.pick([(4, 32), (8, 16), (16, 64), (8, 64)])
        mine = self.alloc_shared([h, w], "f32")
        dt = src.dtype if src.dtype in ("f16", "bf16", "f32") else "f32"
        size = {"f16": 2, "bf16": 2, "f32": 4}.get(src.dtype, 4)
        # A multicast is a descriptor TMA load: rows of whole 16-byte units.
        if self.chance(0.5) and dt == src.dtype and src.shape[1] * size % 16 == 0:
            # Multicast: the source must not depend on the block's rank in
            # its cluster, so every block of the mask asks for the same tile.
            multi = self.alloc_shared([h, w], dt)
            row = self.pick(["0", f"{self.rng.randint(0, 8)}"] + (["by * 4"] if self.g1 > 1 else []))
            col = self.rng.randint(0, min(8, src.shape[1] - w))
            self.emit(f"copy_cluster({src.name}[{row}, {col}], {multi.name}, cluster_mask = 0b11);")
            self.written(multi, stored(src.vc, dt))
            self.observe(multi)
            self.features.add("multicast")
            return True
        other = self.alloc_shared([h, w], "f32")
        self.emit(f"copy({src.name}[{self.block_index(0)} * {h}, 0], {mine.name});")
        self.written(mine, stored(src.vc, "f32"))
        self.emit("cluster_sync();")
        self.emit(f"copy_cluster({mine.name}, {other.name}, dst_block = (block_rank_in_cluster() + 1) % 2);")
        self.emit("cluster_sync();")
        self.written(other, stored(src.vc, "f32"))
        self.observe(other)
        self.features.add("dst_block")
        return True

    # ---- control flow
    def serial_loop(self, level):
        v = self.name("k")
        kind = self.pick(["const", "const", "range", "dyn", "unroll"])
        if kind == "const":
            hi = self.rng.randint(1, 4)
            head, lo = f"serial({hi})", 0
        elif kind == "unroll":
            hi = self.rng.randint(1, 3)
            head, lo = f"unroll({hi})", 0
        elif kind == "range":
            lo = self.rng.randint(0, 2)
            hi = lo + self.rng.randint(1, 5)
            step = self.rng.randint(1, 2)
            head = f"serial({lo}, {hi}, {step})" if step > 1 else f"serial({lo}, {hi})"
        else:
            ms = [s for s, (dt, val) in self.scalars.items() if dt == "int32"]
            if not ms:
                return False
            m = self.pick(ms)
            lo, hi = 0, self.scalars[m][1]
            head = f"serial({m})"
            self.features.add("runtime_trip")
        self.emit(f"for {v} in {head} {{")
        self.depth += 1
        self.scope_vars.append((v, lo, hi))
        self.open_scope()
        count = self.rng.randint(1, 3)
        # Sometimes a break or continue on the loop variable (every thread
        # alike), between two of the body's statements (from the second
        # random stream: each seed's program is otherwise what it was).
        jump_at = self.extra_rng.randint(0, count) if self.extra_rng.random() < 0.25 else None
        for i in range(count):
            if i == jump_at:
                self.loop_jump(v, lo, hi)
            self.statement(level + 1)
        if jump_at == count:
            self.loop_jump(v, lo, hi)
        self.close_scope()
        self.scope_vars.pop()
        self.depth -= 1
        self.emit("}")
        self.features.add("serial")
        return True

    def loop_jump(self, v, lo, hi):
        word = self.extra_rng.choice(["break", "continue"])
        at = self.extra_rng.randint(lo, max(lo, hi - 1))
        op = self.extra_rng.choice(["==", ">=", "<"])
        self.emit(f"if ({v} {op} {at}) {{")
        self.emit(f"    {word};")
        self.emit("}")
        self.features.add(word)

    def pipelined_loop(self, level):
        """for k in pipelined(T, stages = S): global->shared copies first,
        then the statements that use them (section 5)."""
        ins = [t for t in self.tensors if t.role == "in" and len(t.shape) == 2]
        if not ins:
            return False
        ms = [s for s, (dt, val) in self.scalars.items() if dt == "int32"]
        trip = self.pick([str(self.rng.randint(1, 4))] * 3 + ms)
        stages = self.pick([1, 2, 2, 3])
        v = self.name("k")
        # The accumulator: a fragment of a fresh or existing family.
        shape = self.tile_shape()
        # Now and then the shape of a tile an earlier pipelined loop loaded,
        # so that this loop may load it again.
        earlier = [t for t in self.vis(self.shared) if t.pipelined]
        if earlier and not self.pipeline_depth and self.extra_rng.random() < 0.5:
            shape = list(self.extra_rng.choice(earlier).shape)
        fam = self.family(shape)
        cands = [m for m in self.members(fam) if m.name in self.laid and m.name in self.init and not m.dtype.startswith("int")]
        if self.fam_laid(fam) and not cands:
            return False
        pre = []
        if cands:
            acc = self.pick(cands)
        else:
            acc = self.alloc_fragment(fam, "f32")
            self.emit(f"clear({acc.name});")
            self.written(acc, VC(True, 1, 0))
        loads = []
        reused = set()
        for _ in range(self.rng.randint(1, 2)):
            # A tile an earlier pipelined loop loaded, loaded again here
            # (one versioned buffer for both loops), now and then.
            # (Only a tile both loops load with cp.async, from a tensor of
            # its own dtype: a converting copy is not issued ahead, and a
            # pipelined tile may be used by no other statement.)
            again = [t for t in self.vis(self.shared) if t.pipelined and t.shape == list(shape) and t not in loads
                     and getattr(t, "loaded_as_is", False) and any(i.dtype == t.dtype for i in ins)]
            if again and not self.pipeline_depth and self.extra_rng.random() < 0.4:
                loads.append(self.extra_rng.choice(again))
                reused.add(loads[-1].name)
                self.features.add("pipelined_again")
                continue
            s = self.alloc_shared(shape, self.pick(["f32", "f16", ins[0].dtype]))
            s.pipelined = True
            loads.append(s)
        self.emit(f"for {v} in pipelined({trip}, stages = {stages}) {{")
        self.depth += 1
        self.pipeline_depth += 1
        self.scope_vars.append((v, 0, 4))
        for s in loads:
            src = self.pick(ins)
            if s.name in reused:
                src = self.extra_rng.choice([i for i in ins if i.dtype == s.dtype])
            s.loaded_as_is = src.dtype == s.dtype and s.name not in reused or getattr(s, "loaded_as_is", False)
            h, w = s.shape
            col = self.pick([f"{v} * {w}", f"{v} * 4", f"{self.block_index(1)} * {w}"])
            row = self.pick([f"{self.block_index(0)} * {h}", f"{v}", "0"])
            self.emit(f"copy({src.name}[{row}, {col}], {s.name});")
            self.written(s, stored(src.vc, s.dtype))
        i, j = self.name("i"), self.name("j")
        ops = [(f"{s.name}[{i}, {j}]", s.vc, "shared") for s in loads]
        e, vc = self.expr(ops, 2)
        if self.extra_rng.random() < 0.3:
            # A register of the loop body (declared once with the block's
            # buffers, its initial value stored in every iteration).
            w = self.name("w")
            self.emit(f"var {w}: f32 = cast({v} % 2, f32) * 0.5 + 0.5;")
            e, vc = f"({e}) * {w}", VC(vc.exact, vc.q / 2, vc.m, False)
            self.features.add("var_in_pipeline")
        self.emit(f"for {i}, {j} in parallel({shape[0]}, {shape[1]}) {{")
        self.emit(f"    {acc.name}[{i}, {j}] = {acc.name}[{i}, {j}] + {e};")
        self.emit("}")
        n = 4 if not ms else 6
        acc.vc = VC(acc.vc.exact and vc.exact, min(acc.vc.q, vc.q) if vc.exact else 0, acc.vc.m + n * vc.m)
        self.scope_vars.pop()
        self.pipeline_depth -= 1
        self.depth -= 1
        self.emit("}")
        self.features.add("pipelined")
        return True

    def index_if(self, level):
        conds = [f"bx == {self.rng.randint(0, self.g0 - 1)}", f"bx % 2 == 1", f"bx < {self.rng.randint(1, self.g0)}"]
        if self.g1 > 1:
            conds.append("by == 1")
        for v, lo, hi in self.scope_vars:
            conds.append(f"{v} == {lo}")
            conds.append(f"{v} > {lo}")
        for s, (dt, val) in self.scalars.items():
            if dt == "int32":
                conds.append(f"{s} > 2")
        c = self.pick(conds)
        return self.branch(c, level)

    def data_if(self, level):
        """A branch of the whole block on a value in shared memory or a var."""
        if "block_data_if" in self.without or "data_if" in self.without:
            return False
        cands = [(f"{s.name}[0, 0]", s.vc) for s in self.shared if s.name in self.init and s.vc is not None
                 and s.vc.exact and len(s.shape) == 2 and not s.pipelined]
        cands += [(name, vc) for name, dt, vc in self.vars if vc.exact and name in self.visible]
        if not cands:
            return False
        code, vc = self.pick(cands)
        c = f"{code} > {'0' if vc.integer else '0.25'}"
        self.features.add("block_data_if")
        return self.branch(c, level)

    def branch(self, c, level):
        before = set(self.init)
        self.emit(f"if ({c}) {{")
        self.depth += 1
        self.in_branch += 1
        self.open_scope()
        for _ in range(self.rng.randint(1, 2)):
            self.statement(level + 1)
        self.close_scope()
        then_init = set(self.init)
        self.depth -= 1
        if self.chance(0.6):
            self.init = set(before)
            self.emit("} else {")
            self.depth += 1
            self.open_scope()
            for _ in range(self.rng.randint(1, 2)):
                self.statement(level + 1)
            self.close_scope()
            self.depth -= 1
            self.init = self.init & then_init
        else:
            self.init = before
        self.in_branch -= 1
        self.emit("}")
        return True

    # ---- scalars
    def scalar_var(self, level):
        ins = [t for t in self.tensors if t.role == "in" and len(t.shape) == 2 and not t.dtype.startswith("int")]
        if not ins or self.vars and self.chance(0.5):
            return False
        src = self.pick(ins)
        v = self.name("acc")
        self.emit(f"var {v}: f32 = 0.0;")
        self.define(Tile(v, "var", "f32", []))
        k = self.name("k")
        n = self.rng.randint(1, 4)
        self.emit(f"for {k} in serial({n}) {{")
        self.emit(f"    {v} += {src.name}[{k}, {k} + 1] * 2.0;")
        self.emit("}")
        self.vars.append((v, "f32", VC(True, 0.5, n * 4.0)))
        self.features.add("var")
        return True

    def local_array(self, level):
        n = self.rng.randint(2, 4)
        l = Tile(self.name("L"), "local", "f32", [n])
        self.emit(f"let {l.name} = alloc_local([{n}], f32);")
        self.define(l)
        k = self.name("k")
        self.emit(f"for {k} in serial({n}) {{")
        self.emit(f"    {l.name}[{k}] = cast({k}, f32) * 0.5 - 1.0;")
        self.emit("}")
        l.vc = VC(True, 0.5, n)
        self.locals.append(l)
        self.init.add(l.name)
        self.features.add("local")
        return True


class Program:
    def __init__(self, seed, arch, text, kernel, scalars, dyn, features):
        self.seed, self.arch, self.text, self.kernel = seed, arch, text, kernel
        self.scalars, self.dyn, self.features = scalars, dyn, features


def generate(seed, arch, without=()):
    g = Gen(seed, arch)
    g.without = set(without)
    text = g.program()
    return Program(seed, arch, text, g.kernel, {k: v for k, (_, v) in g.scalars.items()}, dict(g.dyn), sorted(g.features))
