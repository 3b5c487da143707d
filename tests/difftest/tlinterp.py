"""Reference interpreter of the tile language, written from docs/language.md.

It reads the syntax tree that `tilet --emit=ast` prints (sharing only
tilet's parser: no semantic check, IR or lowering of tilet's is used) and the
source file (for the exact text of float literals), translates each kernel
into a Python function that executes the tile program of one block, and runs
the grid on Python lists.

The model is the language's, not the GPU's: a block runs its statements in
order; a parallel loop runs its iterations one after the other (they are
independent by definition, so any order gives the same result); a fragment
is a plain array of the block; `ws(...)` bodies run in program order with the
mbarrier protocol checked to complete in that order; the blocks of a cluster
run as coroutines that meet at `cluster_sync()` and at multicast copies, and
hand over to each other at a barrier_wait another block may complete (the
cluster barriers, pair loads, 2-CTA gemms -- plain and block-scaled -- and
2-CTA tcgen05_cp_warpx4 of a cta_group::2 kernel, whose leader's instructions
read both blocks' tiles and write both blocks' tensor memory).
Anything the language leaves undefined (reading an element never written,
two blocks writing one global element, an index outside on-chip memory) is
reported as InvalidProgram rather than given a value, so a generator bug
cannot hide as a tilet bug.
"""
import ast
import itertools
import math
import os
import re
import tldtypes

from tldtypes import (INT_TYPES, FLOAT_TYPES, NARROW_FLOATS, InvalidProgram, arith_type, convert, f32, is_float,
                      is_int, wrap_int, ROUND, ALL_TYPES, BITS, to_bytes, from_bytes)


class Unsupported(Exception):
    """A construct the interpreter does not model (it never guesses)."""


# ------------------------------------------------------------------ the AST dump

class Node:
    __slots__ = ("kind", "text", "line", "col", "kids")

    def __init__(self, kind, text, line, col):
        self.kind, self.text, self.line, self.col, self.kids = kind, text, line, col, []

    def __repr__(self):
        return f"{self.kind} {self.text} @{self.line}:{self.col}"


def parse_dump(text):
    """`tilet --emit=ast` prints one node a line: two spaces of indent per
    depth, the node kind, its text, then `@line:col`."""
    root, stack = None, []
    for raw in text.splitlines():
        if not raw.strip():
            continue
        depth = (len(raw) - len(raw.lstrip(" "))) // 2
        body = raw.strip()
        loc = ""
        if " @" in body:
            body, loc = body.rsplit(" @", 1)
        kind, _, rest = body.partition(" ")
        line, col = (int(x) for x in loc.split(":")) if loc else (0, 0)
        node = Node(kind, rest, line, col)
        if depth == 0:
            root, stack = node, [node]
            continue
        del stack[depth:]
        stack[-1].kids.append(node)
        stack.append(node)
    return root


def float_literal(source_lines, line, col):
    """The exact spelling of the float literal at line:col (the dump prints
    six significant digits)."""
    text = source_lines[line - 1][col - 1:]
    # A parenthesized literal, `(0.25)`, is placed at its parenthesis.
    text = text.lstrip("( \t")
    n = 0
    while n < len(text) and (text[n].isdigit() or text[n] in "._eE" or (text[n] in "+-" and n and text[n - 1] in "eE")):
        n += 1
    return float(text[:n].replace("_", ""))


# ------------------------------------------------------------------ runtime values

class Reinterpreted:
    """The elements of dtype `dtype` that the bytes of tensor `src` hold, in
    memory order (a Tensor view with another dtype: a bit-cast). Read only;
    an element whose bytes were never all written is None."""

    def __init__(self, src, dtype, n):
        self.src, self.dtype, self.n = src, dtype, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        size, sbits = BITS[self.dtype] // 8, BITS[self.src.dtype]
        lo, hi = i * size * 8 // sbits, -(-(i + 1) * size * 8 // sbits)
        elems = self.src.data[lo:hi]
        if any(e is None for e in elems):
            return None
        at = i * size - lo * sbits // 8
        return from_bytes(to_bytes(elems, self.src.dtype)[at:at + size], self.dtype, 1)[0]

    def __setitem__(self, i, v):
        raise Unsupported("a store through a view that reinterprets bits")


class Buf:
    """A buffer: a tensor in global memory or a shared/fragment/local tile.
    Elements are Python numbers of the dtype (None: never written). `site`:
    the allocation that made an on-chip buffer (the same in every block of a
    cluster, so a block finds its peer's buffer of the same allocation)."""
    __slots__ = ("name", "dtype", "shape", "scope", "data", "owner", "rt", "site")

    def __init__(self, name, dtype, shape, scope, data=None, rt=None):
        self.name, self.dtype, self.shape, self.scope, self.rt = name, dtype, list(shape), scope, rt
        self.site = None
        n = 1
        for d in shape:
            n *= d
        self.data = data if data is not None else [None] * n
        self.owner = None

    def flat(self, idx):
        f = 0
        for i, n in zip(idx, self.shape):
            if not 0 <= i < n:
                return None
            f = f * n + i
        return f

    # On-chip memory: an index outside the buffer is undefined.
    def ld(self, *idx):
        f = self.flat(idx)
        if f is None or len(idx) != len(self.shape):
            raise InvalidProgram(f"'{self.name}'{list(idx)} is outside {self.shape}")
        v = self.data[f]
        if v is None:
            raise InvalidProgram(f"'{self.name}'{list(idx)} is read before it is written")
        return v

    def st(self, v, *idx):
        f = self.flat(idx)
        if f is None or len(idx) != len(self.shape):
            raise InvalidProgram(f"'{self.name}'{list(idx)} is outside {self.shape}")
        self.data[f] = v

    # Global memory: reads outside give 0 and writes outside do nothing
    # (docs/language.md section 8); an element written by one block and
    # touched by another is a race between blocks.
    def gld(self, *idx):
        f = self.flat(idx)
        if f is None:
            return False if self.dtype == "bool" else (0.0 if is_float(self.dtype) else 0)
        if self.owner is not None and self.owner[f] is not None and self.owner[f] != self.rt.block_id:
            raise InvalidProgram(f"'{self.name}'{list(idx)} is read by one block and written by another")
        return self.data[f]

    def gst(self, v, *idx):
        f = self.flat(idx)
        if f is None:
            return
        self._own(f, idx)
        self.data[f] = v

    def _own(self, f, idx):
        if self.owner is None:
            self.owner = [None] * len(self.data)
        o = self.owner[f]
        if o is not None and o != self.rt.block_id:
            raise InvalidProgram(f"'{self.name}'{list(idx)} is written by two blocks")
        self.owner[f] = self.rt.block_id


class Region:
    __slots__ = ("buf", "mins", "extents")

    def __init__(self, buf, mins, extents):
        self.buf, self.mins, self.extents = buf, mins, extents

    def tile_shape(self):
        return [e for e in self.extents if e != 1]

    def elements(self):
        """Multi-indices in row-major order."""
        return itertools.product(*[range(m, m + e) for m, e in zip(self.mins, self.extents)])


class MBarrier:
    """An mbarrier: its arrive count, the arrivals its current phase still
    waits for, the phases completed so far, and the transaction bytes the
    phase still waits for (`tx`, only counted for the pair loads of a 2-CTA
    kernel, whose bytes land on the leader's barrier; a plain tma_copy's
    expect and complete cancel out in program order). `site` and `index`
    name the same barrier in the other blocks of the cluster; `cluster`: an
    alloc_cluster_barrier one, which other blocks may arrive on."""
    __slots__ = ("count", "pending", "completed", "tx", "site", "index", "cluster")

    def __init__(self, count, site=None, index=0, cluster=False):
        self.count, self.pending, self.completed = count, count, 0
        self.tx, self.site, self.index, self.cluster = 0, site, index, cluster


def _zero(t):
    return False if t == "bool" else (0.0 if is_float(t) else 0)


# Math builtins with IEEE results where Python raises.
def _exp(x):
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def _log(x):
    if x > 0:
        return math.log(x)
    return -math.inf if x == 0 else math.nan


def _log2(x):
    if x > 0:
        return math.log2(x)
    return -math.inf if x == 0 else math.nan


def _sqrt(x):
    return math.sqrt(x) if x >= 0 else math.nan


def _rsqrt(x):
    if x > 0:
        return 1.0 / math.sqrt(x)
    return math.inf if x == 0 else math.nan


def _exp2(x):
    try:
        return 2.0 ** x
    except OverflowError:
        return math.inf


def _pow(x, y):
    try:
        return math.pow(x, y)
    except (OverflowError, ValueError):
        return math.nan if x < 0 else math.inf


def _sigmoid(x):
    return 1.0 / (1.0 + _exp(-x))


def _fdiv(a, b):
    if b == 0:
        if a == 0 or a != a:
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _idiv(a, b):
    if b == 0:
        raise InvalidProgram("integer division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _imod(a, b):
    if b == 0:
        raise InvalidProgram("integer remainder by zero")
    return a - _idiv(a, b) * b


def _pyfloor(a, b, op):
    if b == 0:
        raise InvalidProgram("division by zero")
    return a // b if op == "//" else a % b


def _fmin(a, b):
    return b if b < a else a


def _fmax(a, b):
    return b if b > a else a


MATH1 = {"exp": "_exp", "exp2": "_exp2", "log": "_log", "log2": "_log2", "sqrt": "_sqrt", "rsqrt": "_rsqrt",
         "tanh": "math.tanh", "erf": "math.erf", "sin": "math.sin", "cos": "math.cos", "floor": "math.floor", "ceil": "math.ceil",
         "sigmoid": "_sigmoid", "__exp": "_exp", "__exp2": "_exp2"}
# The f32 approximations (__exp, __exp2) are computed exactly: the comparison's
# tolerance covers their few ulps of error.
F32_ONLY = ("__exp", "__exp2")


# ------------------------------------------------------------------ values while translating

UINT, UFLOAT = "untyped int", "untyped float"
# num_sms(): the SMs of the device, as the emulator's (templates/emu/emu.h,
# emu::smCount) has them: 3 unless TILET_EMU_SMS says otherwise.
def _emulated_sm_count():
    try:
        n = int(os.environ.get("TILET_EMU_SMS", ""))
    except ValueError:
        n = 0
    return n if n > 0 else 3   # as emu::smCount: a missing, bad or non-positive value means 3


EMULATED_SM_COUNT = _emulated_sm_count()
EXPR_BUILTINS = {"cast", "reinterpret", "ceildiv", "floordiv", "floormod", "min", "max", "clamp", "abs", "pow", "**", "block_rank_in_cluster", "num_sms",
                 "clc_is_canceled", "clc_get_first_ctaid_x", "clc_get_first_ctaid_y", "clc_get_first_ctaid_z", "rng_rand", "rng_rand_float",
                 "shfl_sync", "shfl_xor", "shfl_down", "shfl_up", *MATH1}


_MASK32 = 0xFFFFFFFF


def philox4x32_10(counter, key):
    """Philox4x32-10 (Salmon et al., SC 2011): four 32-bit words of counter
    and two of key to four random words (Random123's reference algorithm)."""
    c0, c1, c2, c3 = counter
    k0, k1 = key
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c0, 0xCD9E8D57 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0) & _MASK32, p1 & _MASK32, ((p0 >> 32) ^ c3 ^ k1) & _MASK32, p0 & _MASK32
        k0, k1 = (k0 + 0x9E3779B9) & _MASK32, (k1 + 0xBB67AE85) & _MASK32
    return [c0, c1, c2, c3]


class Philox:
    """A thread's generator as cuRAND's curandStatePhilox4_32_10_t steps it
    (rng_init is curand_init, rng_rand curand, rng_rand_float
    curand_uniform): the 128-bit counter starts at subsequence << 64 plus
    offset / 4, and each counter gives four numbers in turn."""

    def __init__(self):
        self.numbers = None

    def init(self, seed, sequence, offset):
        seed, sequence, offset = seed & (2**64 - 1), sequence & (2**64 - 1), offset & (2**64 - 1)
        self.counter = (sequence << 64) + (offset >> 2)
        self.key = [seed & _MASK32, seed >> 32]
        self.position = offset & 3
        self._refill()

    def _refill(self):
        c = self.counter
        self.numbers = philox4x32_10([(c >> (32 * i)) & _MASK32 for i in range(4)], self.key)

    def next(self):
        if self.numbers is None:
            raise InvalidProgram("a random number drawn before the thread's rng_init")
        x = self.numbers[self.position]
        self.position += 1
        if self.position == 4:
            self.counter = (self.counter + 1) & (2**128 - 1)
            self.position = 0
            self._refill()
        return x

    def uniform(self):
        # x * 2^-32 is exact in f32 once x is rounded to f32, so one rounding remains.
        return f32(f32(float(self.next())) * 2.0**-32 + 2.0**-33)


class V:
    """A translated expression: Python code, its dtype (or UINT/UFLOAT for an
    untyped constant), and its value when it is a compile-time constant."""
    __slots__ = ("code", "ty", "const")

    def __init__(self, code, ty, const=None):
        self.code, self.ty, self.const = code, ty, const

    @property
    def untyped(self):
        return self.ty in (UINT, UFLOAT)


def _lit(x):
    if isinstance(x, float):
        if x != x:
            return "math.nan"
        if x in (math.inf, -math.inf):
            return "math.inf" if x > 0 else "(-math.inf)"
    return repr(x)


class Sym:
    __slots__ = ("kind", "py", "ty", "const", "buf")

    def __init__(self, kind, py=None, ty=None, const=None, buf=None):
        self.kind, self.py, self.ty, self.const, self.buf = kind, py, ty, const, buf


class BufInfo:
    """What translation knows about a buffer: scope, dtype, shape; whether it
    is a reducer (alloc_reducer); of barriers, whether they are cluster
    barriers (alloc_cluster_barrier)."""
    __slots__ = ("name", "scope", "dtype", "shape", "counts", "reducer", "cluster")

    def __init__(self, name, scope, dtype, shape, counts=None, reducer=False, cluster=False):
        self.name, self.scope, self.dtype, self.shape, self.counts = name, scope, dtype, shape, counts
        self.reducer, self.cluster = reducer, cluster


def adopt(c, other):
    """The dtype an untyped constant takes next to a value of dtype `other`
    (docs/language.md section 3)."""
    if isinstance(c, bool):
        return "bool"
    if isinstance(c, float):
        return other if is_float(other) else "f32"
    if is_float(other):
        return other
    if other == "bool":
        return default_type(c)
    bits, signed = INT_TYPES[other]
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    return other if lo <= c <= hi else "int64"


def default_type(c):
    if isinstance(c, bool):
        return "bool"
    if isinstance(c, float):
        return "f32"
    return "int32" if -(1 << 31) <= c < (1 << 31) else "int64"


class KernelTranslator:
    """Translates one kernel's AST into the Python source of a generator
    function `block(rt, bx, by, bz, params...)`."""

    def __init__(self, interp, node):
        self.interp = interp
        self.node = node
        self.lines = []
        self.scopes = [dict(interp.consts)]
        self.py_prefix = "n_"
        self.params = []          # (name, kind, dtype, dims) kind: tensor/scalar
        self.dyn = []             # dynamic dimension names, in order of appearance
        self.grid, self.threads, self.cluster = [], None, []
        self.block_names = []
        self.uid = 0
        self.parallel_depth = 0
        self.role_threads = None  # threads of the enclosing ws(...), else the block's
        # Thread mode (a kernel that names its thread indices): the body is a
        # generator per thread, run in lockstep (Runtime.lockstep).
        self.thread_names = []
        self.thread_digits = {}     # thread index name: (stride, extent) of its digit of the thread number
        self.thread_mode = False
        self.per_thread = set()   # Python names whose value may differ between threads
        self.divergent = 0        # inside a branch or loop threads may take differently
        self.in_ws = 0            # inside ws(...) bodies (run in program order)
        self.in_role_gen = False  # inside a role made from a branch on the thread index
        # Vars: their Python names, and how many loops were around each declaration.
        self.var_loops = {}
        self.local_arrays = set()   # the Python names of alloc_local buffers
        # Vars that roles set: each thread has its own register, so after
        # the roles the threads of different roles hold different values,
        # which the block's code cannot read here (Python name: the roles
        # that set it, as (first thread, threads)).
        self.diverged = {}
        self.lockstep_guard = None  # inside a role of thread-level code: the name of whether this thread is in it
        self.tx_derived = set()   # names of the thread index and of lets computed from it
        self.thread_branch = 0    # inside a branch of a role that some of its threads take (role_thread_branch)
        self.loop_bodies = []     # the statements of the loops being translated, innermost last
        self.loop_entries = []    # for each: [divergence at its entry, whether a jump of it was met deeper]

    # -------------------------------------------------------------- scopes
    def lookup(self, name):
        for s in reversed(self.scopes):
            if name in s:
                return s[name]
        raise Unsupported(f"unknown name '{name}'")

    def define(self, name, sym):
        self.scopes[-1][name] = sym

    def py_name(self, name):
        """The Python name of a source name defined here: inside an inlined
        fn, one of its own, so the body cannot clobber the caller's."""
        return self.py_prefix + name

    def fresh(self, base):
        self.uid += 1
        return f"_{base}{self.uid}"

    def emit(self, depth, text):
        if self.diverged and not self.in_ws and not self.in_role_gen:
            self.check_diverged(text)
        self.lines.append("    " * depth + text)

    def check_diverged(self, text):
        """Block-level code may assign a var that roles set (every thread
        again holds one value), not read it."""
        for py in list(self.diverged):
            assigned = re.match(rf"{re.escape(py)} = (.*)$", text)
            if assigned and not re.search(rf"\b{re.escape(py)}\b", assigned.group(1)):
                del self.diverged[py]
            elif re.search(rf"\b{re.escape(py)}\b", text):
                raise Unsupported("the block reads a var that its roles set, each role's threads to their own value")

    def role_vars(self, code, key, outer):
        """The vars declared outside a role that its code (`code`, Python)
        reads and sets, for the role of threads `key` (first, count): each
        role runs with its threads' own copy of them (registers are per
        thread), starting from the block's values or, where this role set
        them before, from its own. `outer`: the vars declared before the role."""
        for py in self.local_arrays:
            if re.search(rf"\b{re.escape(py)}\.st\(", code) and not re.search(rf"^\s*{re.escape(py)} = ", code, re.M):
                raise Unsupported("a role writes an alloc_local array of the block (each role's threads would need their own copy)")
        used = [py for py in self.var_loops if py in outer and re.search(rf"\b{re.escape(py)}\b", code)]
        assigned = [py for py in used if re.search(rf"^\s*{re.escape(py)} = ", code, re.M)]
        for py in used:
            for other in self.diverged.get(py, ()):
                apart = other[0] + other[1] <= key[0] or key[0] + key[1] <= other[0]
                if other != key and not apart:
                    raise Unsupported("a var that roles of overlapping threads set")
        for py in assigned:
            if len(self.loop_bodies) > self.var_loops[py]:
                raise Unsupported("a var declared outside a loop, set by a role inside it")
        return used, assigned

    # -------------------------------------------------------------- kernel
    def translate(self):
        k = self.node
        self.name = k.text
        body = []
        # A dimension may use a `dyn` size a later parameter declares
        # (IndexQ: f8e4m3[seq_len * heads, D], ..., Weights: f32[dyn seq_len, H]).
        for c in k.kids:
            if c.kind == "Param":
                for d in c.kids:
                    if d.kind == "DynDim":
                        self.define(d.text.split()[0], Sym("value", "n_" + d.text.split()[0], "int32"))
        for c in k.kids:
            if c.kind == "Param":
                self.param(c)
            elif c.kind == "Grid":
                for g in c.kids:
                    if g.kind == "BlockIndex":
                        self.block_names.append(g.text)
                    else:
                        self.grid.append(g)
            elif c.kind == "Threads":
                self.threads = [t for t in c.kids if t.kind != "ThreadIndex"]
                self.thread_names = [t.text for t in c.kids if t.kind == "ThreadIndex"]
            elif c.kind == "Cluster":
                self.cluster = list(c.kids)
            elif c.kind == "MinBlocksPerSm":
                pass
            else:
                body.append(c)
        names = ["n_" + p[0] for p in self.params] + ["n_" + d for d in self.dyn]
        for i, b in enumerate(self.block_names):
            self.define(b, Sym("value", f"_b{i}", "int32"))
        extents = [self.static_int(t) for t in self.threads] if self.threads else [128]
        self.block_threads = math.prod(extents)
        self.role_threads = self.block_threads
        self.thread_mode = bool(self.thread_names)
        # In a cluster of several blocks the blocks run as coroutines
        # (Interpreter._run_cluster): a wait that another block may satisfy
        # hands over to the other blocks instead of failing.
        self.cluster_size = math.prod(self.static_int(c) for c in self.cluster) if self.cluster else 1
        self.cooperative = self.cluster_size > 1
        if not self.thread_mode:
            self.emit(0, f"def block(rt, _b0, _b1, _b2, {', '.join(names)}):")
            self.emit(1, "if False:")
            self.emit(2, "yield None")
            self.emit(1, "_rng = Philox()")
            self.emit(1, "_rv = {}   # the vars of each role's threads (KernelTranslator.role_vars)")
            self.stmts(body, 1)
            return "\n".join(self.lines) + "\n"
        # Every thread runs the body; statements outside branches and loops
        # that threads take differently are steps all threads take together
        # (docs/language.md section 8), so shared memory written in one step
        # is seen by every thread in the next.
        self.emit(0, f"def thread(rt, _t, _b0, _b1, _b2, {', '.join(names)}):")
        self.emit(1, "if False:")
        self.emit(2, "yield None")
        self.emit(1, "_rng = Philox()")
        self.emit(1, "_rv = {}   # the vars of each role's threads (KernelTranslator.role_vars)")
        self.per_thread.add("_rng")   # each thread's own generator
        below = 1
        for i, (n, e) in enumerate(zip(self.thread_names, extents)):
            py = f"_tx{i}"
            self.emit(1, f"{py} = (_t // {below}) % {e}")
            below *= e
            self.define(n, Sym("value", py, "int32"))
            self.per_thread.add(py)
            self.tx_derived.add(py)
            self.thread_digits[n] = (below // e, e)
        self.stmts(body, 1)
        self.emit(0, f"def block(rt, _b0, _b1, _b2, {', '.join(names)}):")
        self.emit(1, "if False:")
        self.emit(2, "yield None")
        threads = f"[thread(rt, _t, _b0, _b1, _b2, {', '.join(names)}) for _t in range({self.block_threads})]"
        if self.cooperative:
            # A thread blocked on a barrier, or at a cluster-wide meeting,
            # hands over to the other blocks of the cluster.
            self.emit(1, f"yield from rt.lockstep_co({threads})")
        else:
            self.emit(1, f"rt.lockstep({threads})")
        return "\n".join(self.lines) + "\n"

    def lockstep_stmt(self, s, d):
        """A statement of a role of thread-level code (a branch on the thread
        index whose threads meet at their own named barrier): every thread
        of the block steps through its loops, its branches on values alike
        in every thread and its lets of such values, so that the role's
        threads stay in step; everything else is done by the role's threads
        only (the guard), without steps inside. False: translate `s` as
        usual (stepped)."""
        k = s.kind
        if k in ("Break", "Continue"):
            raise Unsupported("a break or continue inside a role of thread-level code")
        if k in ("For", "While") or (k == "Call" and s.text == "sync_threads"):
            return False   # loop() and the While branch require bounds alike in every thread; a barrier is a step
        if k == "If" and not self.thread_dependent(self.cond(s.kids[0]).code):
            return False
        start = len(self.lines)
        guard, self.lockstep_guard = self.lockstep_guard, None
        self.divergent += 1
        self.stmt(s, d + 1)
        self.divergent -= 1
        self.lockstep_guard = guard
        if k == "Let" and not any(l.strip().startswith("yield") for l in self.lines[start:]):
            name = s.text.partition(": ")[0]
            sym = self.lookup(name)
            if sym.kind == "const" or sym.py not in self.per_thread:
                # A value alike in every thread: every thread has it (a later loop bound may read it).
                self.lines[start:] = [l[4:] for l in self.lines[start:]]
                return True
        if any(c.kind == "Call" and c.text == "sync_threads" for c in _walk([s])):
            raise Unsupported("a named barrier under a branch the threads of its role take differently")
        self.lines.insert(start, "    " * d + f"if {guard}:")
        if len(self.lines) == start + 1:
            self.emit(d + 1, "pass")
        return True

    def taken_alike(self, s, cond):
        """Whether the branch `s`, on a value each thread computes for itself
        (a var, not the thread index), must be taken alike by every thread:
        it holds block-level work, or leaves a loop that does. The values
        are compared when it runs (Runtime.alike); threads that differ make
        the program invalid."""
        if not self.thread_mode or self.divergent or self.parallel_depth or self.lockstep_guard:
            return False
        if any(re.search(rf"\b{re.escape(p)}\b", cond.code) for p in self.tx_derived):
            return False
        def block_level(nodes):
            return any(self.spreads_work(c) for c in _walk(nodes))
        nodes = [c for arm in s.kids[1:] for c in arm.kids]
        if block_level(nodes):
            return True
        jumps = any(c.kind in ("Break", "Continue") for c in _walk(nodes))
        return jumps and bool(self.loop_bodies) and block_level(self.loop_bodies[-1])

    def thread_dependent(self, code):
        """Whether generated code reads a value that may differ between threads."""
        if self.block_threads == 1:
            return False   # nothing differs in a block of one thread
        return any(re.search(rf"\b{re.escape(p)}\b", code) for p in self.per_thread)

    def block_level(self, d, code_or_none=None):
        """Depth at which a block-level operation (a tile operation, a
        parallel loop) is emitted: in thread mode, thread 0 performs it for
        the block, at the step where every thread meets it."""
        if not self.thread_mode:
            return d
        if self.divergent:
            raise Unsupported("a tile operation or parallel loop inside a branch threads take differently")
        if code_or_none is not None and self.thread_dependent(code_or_none):
            raise Unsupported("a tile operation or parallel loop that uses per-thread values")
        self.emit(d, "if _t == 0:")
        return d + 1

    def param(self, c):
        name, _, rest = c.text.partition(": ")
        parts = rest.split()
        dtype, is_tensor = parts[0], "tensor" in parts[1:]
        if not is_tensor:
            self.params.append((name, "scalar", dtype, None))
            self.define(name, Sym("value", "n_" + name, dtype))
            return
        dims = []
        for d in c.kids:
            if d.kind == "DynDim":
                dyn = d.text.split()[0]   # "K" or "K %" with the promised divisor as its child
                self.dyn.append(dyn)
                self.define(dyn, Sym("value", "n_" + dyn, "int32"))
                dims.append(("dyn", dyn))
            else:
                v = self.expr(d)
                if v.const is None:
                    dims.append(("expr", v.code))
                else:
                    dims.append(("const", int(v.const)))
        self.params.append((name, "tensor", dtype, dims))
        info = BufInfo(name, "global", dtype, dims)
        self.define(name, Sym("buffer", "n_" + name, dtype, buf=info))

    def static_int(self, node):
        v = self.expr(node)
        if v.const is None:
            raise Unsupported("expected a constant")
        return int(v.const)

    # -------------------------------------------------------------- statements
    def stmts(self, nodes, depth):
        self.scopes.append({})
        start = len(self.lines)
        for s in nodes:
            self.stmt(s, depth)
            if self.thread_mode and not self.divergent and not self.parallel_depth:
                self.emit(depth, "yield 0")
        if len(self.lines) == start:
            self.emit(depth, "pass")
        self.scopes.pop()

    def stmt(self, s, d):
        k = s.kind
        if self.lockstep_guard and self.lockstep_stmt(s, d):
            return
        # A warp shuffle in a let, var or assignment is exchanged before the
        # statement, at its depth (call_expr); elsewhere it is not supported.
        self.shuffle_depth = d if k in ("Let", "Var", "Assign") else None
        if k == "Let":
            self.let(s, d)
        elif k == "Var":
            name, _, ty = s.text.partition(": ")
            py = self.py_name(name)
            # A var without an initializer starts at 0 (false for a bool; docs/language.md).
            zero = V("False", "bool", False) if ty == "bool" else V("0", UINT, 0)
            if s.kids and s.kids[0].kind == "Call" and s.kids[0].text == "atomic_load":
                init = self.convert(self.atomic_load(s.kids[0], ty), ty)
            else:
                init = self.convert(self.expr(s.kids[0]), ty) if s.kids else self.convert(zero, ty)
            self.emit(d, f"{py} = {init}")
            self.define(name, Sym("var", py, ty))
            self.per_thread.add(py)   # each thread's own
            self.var_loops[py] = len(self.loop_bodies)
            if self.parallel_depth:
                self.parallel_locals.add(py)   # declared in a parallel loop: each iteration's own
        elif k == "Assign":
            self.assign(s, d)
        elif k == "For":
            self.loop(s, d)
        elif k == "If" and self.role_chain(s) is not None:
            self.roles(self.role_chain(s), d)
        elif k == "If" and self.in_role_gen and self.role_thread_branch(s, d):
            pass
        elif k == "If":
            cond = self.cond(s.kids[0])
            diverges = self.thread_mode and self.thread_dependent(cond.code)
            if diverges and self.taken_alike(s, cond):
                # Every thread must take it alike: checked when it runs.
                site = self.fresh("_alike")
                self.emit(d, f"rt.posted.setdefault({site!r}, {{}})[_t] = {cond.code}")
                self.emit(d, "yield 0")
                cond = V(f"rt.alike(rt.posted[{site!r}], 'the branch at line {s.line}')", "bool")
                diverges = False
            self.divergent += diverges
            self.emit(d, f"if {cond.code}:")
            rest = s.kids[1:]
            self.stmts(rest[0].kids, d + 1)
            if len(rest) > 1:
                self.emit(d, "else:")
                self.stmts(rest[1].kids, d + 1)
            self.divergent -= diverges
        elif k == "While":
            # The condition is evaluated before every iteration (docs/language.md section 5).
            cond = self.cond(s.kids[0])
            diverges = self.thread_mode and self.thread_dependent(cond.code)
            if diverges and self.lockstep_guard:
                raise Unsupported("a while loop whose condition differs between threads inside a role of thread-level code")
            self.divergent += diverges
            self.emit(d, f"while {cond.code}:")
            self.loop_body(s.kids[1].kids, d + 1)
            self.divergent -= diverges
        elif k in ("Break", "Continue"):
            # Python's break and continue: loops become Python loops.
            if self.thread_mode and self.loop_entries and self.divergent > self.loop_entries[-1][0]:
                self.loop_entries[-1][1] = True   # some threads take it, others not
            self.emit(d, k.lower())
        elif k == "Ws":
            roles = []
            body = []
            for c in s.kids:
                if c.kind in ("Int", "Name", "Binary") and not body:
                    roles.append(self.static_int(c))
                else:
                    body.append(c)
            outer = self.role_threads
            self.role_threads = 128 * len(roles)
            self.emit(d, f"# ws{tuple(roles)}")
            outer_vars = set(self.var_loops)
            start = len(self.lines)
            self.emit(d, "if True:")
            self.in_ws += 1
            self.stmts(body, d + 1)
            self.in_ws -= 1
            self.role_threads = outer
            if not self.in_ws:
                # The roles run in program order here: each with its
                # threads' own copy of the block's vars (role_vars), the
                # block's values put back after it.
                key = (128 * min(roles), 128 * (max(roles) - min(roles) + 1))
                used, assigned = self.role_vars("\n".join(self.lines[start:]), key, outer_vars)
                own = [py for py in used if key in self.diverged.get(py, ())]
                kept = sorted(set(assigned) | set(own))
                if kept:
                    saved = self.fresh("_block_vars")
                    self.lines[start:start] = ["    " * d + f"{saved} = ({', '.join(kept)},)"] + ["    " * d + f"{py} = _rv[({key!r}, {py!r})]" for py in own]
                    self.lines += ["    " * d + f"_rv[({key!r}, {py!r})] = {py}" for py in assigned]
                    self.lines.append("    " * d + f"{', '.join(kept)}, = {saved}")
                    for py in assigned:
                        self.diverged.setdefault(py, set()).add(key)
        elif k == "Call":
            self.call_stmt(s, d)
        else:
            raise Unsupported(f"statement {k}")

    # Tile work spread over the threads that run it.
    SPREAD_WORK = {"copy", "tma_copy", "async_copy", "copy_cluster", "im2col", "gemm", "gemm_blockscaled", "clear", "fill", "cumsum", "atomic_add",
                   "reduce_sum", "reduce_max", "reduce_min", "reduce_abssum", "reduce_absmax",
                   "tcgen05_sf_warp_transpose", "tcgen05_cp_warpx4"}

    def spreads_work(self, c):
        """Whether node `c` is work spread over the threads that run it: a
        tile operation (atomic_add in its tile form only: an element update,
        or a fetch-add, is each thread's own) or a parallel loop."""
        if c.kind == "For":
            return c.text.endswith(" in parallel")
        if c.kind != "Call" or c.text not in self.SPREAD_WORK:
            return False
        if c.text != "atomic_add":
            return True
        dst = next(k for k in c.kids if k.kind != "Keyword")
        return dst.kind == "Name" or any(k.kind == "Slice" for k in dst.kids[1:])

    def role_chain(self, s):
        """A chain `if c1 {A} else if c2 {B} ... else {Z}` whose conditions
        depend on the thread index, in thread-level code every thread runs,
        with tile work in a branch: each branch is a role of the threads that
        take it (docs/language.md, "Roles from branches on the thread
        index"). ("static", [(first thread, thread count, block node)]) when
        the conditions read thread indices alone: the threads that take each
        branch are found by evaluating the conditions for every thread
        number. ("dynamic", [(condition code or None, block node)]) when
        they also read values every thread of the block has alike (the
        block's rank in its cluster: `cta_id == 0 && tx < 64` of a 2-CTA
        kernel): which threads take each branch is then worked out when the
        block runs (Runtime.role_partition). None: not a role chain."""
        if not self.thread_mode or self.divergent or self.parallel_depth:
            return None
        tx_names = {f"_tx{i}" for i in range(len(self.thread_names))}
        uniform = {sym.py for scope in self.scopes for sym in scope.values()
                   if sym.kind == "value" and sym.py and sym.py not in self.per_thread}

        def thread_test(node):
            """The condition of `node` compiled, and its code, when it reads
            thread indices and block-uniform values only; a chain's first
            condition that reads block-uniform values reads a thread index
            too (otherwise it is a branch the whole block takes alike)."""
            try:
                code = self.cond(node.kids[0]).code
                test = compile(code, "<cond>", "eval")
                tree = ast.parse(code, mode="eval")
            except (Unsupported, InvalidProgram, SyntaxError):
                return None
            names = set()
            for n in ast.walk(tree):
                if isinstance(n, ast.Attribute):
                    # rt.rank (block_rank_in_cluster()) is the only attribute a block-uniform condition reads
                    if not (isinstance(n.value, ast.Name) and n.value.id == "rt" and n.attr == "rank"):
                        return None
                elif isinstance(n, ast.Name):
                    names.add(n.id)
            other = names - tx_names - set(RUNTIME_GLOBALS)
            if not other <= uniform | {"rt"}:
                return None
            return (test, code, bool(other), bool(names & tx_names))

        branches, node = [], s
        test = thread_test(s)
        if test is None or test[2] and not test[3]:
            return None
        while node is not None:
            rest = node.kids[1:]
            branches.append((test, rest[0]))
            node = None
            if len(rest) > 1:
                # An `else if` on the thread index continues the chain; any
                # other else (one on something else included) is its last branch.
                inner = rest[1].kids
                if len(inner) == 1 and inner[0].kind == "If" and thread_test(inner[0]) is not None:
                    node, test = inner[0], thread_test(inner[0])
                else:
                    branches.append((None, rest[1]))
        # A named barrier of the branch's threads (`sync_threads(3, RADIX)`
        # under `tx < RADIX`, TileLang's top-k selector) makes a role too.
        def named_barrier(c):
            return c.kind == "Call" and c.text == "sync_threads" and len(c.kids) == 2
        if not any(self.spreads_work(c) for _, block in branches for c in _walk(block.kids)):
            if not any(named_barrier(c) for _, block in branches for c in _walk(block.kids)):
                return None
            # Thread-level code whose threads meet at their own barrier:
            # they run it in lockstep, as the block runs its own code.
            if len(branches) != 1 or branches[0][0][2]:
                raise Unsupported("a chain of branches, or a branch on block values, around a named barrier without tile work")
            return ("lockstep", [(branches[0][0][1], branches[0][1])])
        if any(test is not None and test[2] for test, _ in branches):
            return ("dynamic", [(None if test is None else test[1], block) for test, block in branches])
        taken = [[] for _ in branches]
        extents = [self.static_int(t) for t in self.threads]
        for t in range(self.block_threads):
            env, below = dict(RUNTIME_GLOBALS), 1
            for i, e in enumerate(extents):
                env[f"_tx{i}"] = (t // below) % e
                below *= e
            for b, (test, _) in enumerate(branches):
                if test is None or eval(test[0], env):
                    taken[b].append(t)
                    break
        chain = []
        for ts, (_, block) in zip(taken, branches):
            if not ts or not block.kids:
                continue
            first, count = ts[0], len(ts)
            if ts != list(range(first, first + count)) or first % 32 or count % 32:
                raise InvalidProgram(f"a branch on the thread index with tile work runs on threads {ts[0]}..{ts[-1]}, not whole consecutive warps")
            chain.append((first, count, block))
        return ("static", chain)

    def loop_body(self, body, d):
        """A loop's body. In thread-level code, a break or continue that
        some threads take and others not leaves the threads at different
        steps of the loop: the body is translated again as code the threads
        run apart (no lockstep inside it)."""
        start = len(self.lines)
        self.loop_bodies.append(body)
        self.loop_entries.append([self.divergent, False])
        self.stmts(body, d)
        apart = self.loop_entries.pop()[1]
        if apart:
            del self.lines[start:]
            self.divergent += 1
            self.loop_entries.append([self.divergent, False])
            self.stmts(body, d)
            self.loop_entries.pop()
            self.divergent -= 1
        self.loop_bodies.pop()

    def role_thread_branch(self, s, d):
        """A branch on the thread index inside a role (`if (tx == 64)`, `if
        (tx % 32 == 0)`): its body runs once for the role's threads that take
        it, counting their number wherever each thread counts (an arrival,
        a cluster-launch-control request), and the else for the others.
        False when the condition reads no thread index. A break or continue
        in it is modelled only when the branch is all its loop's body does
        (the threads that do not take it then only idle in the loop)."""
        cond = self.cond(s.kids[0])
        if not re.search(r"\b_tx\d+\b", cond.code):
            return False
        tx_names = {f"_tx{i}" for i in range(len(self.thread_names))}
        names = set(re.findall(r"\b[A-Za-z_]\w*\b", cond.code))
        if names & (self.per_thread - tx_names):
            raise Unsupported("a branch inside a role on a value that differs between the role's threads, other than a thread index")
        rest = s.kids[1:]
        arms = [rest[0].kids] + ([rest[1].kids] if len(rest) > 1 else [])

        def jumps(nodes):
            for n in nodes:
                if n.kind in ("Break", "Continue"):
                    return True
                if n.kind not in ("For", "While") and jumps(n.kids):
                    return True
            return False
        if any(jumps(arm) for arm in arms):
            body = self.loop_bodies[-1] if self.loop_bodies else []
            if [c for c in body if c.kind != "Let"] != [s]:
                raise Unsupported("a break or continue that some threads of a role take and others not, beside other statements of the loop")
        code = re.sub(r"\b_tx(\d+)\b", r"_sx\1", cond.code)
        params = ", ".join(f"_sx{i}" for i in range(len(self.thread_names)))
        extents = [self.static_int(t) for t in self.threads]
        sel = self.fresh("_sel")
        outer = self.role_threads
        self.emit(d, f"{sel} = rt.threads_where(lambda {params}: ({code}), _rf, {outer}, {extents!r})")
        for arm, count in zip(arms, [sel, f"({outer} - {sel})"]):
            self.emit(d, f"if {count}:")
            self.role_threads = count
            self.thread_branch += 1
            self.stmts(arm, d + 1)
            self.thread_branch -= 1
        self.role_threads = outer
        return True

    def roles(self, chain, d):
        """Each role in program order, run by thread 0 on behalf of its
        threads (as ws(...) is outside thread mode): a barrier_arrive counts
        all of them, a tile operation is done once. In a chain whose
        conditions read block-uniform values, the role's thread count is the
        role generator's argument `_rn`, known when the block runs."""
        kind, items = chain
        if kind == "lockstep":
            (code, block), = items
            guard = self.fresh("_in")
            self.emit(d, f"{guard} = {code}")
            self.per_thread.add(guard)
            self.lockstep_guard = guard
            self.stmts(block.kids, d)
            self.lockstep_guard = None
            return
        entry = len(self.lines)
        self.emit(d, "if _t == 0:")
        outer = self.role_threads
        saved = self.thread_mode
        gens = []
        gen_args = []
        entering = set()   # the block's vars the roles start from
        outer_vars = set(self.var_loops)
        # Values that differ between threads outside the roles: none may be
        # used inside (thread 0 runs a role for all its threads). A var
        # declared inside a role is the role's, alike in its threads.
        outside = set(self.per_thread)
        if kind == "static":
            bodies = [(f"threads {first}..{first + count - 1}", count, block) for first, count, block in items]
            first_of = [first for first, _, _ in items]
        else:
            bodies = [(f"branch {b + 1}", "_rn", block) for b, (_, block) in enumerate(items)]
        gen_index = 0
        for what, count, block in bodies:
            start = len(self.lines)
            self.role_threads = count
            self.thread_mode = False
            self.in_role_gen = True
            gen = self.fresh("_role")
            gens.append(gen)
            self.emit(d + 1, f"def {gen}({'_rn, _rf' if kind == 'dynamic' else ''}):   # role: {what}")
            self.emit(d + 2, "if False:")
            self.emit(d + 3, "yield None")
            if kind == "static":
                self.emit(d + 2, f"_rf = {first_of[gen_index]}   # the role's first thread")
            gen_index += 1
            self.stmts(block.kids, d + 2)
            self.in_role_gen = False
            self.thread_mode = saved
            code = "\n".join(self.lines[start:])
            used, assigned = [], []
            if kind == "static":
                # The block's vars: each role starts from its threads' own copy (role_vars).
                key = (first_of[gen_index - 1], count)
                used, assigned = self.role_vars(code, key, outer_vars)
                self.lines[start] = self.lines[start].replace("():", f"({', '.join(used)}):") if used else self.lines[start]
                own = {py for py in used if key in self.diverged.get(py, ())}   # this role set them before
                gen_args.append(", ".join(f"_rv[({key!r}, {py!r})]" if py in own else py for py in used))
                entering.update(set(used) - own)
                for py in assigned:
                    self.lines.append("    " * (d + 2) + f"_rv[({key!r}, {py!r})] = {py}")
                    self.diverged.setdefault(py, set()).add(key)
            else:
                gen_args.append("")
            if any(re.search(rf"\b{re.escape(p)}\b", code) for p in outside - set(used)):
                raise Unsupported("a thread index or per-thread value inside a role made from a branch on it")
            self.per_thread = set(outside)
        if kind == "static":
            roles = f"[{', '.join(f'{g}({a})' for g, a in zip(gens, gen_args))}]"
            if entering:
                # Thread 0 runs the roles for all their threads: the vars they
                # start from must hold one value in every thread.
                site = self.fresh("_vars")
                names = sorted(entering)
                self.lines[entry:entry] = ["    " * d + f"rt.posted.setdefault({site!r}, {{}})[_t] = ({', '.join(names)},)", "    " * d + "yield 0"]
                self.lines.append("    " * (d + 1) + f"rt.same(rt.posted[{site!r}], 'the vars {', '.join(names)} entering the roles')")
        else:
            # Which threads take each branch, in this block: every branch
            # with a body runs on whole consecutive warps, or on none.
            params = ", ".join(f"_tx{i}" for i in range(len(self.thread_names)))
            tests = ", ".join("None" if code is None else f"lambda {params}: ({code})" for code, _ in items)
            extents = [self.static_int(t) for t in self.threads]
            needed = [bool(block.kids) for _, block in items]
            self.emit(d + 1, f"_counts = rt.role_partition([{tests}], {extents!r}, {needed!r})")
            roles = f"[_g(_n, _f) for _g, (_n, _f) in zip([{', '.join(gens)}], _counts) if _n]"
        # The roles run side by side: each until a barrier_wait whose phase
        # has not completed, then the next (Runtime.run_roles); in a cluster,
        # when none can go on, the other blocks run (Runtime.run_roles_co).
        # (Their arguments are the vars role_vars gives each: no read of the block's.)
        if self.cooperative:
            self.lines.append("    " * (d + 1) + f"yield from rt.run_roles_co({roles})")
        else:
            self.lines.append("    " * (d + 1) + f"rt.run_roles({roles})")
        self.role_threads = outer

    def let(self, s, d):
        name, _, ty = s.text.partition(": ")
        init = s.kids[0]
        if init.kind == "Call" and init.text.startswith("alloc_"):
            self.alloc(name, init, d)
            return
        if init.kind == "Call" and init.text == "Tensor":
            self.view(name, init, d)
            return
        if init.kind == "Call" and init.text == "reshape":
            self.reshape(name, init, d)
            return
        if init.kind == "Name" and not ty:
            # Another name for an allocated buffer (`O_shared = Q_shared`).
            named = self.lookup(init.text)
            if named.kind == "buffer" and named.buf is not None and named.buf.scope != "global":
                self.define(name, named)
                return
        v = self.expr(init)
        if ty:
            v = V(self.convert(v, ty), ty)
        if v.const is not None and v.untyped:
            self.define(name, Sym("const", ty=v.ty, const=v.const))
            return
        py = self.py_name(name)
        self.emit(d, f"{py} = {v.code}")
        self.define(name, Sym("value", py, v.ty))
        if self.thread_mode and self.thread_dependent(v.code):
            self.per_thread.add(py)
            if any(re.search(rf"\b{re.escape(p)}\b", v.code) for p in self.tx_derived):
                self.tx_derived.add(py)

    def alloc(self, name, call, d):
        kind = call.text
        py = self.py_name(name)
        if kind in ("alloc_barrier", "alloc_cluster_barrier"):
            # alloc_cluster_barrier: barriers like alloc_barrier's, in every
            # block, which the other blocks of the cluster may arrive on.
            cluster = kind == "alloc_cluster_barrier"
            if cluster and not self.cluster:
                raise InvalidProgram("alloc_cluster_barrier in a kernel without cluster(...): no other block arrives on it")
            args = self.call_args(call)
            counts = args["kw"].get("arrive_count")
            if counts is None:
                raise Unsupported(f"{kind} without arrive_count")
            repeat = 1
            if counts.kind == "Binary" and counts.text == "*" and [k.kind == "List" for k in counts.kids].count(True) == 1:
                # Python's list repetition: [128] * n, n * [128].
                listed, times = (counts.kids[0], counts.kids[1]) if counts.kids[0].kind == "List" else (counts.kids[1], counts.kids[0])
                counts, repeat = listed, self.static_int(times)
            if counts.kind == "List":
                values = [self.static_int(x) for x in counts.kids] * repeat
            else:
                values = [self.static_int(counts)]
            info = BufInfo(name, "barrier", None, [len(values)], values, cluster=cluster)
            if self.thread_mode or self.cooperative or cluster:
                # Every thread meets the allocation; the barriers are the
                # block's. In a cluster they live as long as the kernel, so
                # another block may reach them before this one allocates.
                self.emit(d, f"{py} = rt.barriers_once({self.fresh('site')!r}, {values!r}, {cluster!r})")
            else:
                self.emit(d, f"{py} = [rt.MBarrier(c) for c in {values!r}]")
            self.define(name, Sym("buffer", py, None, buf=info))
            return
        # A reducer is a fragment whose updates by many iterations of a
        # parallel loop combine (language.md): here, in iteration order.
        # Tensor memory holds values like shared memory does; how tilet
        # places them in lanes and columns is not the language's business.
        scope = {"alloc_shared": "shared", "alloc_fragment": "fragment", "alloc_local": "local",
                 "alloc_reducer": "fragment", "alloc_tmem": "tmem"}.get(kind)
        if scope is None:
            raise Unsupported(kind)
        if self.parallel_depth and scope != "local":
            raise InvalidProgram(f"{kind} inside a parallel loop")
        args = self.call_args(call)
        shape_node, dtype_node = args["pos"][0], args["pos"][1]
        shape_items = shape_node.kids if shape_node.kind == "List" else [shape_node]
        shape = [self.static_int(x) for x in shape_items]
        dtype = dtype_node.text
        info = BufInfo(name, scope, dtype, shape, reducer=kind == "alloc_reducer")
        if scope == "local":
            self.local_arrays.add(py)   # each thread's own registers (role_vars)
        site = self.fresh("site")
        if self.thread_mode and scope == "local":
            self.per_thread.add(py)
        # In thread mode every thread meets the allocation; one buffer is the block's.
        method = "alloc_once" if self.thread_mode and scope != "local" else "alloc"
        self.emit(d, f"{py} = rt.{method}({name!r}, {dtype!r}, {shape!r}, {scope!r}, {site!r})")
        self.define(name, Sym("buffer", py, dtype, buf=info))

    def view(self, name, call, d):
        """`Tensor(shape, dtype, x)`: x's elements, row-major from its first,
        seen with another shape (docs/language.md)."""
        args = self.call_args(call)
        shape_node, dtype_node, src_node = args["pos"]
        shape_items = shape_node.kids if shape_node.kind == "List" else [shape_node]
        shape = [self.static_int(x) for x in shape_items]
        src = self.lookup(src_node.text)
        if src.buf is None or src.buf.scope != "global":
            raise InvalidProgram(f"Tensor(...) of '{src_node.text}', which is not a global tensor")
        py = self.py_name(name)
        info = BufInfo(name, "global", dtype_node.text, shape)
        self.emit(d, f"{py} = rt.view({src.py}, {name!r}, {shape!r}, {dtype_node.text!r})")
        self.define(name, Sym("buffer", py, dtype_node.text, buf=info))

    def reshape(self, name, call, d):
        """`reshape(f, shape)`: fragment f's elements, row-major, seen with
        another shape of as many elements (docs/language.md)."""
        args = self.call_args(call)
        src_node, shape_node = args["pos"]
        shape_items = shape_node.kids if shape_node.kind == "List" else [shape_node]
        shape = [self.static_int(x) for x in shape_items]
        src = self.lookup(src_node.text)
        if src.buf is None or src.buf.scope != "fragment":
            raise InvalidProgram(f"reshape(...) of '{src_node.text}', which is not a fragment")
        if math.prod(shape) != math.prod(src.buf.shape):
            raise InvalidProgram(f"reshape of '{src_node.text}' {src.buf.shape} into {shape}: another number of elements")
        py = self.py_name(name)
        info = BufInfo(name, "fragment", src.buf.dtype, shape, reducer=src.buf.reducer)
        if not hasattr(self, "reshape_root"):
            self.reshape_root = {}
        self.reshape_root[name] = self.reshape_root.get(src.buf.name, src.buf.name)
        self.emit(d, f"{py} = rt.reshape({src.py}, {name!r}, {shape!r})")
        self.define(name, Sym("buffer", py, src.buf.dtype, buf=info))

    def assign(self, s, d):
        text = s.text
        name = text.split("[")[0].split()[0]
        op = text.split()[-1]
        sym = self.lookup(name)
        kids = s.kids
        if "[...]" in text:
            idx = [self.index(x) for x in kids[:-1]]
            if any("_rng." in i.code for i in idx):
                # A random draw in an index: the indices are evaluated once, before the value (left to right, as tilet draws).
                for n, i in enumerate(idx):
                    tmp = self.fresh("_ix")
                    self.emit(d, f"{tmp} = {i.code}")
                    idx[n] = V(tmp, i.ty)
            value = self.expr(kids[-1])
            info = sym.buf
            if info is None:
                raise Unsupported(f"'{name}' is not a buffer")
            load = V(self.load_code(sym, idx), info.dtype)
            if op != "=":
                value = self.binary(op[0], load, value)
            code = self.convert(value, info.dtype)
            method = "gst" if info.scope == "global" else "st"
            if self.parallel_depth and not info.reducer:
                self.emit(d, f"_track(_seen, {self.parallel_iter}, {sym.py}, ({', '.join(i.code for i in idx)},), True)")
            self.emit(d, f"{sym.py}.{method}({code}, {', '.join(i.code for i in idx)})")
            return
        if sym.kind != "var":
            raise InvalidProgram(f"assignment to '{name}', which is not a var")
        if self.parallel_depth and sym.py not in self.parallel_locals:
            raise Unsupported(f"var '{name}' of the block assigned inside a parallel loop (one copy per thread)")
        if kids[0].kind == "Call" and kids[0].text == "atomic_add":
            if op != "=":
                raise InvalidProgram("a var takes atomic_add's previous value with '=' only")
            self.fetch_add(sym, kids[0], d)
            return
        if kids[0].kind == "Call" and kids[0].text == "atomic_load":
            if op != "=":
                raise InvalidProgram("a var takes atomic_load's value with '=' only")
            self.emit(d, f"{sym.py} = {self.convert(self.atomic_load(kids[0], sym.ty), sym.ty)}")
            return
        value = self.expr(kids[0])
        if op != "=":
            value = self.binary(op[0], V(sym.py, sym.ty), value)
        self.emit(d, f"{sym.py} = {self.convert(value, sym.ty)}")

    def loop(self, s, d):
        text = s.text
        vars_, _, kind = text.rpartition(" in ")
        names = [v.strip() for v in vars_.split(",")]
        args = self.call_args_of(s.kids)
        body = [c for c in s.kids if c not in args["nodes"]]
        if kind == "parallel" and self.thread_mode and not self.parallel_depth:
            self.block_level_stmt(lambda dd: self.loop(s, dd), d)
            return
        if kind == "parallel":
            if self.parallel_depth:
                raise InvalidProgram("parallel loops do not nest")
            extents = [self.static_int(x) for x in args["pos"]]
            if len(extents) != len(names):
                raise InvalidProgram("parallel loop: one extent per variable")
            # A parallel loop that is the whole body of another joins its
            # nest (docs/language.md): one loop over all their variables.
            while len(body) == 1 and body[0].kind == s.kind and body[0].text.rpartition(" in ")[2] == "parallel":
                inner = body[0]
                inner_args = self.call_args_of(inner.kids)
                inner_names = [v.strip() for v in inner.text.rpartition(" in ")[0].split(",")]
                inner_extents = [self.static_int(x) for x in inner_args["pos"]]
                if len(inner_extents) != len(inner_names):
                    raise InvalidProgram("parallel loop: one extent per variable")
                names, extents = names + inner_names, extents + inner_extents
                body = [c for c in inner.kids if c not in inner_args["nodes"]]
            self.scopes.append({})
            self.parallel_depth += 1
            saved_locals = getattr(self, "parallel_locals", set())
            self.parallel_locals = set()
            # The iterations are independent (section 8): an element one
            # iteration writes is touched by no other. Accesses of the
            # buffers the body writes are tracked to check it.
            self.parallel_written = {a.text.split("[")[0].split()[0] for a in _walk(body) if a.kind == "Assign" and "[...]" in a.text}
            # A reshaped view and its fragment are one storage.
            roots = getattr(self, "reshape_root", {})
            self.parallel_written |= {n for n, r in roots.items() if r in {roots.get(w, w) for w in self.parallel_written}}
            self.parallel_written |= {roots.get(w, w) for w in set(self.parallel_written)}
            self.parallel_iter = "(" + "".join(f"{self.py_name(n)}, " for n in names) + ")"
            self.emit(d, "_seen = {}")
            for i, (n, e) in enumerate(zip(names, extents)):
                py = self.py_name(n)
                self.emit(d + i, f"for {py} in range({e}):")
                self.define(n, Sym("value", py, "int32"))
            self.stmts(body, d + len(names))
            self.parallel_written = set()
            self.parallel_locals = saved_locals
            self.parallel_depth -= 1
            self.scopes.pop()
            return
        if kind == "persistent":
            self.persistent_loop(s, names, args, body, d)
            return
        if len(names) != 1:
            raise InvalidProgram(f"a {kind} loop has one variable")
        pos = [self.integer(x) for x in args["pos"]]
        # A pipelined loop means the same as a sequential one over the same
        # bounds (`pipelined(n)` or `pipelined(start, end)`): its copies only
        # run ahead (docs/language.md section 5).
        if len(pos) == 1:
            rng = f"range({pos[0].code})"
        elif len(pos) == 2:
            rng = f"range({pos[0].code}, {pos[1].code})"
        elif len(pos) == 3:
            rng = f"rt.steps({pos[0].code}, {pos[1].code}, {pos[2].code})"
        else:
            raise InvalidProgram(f"{kind}: one to three bounds")
        py = self.py_name(names[0])
        diverges = self.thread_mode and self.thread_dependent(rng)
        if diverges and self.lockstep_guard:
            raise Unsupported("a loop whose bounds differ between threads inside a role of thread-level code")
        self.divergent += diverges
        self.emit(d, f"for {py} in {rng}:")
        self.scopes.append({})
        self.define(names[0], Sym("value", py, "int32"))
        if diverges:
            self.per_thread.add(py)
        self.loop_body(body, d + 1)
        self.scopes.pop()
        self.divergent -= diverges

    def persistent_loop(self, s, names, args, body, d):
        """TileLang's T.Persistent: the block's tiles are g = index,
        index + wave, ... below the domain's size; tile g's coordinates take
        the last dimension in groups of G = min(group_size, last extent):
        g % G is the column in the group, then the other dimensions (the
        last of them fastest), then the group (docs/language.md section 5)."""
        if len(args["pos"]) != 3 or args["pos"][0].kind != "List":
            raise InvalidProgram("persistent([extents], wave, index)")
        dims = [self.integer(x).code for x in args["pos"][0].kids]
        if len(dims) != len(names):
            raise InvalidProgram("persistent: one extent per variable")
        wave = self.integer(args["pos"][1]).code
        index = self.integer(args["pos"][2]).code
        group = self.static_int(args["kw"]["group_size"]) if "group_size" in args["kw"] else 8
        tag = "p_" + names[0]
        self.emit(d, f"{tag}_dims = [{', '.join(dims)}]")
        self.emit(d, f"{tag}_group = min({group}, {tag}_dims[-1])")
        self.emit(d, f"{tag}_size = 1")
        self.emit(d, f"for {tag}_x in {tag}_dims: {tag}_size *= {tag}_x")
        self.emit(d, f"for {tag}_g in range({index}, {tag}_size, {wave}):")
        self.emit(d + 1, f"{tag}_rest = {tag}_g // {tag}_group")
        self.emit(d + 1, f"{tag}_at = [0] * {len(dims)}")
        self.emit(d + 1, f"for {tag}_k in reversed(range({len(dims) - 1})):")
        self.emit(d + 2, f"{tag}_at[{tag}_k] = {tag}_rest % {tag}_dims[{tag}_k]")
        self.emit(d + 2, f"{tag}_rest //= {tag}_dims[{tag}_k]")
        self.emit(d + 1, f"{tag}_at[-1] = {tag}_rest * {tag}_group + {tag}_g % {tag}_group")
        self.scopes.append({})
        for i, n in enumerate(names):
            py = self.py_name(n)
            self.emit(d + 1, f"{py} = {tag}_at[{i}]")
            self.define(n, Sym("value", py, "int32"))
        self.stmts(body, d + 1)
        self.scopes.pop()

    # -------------------------------------------------------------- calls
    def call_args_of(self, kids):
        """Arguments among a node's children: a call's are all of them; a
        loop's come before its body, whose statements are never expression
        builtins (an unused expression builtin is an error)."""
        pos, kw, nodes = [], {}, []
        for c in kids:
            if c.kind in ("Assign", "For", "If", "While", "Let", "Var", "Ws", "Break", "Continue") or (c.kind == "Call" and c.text not in EXPR_BUILTINS):
                break
            if c.kind == "Keyword":
                kw[c.text] = c.kids[0]
            else:
                pos.append(c)
            nodes.append(c)
        return {"pos": pos, "kw": kw, "nodes": nodes}

    def call_args(self, call):
        pos, kw = [], {}
        for c in call.kids:
            if c.kind == "Keyword":
                kw[c.text] = c.kids[0]
            else:
                pos.append(c)
        return {"pos": pos, "kw": kw, "nodes": call.kids}

    def region(self, node):
        """Python code building a Region (extents None: a corner whose
        extents come from the other operand; docs/language.md section 9)."""
        if node.kind == "Name":
            sym = self.lookup(node.text)
            if sym.buf is None:
                raise InvalidProgram(f"'{node.text}' is not a buffer")
            return f"rt.whole({sym.py})", sym
        if node.kind != "Index" or node.kids[0].kind != "Name":
            raise InvalidProgram("a region is a buffer or an indexed buffer")
        sym = self.lookup(node.kids[0].text)
        if sym.buf is None:
            raise InvalidProgram(f"'{node.kids[0].text}' is not a buffer")
        items = []
        for d, it in enumerate(node.kids[1:]):
            if it.kind == "Slice" and len(it.kids) == 1:   # `a:` runs to the end of the dimension
                items.append(f"({self.integer(it.kids[0]).code}, {sym.py}.shape[{d}])")
            elif it.kind == "Slice":
                items.append(f"({self.integer(it.kids[0]).code}, {self.integer(it.kids[1]).code})")
            else:
                items.append(f"({self.integer(it).code}, None)")
        return f"rt.region({sym.py}, [{', '.join(items)}])", sym

    # The buffer each tile operation writes, by argument position.
    WRITTEN_ARG = {"copy": 1, "tma_copy": 1, "async_copy": 1, "copy_cluster": 1, "im2col": 1, "gemm": 2, "gemm_blockscaled": 2, "clear": 0, "fill": 0, "cumsum": 0,
                   "reduce_sum": 1, "reduce_max": 1, "reduce_min": 1, "reduce_abssum": 1, "reduce_absmax": 1,
                   "tcgen05_sf_warp_transpose": 0, "tcgen05_cp_warpx4": 1}

    def block_level_stmt(self, emit_at, d):
        """In thread mode a block-level operation (a tile operation, a
        parallel loop) is performed once, by thread 0, at the step where
        every thread meets it."""
        if self.divergent:
            raise Unsupported("a tile operation or parallel loop inside a branch threads take differently")
        start = len(self.lines)
        self.emit(d, "if _t == 0:")
        saved, self.thread_mode = self.thread_mode, False
        emit_at(d + 1)
        self.thread_mode = saved
        if self.thread_dependent("\n".join(self.lines[start:])):
            raise Unsupported("a tile operation or parallel loop that uses per-thread values")

    def random_numbers_here(self, what):
        """Random numbers are each thread's own, drawn in the order the
        thread meets them. Which thread runs which element of a parallel
        loop is the lowering's, so the reference follows the draws of a
        block of one thread, or of each thread outside parallel loops."""
        if self.block_threads > 1 and (not self.thread_mode or self.parallel_depth):
            raise Unsupported(f"{what} in a block of {self.block_threads} threads outside thread-level code (which thread draws which element is the lowering's)")

    def call_stmt(self, s, d):
        name = s.text
        args = self.call_args(s)
        pos, kw = args["pos"], args["kw"]
        if name == "rng_init":
            self.random_numbers_here("rng_init")
            seed = self.integer(pos[0]).code
            seq = self.integer(pos[1] if len(pos) > 1 else kw["seq"]).code if len(pos) > 1 or "seq" in kw else \
                (f"(_t + _b0 * {self.block_threads})" if self.thread_mode else "_b0")
            off = self.integer(pos[2] if len(pos) > 2 else kw["off"]).code if len(pos) > 2 or "off" in kw else "0"
            self.emit(d, f"_rng.init({seed}, {seq}, {off})")
            return
        if name == "atomic_add":
            self.atomic_add(pos, d)
            return
        if name in ("atomic_addx2", "atomic_addx4"):
            self.atomic_add_lanes(2 if name == "atomic_addx2" else 4, pos, d)
            return
        if name == "atomic_store":
            self.atomic_store(pos, d)
            return
        if name == "thread_allreduce":
            self.thread_allreduce(pos, kw, d)
            return
        if name == "dp4a":
            self.dp4a(pos, d)
            return
        if name == "import_source":
            return   # what it brings in runs as the models of extern_models.py
        if name == "call_extern":
            self.call_extern(pos, d)
            return
        if name in self.interp.fns:
            self.inline_fn(self.interp.fns[name], pos, d)
            return
        if name == "finalize_reducer":
            return   # the reducer already holds the combined values
        if name == "annotate_layout":
            return   # a shared buffer's bank swizzle: where its bytes are, not what they hold
        if name == "im2col" and not self.parallel_depth and not self.thread_mode:
            img, _ = self.region(pos[0])
            dst, _ = self.region(pos[1])
            rest = ", ".join(self.integer(x).code for x in pos[2:])
            self.emit(d, f"rt.im2col({img}, {dst}, {rest})")
            return
        if self.thread_mode and name in self.WRITTEN_ARG and not self.parallel_depth:
            _, written = self.region(pos[self.WRITTEN_ARG[name]])
            if written.buf.scope != "local":
                self.block_level_stmt(lambda dd: self.call_stmt(s, dd), d)
                return
        if self.parallel_depth:
            raise InvalidProgram(f"'{name}' inside a parallel loop")
        if name in ("copy", "tma_copy", "async_copy", "copy_cluster"):
            src, _ = self.region(pos[0])
            dst, _ = self.region(pos[1])
            if name == "copy_cluster":
                if "cluster_mask" in kw:
                    if self.in_role_gen:
                        raise Unsupported("a multicast copy_cluster inside a role made from a branch on the thread index")
                    mask = self.static_int(kw["cluster_mask"])
                    tag = self.fresh("mc")
                    self.emit(d, f"_src = {src}")
                    self.emit(d, f"rt.cluster_post({tag!r}, _src)")
                    self.emit(d, f"yield {tag!r}")
                    self.emit(d, f"rt.multicast(_src, {dst}, {mask}, {tag!r})")
                elif "dst_block" in kw:
                    rank = self.integer(kw["dst_block"]).code
                    self.emit(d, f"rt.copy({src}, rt.remote({dst}, {rank}))")
                    if "remote_barrier" in kw:
                        bar = self.barrier_ref(kw["remote_barrier"])
                        self.emit(d, f"rt.remote_arrive({bar}, {rank})")
                return
            bar_info = self.barrier_info(kw["barrier"]) if "barrier" in kw else None
            if bar_info is not None and bar_info.cluster:
                # The pair load of a 2-CTA kernel: the tile lands in this
                # block's dst, its bytes on the barrier of the pair's leader.
                if name != "tma_copy":
                    raise Unsupported(f"{name}(..., barrier = b) with b a cluster barrier (only tma_copy's pair load is modelled)")
                if self.cluster_size != 2:
                    raise Unsupported(f"a tma_copy completing on the cluster barrier '{bar_info.name}' in a cluster of "
                                      f"{self.cluster_size} blocks (its meaning is defined for a cluster of 2)")
                if "cluster_mask" in kw:
                    raise Unsupported("a tma_copy with cluster_mask completing on a cluster barrier")
                self.emit(d, f"rt.pair_load({src}, {dst}, {self.barrier_ref(kw['barrier'])})")
                return
            self.emit(d, f"rt.copy({src}, {dst})")
            return
        if name == "gemm":
            (a, asym), (b, bsym), (c, csym) = (self.region(p) for p in pos[:3])
            ta = self.static_bool(kw.get("transpose_A"))
            tb = self.static_bool(kw.get("transpose_B"))
            clear = self.cond(kw["clear_accum"]).code if "clear_accum" in kw else "False"
            if self.static_bool(kw.get("use_2cta")):
                # The 2-CTA MMA (tcgen05 cta_group::2), issued by the pair's
                # leader: C of block h (+)= A of block h . [B of block 0 | B of block 1].
                self.check_gemm_2cta(asym, bsym, csym, kw)
                self.emit(d, f"rt.gemm_2cta({a}, {b}, {c}, {ta}, {tb}, {clear})")
                if "mbar" in kw:
                    # Its completion arrives once on the barrier of both blocks.
                    self.emit(d, f"rt.arrive_pair({self.barrier_ref(kw['mbar'])})")
                return
            self.emit(d, f"rt.gemm({a}, {b}, {c}, {ta}, {tb}, {clear})")
            if "mbar" in kw:
                # gemm(..., mbar = b) completes asynchronously and arrives on b
                # once (language.md, "TMEM GEMM"): in program order, the
                # product is there by the time a wait on b returns.
                self.emit(d, f"rt.arrive({self.barrier_ref(kw['mbar'])}, 1)")
            return
        if name == "gemm_blockscaled":
            (a, asym), (b, bsym), (c, csym), (sfa, sfasym), (sfb, sfbsym) = (self.region(p) for p in pos[:5])
            ta = self.static_bool(kw.get("transpose_A"))
            tb = self.static_bool(kw.get("transpose_B"))
            clear = self.cond(kw["clear_accum"]).code if "clear_accum" in kw else "False"
            k_start = self.integer(kw["k_start"]).code if "k_start" in kw else "0"
            ga, gb = self.static_int(kw["sf_a_granularity_k"]), self.static_int(kw["sf_b_granularity_k"])
            layout = kw["sf_layout"].text if "sf_layout" in kw else "rowmajor"
            tmem_scales = "tmem" in (sfasym.buf.scope, sfbsym.buf.scope)
            if tmem_scales:
                self.tmem_scales_gemm(asym, bsym, csym, sfasym, sfbsym, ga, gb, kw)
            scales = f"({sfa}, {sfb}, {k_start}, {ga}, {gb}, {layout!r})"
            if self.static_bool(kw.get("use_2cta")):
                # The CTA pair's block-scaled MMA (TileLang's
                # T.tcgen05_gemm_blockscaled(..., use_2cta=True)), issued by
                # the leader: C of block h (+)= (A of block h . SFA of block h)
                # . ([B of block 0 | B of block 1] . SFB of block h).
                self.check_gemm_2cta(asym, bsym, csym, kw, name)
                if not tmem_scales:
                    raise InvalidProgram("gemm_blockscaled with use_2cta is tcgen05.mma.cta_group::2: its scale factors are in "
                                         "tensor memory (TileLang's tcgen05_gemm_blockscaled), put there by tcgen05_cp_warpx4")
                self.emit(d, f"rt.gemm_2cta({a}, {b}, {c}, {ta}, {tb}, {clear}, scales={scales})")
                if "mbar" in kw:
                    self.emit(d, f"rt.arrive_pair({self.barrier_ref(kw['mbar'])})")
                return
            self.emit(d, f"rt.gemm({a}, {b}, {c}, {ta}, {tb}, {clear}, scales={scales})")
            if "mbar" in kw:
                self.emit(d, f"rt.arrive({self.barrier_ref(kw['mbar'])}, 1)")
            return
        if name == "cumsum":
            _, ssym = self.region(pos[0])
            _, dsym = self.region(pos[1]) if len(pos) > 1 else (None, ssym)
            rank = len(ssym.buf.shape)
            dim = self.static_int(kw["dim"]) if "dim" in kw else 0
            reverse = self.static_bool(kw.get("reverse"), False)
            self.emit(d, f"rt.cumsum({ssym.py}, {dsym.py}, {dim % rank}, {reverse})")
            return
        if name in ("clear", "fill"):
            r, sym = self.region(pos[0])
            if name == "clear":
                value = repr(_zero(sym.buf.dtype))
            else:
                value = self.convert(self.expr(pos[1]), sym.buf.dtype)
            self.emit(d, f"rt.fill({r}, {value})")
            return
        if name.startswith("reduce_"):
            src, ssym = self.region(pos[0])
            dst, _ = self.region(pos[1])
            rank = len(ssym.buf.shape)
            dim_node = pos[2] if len(pos) > 2 else kw.get("dim")
            dim = self.static_int(dim_node) if dim_node is not None else -1
            if dim < 0:
                dim += rank
            clear = self.cond(kw["clear"]).code if "clear" in kw else "True"
            self.emit(d, f"rt.reduce({name[7:]!r}, {src}, {dst}, {dim}, {clear})")
            return
        if name == "tcgen05_mma_arrive":
            # One arrival once the issuing thread's MMAs complete: in program
            # order they have (TileLang's T.tcgen05_mma_arrive). With
            # arrive_2cta = true (tcgen05.commit.cta_group::2 multicast), one
            # on the barrier of both blocks of the pair.
            if len(pos) != 1 or set(kw) - {"arrive_2cta"}:
                raise InvalidProgram("tcgen05_mma_arrive(b) or tcgen05_mma_arrive(b, arrive_2cta = true)")
            bar = self.barrier_ref(pos[0])
            if self.static_bool(kw.get("arrive_2cta")):
                if self.cluster_size != 2:
                    raise InvalidProgram(f"tcgen05_mma_arrive(..., arrive_2cta = true) arrives on both blocks of a pair: "
                                         f"it needs a cluster of 2 blocks, not {self.cluster_size}")
                self.emit(d, f"rt.arrive_pair({bar})")
            else:
                self.emit(d, f"rt.arrive({bar}, 1)")
            return
        if name == "barrier_arrive":
            # Every thread that runs it arrives once: in thread-level code each
            # thread for itself, otherwise one arrival for each thread of the
            # block or role that the statement stands for.
            bar = self.barrier_ref(pos[0])
            threads = 1 if self.thread_mode else self.role_threads
            if len(pos) == 2:
                # barrier_arrive(b, r): on b of block r of the cluster (r
                # evaluated in this block).
                if not self.cluster:
                    raise InvalidProgram("barrier_arrive(b, r) on block r of the cluster in a kernel without cluster(...)")
                rank = self.integer(pos[1]).code
                self.emit(d, f"rt.arrive_at({bar}, {rank}, {threads})")
                return
            if len(pos) != 1:
                raise InvalidProgram("barrier_arrive(b) or barrier_arrive(b, block)")
            self.emit(d, f"rt.arrive({bar}, {threads})")
            return
        if name == "barrier_arrive_expect_tx":
            # Each thread that runs it arrives once, and the phase also waits
            # for its transaction bytes.
            threads = 1 if self.thread_mode else self.role_threads
            self.emit(d, f"rt.arrive_expect_tx({self.barrier_ref(pos[0])}, {self.static_int(pos[1])}, {threads})")
            return
        if name in ("clc_try_cancel", "clc_try_cancel_multicast"):
            # Each thread that runs it makes a request of its own.
            if not self.thread_mode and not self.thread_branch:
                raise Unsupported(f"{name} run by a whole role or block (one thread issues it)")
            multicast = name == "clc_try_cancel_multicast"
            call = f"rt.clc_try_cancel({self.region(pos[0])[0]}, {self.barrier_ref(pos[1])}, {multicast})"
            if self.thread_mode:
                self.emit(d, call)
            else:
                self.emit(d, f"for _ in range({self.role_threads}):")
                self.emit(d + 1, call)
            return
        if name == "barrier_wait" and self.in_role_gen:
            bar = self.barrier_ref(pos[0])
            parity = self.integer(pos[1]).code
            self.emit(d, f"while {bar}.completed % 2 == ({parity}):")
            self.emit(d + 1, "yield None")
            return
        if name == "barrier_wait" and self.cooperative and not self.in_ws and not (self.thread_mode and self.divergent):
            # Every thread of the block waits here alike: nothing of this
            # block can arrive meanwhile, another block of the cluster may.
            bar = self.barrier_ref(pos[0])
            parity = self.integer(pos[1]).code
            self.emit(d, f"while {bar}.completed % 2 == ({parity}):")
            self.emit(d + 1, f"yield {WAIT!r}")
            return
        if name == "barrier_wait":
            bar = self.barrier_ref(pos[0])
            parity = self.integer(pos[1]).code
            self.emit(d, f"rt.wait({bar}, {parity}, {s.line})")
            return
        if name == "cluster_sync":
            tag = self.fresh("cs")
            if self.in_role_gen:
                raise Unsupported("cluster_sync inside a role made from a branch on the thread index")
            if self.thread_mode and self.cooperative:
                # Every thread meets it at one step (lockstep): the block is
                # there once its first thread is.
                if self.divergent:
                    raise Unsupported("cluster_sync inside a branch threads take differently")
                self.emit(d, "if _t == 0:")
                self.emit(d + 1, f"yield {tag!r}")
                return
            self.emit(d, f"yield {tag!r}")
            return
        if name == "tcgen05_sf_warp_transpose":
            # One warp reorders the words in place (TileLang's
            # T.tcgen05_sf_warp_transpose): done once for the warp's role.
            if len(pos) != 1 or kw:
                raise InvalidProgram("tcgen05_sf_warp_transpose(R) takes one region and no keywords")
            r, sym = self.region(pos[0])
            self.scale_words_operand(sym, name)
            if isinstance(self.role_threads, str):
                # A role whose threads are known when the block runs.
                self.emit(d, f"rt.one_warp({self.role_threads}, {name!r})")
            elif self.role_threads != 32:
                raise InvalidProgram(f"tcgen05_sf_warp_transpose is one warp's work: it runs in a role of 32 threads "
                                     f"(a branch on the thread index), not {self.role_threads}")
            self.emit(d, f"rt.sf_warp_transpose({r})")
            return
        if name == "tcgen05_cp_warpx4":
            # tcgen05.cp.32x128b.warpx4, issued once by one thread of the role.
            if len(pos) not in (2, 3) or set(kw) - {"use_2cta"}:
                raise InvalidProgram("tcgen05_cp_warpx4(R, T), tcgen05_cp_warpx4(R, T, col_offset), "
                                     "optionally with use_2cta = true")
            r, sym = self.region(pos[0])
            self.scale_words_operand(sym, name)
            if pos[1].kind != "Name":
                raise InvalidProgram("tcgen05_cp_warpx4's destination is a whole tensor-memory buffer, named")
            tsym = self.lookup(pos[1].text)
            self.scale_tmem_operand(tsym, name)
            offset = self.static_int(pos[2]) if len(pos) == 3 else 0
            if self.static_bool(kw.get("use_2cta")):
                # tcgen05.cp.cta_group::2 (TileLang's use_2cta=True): the
                # leader's one instruction copies in both blocks of the pair.
                if self.cluster_size != 2:
                    raise InvalidProgram(f"tcgen05_cp_warpx4 with use_2cta is tcgen05.cp.cta_group::2, which copies in both "
                                         f"blocks of a CTA pair: it needs a cluster of 2 blocks, not {self.cluster_size}")
                self.emit(d, f"rt.cp_warpx4_pair({r}, {tsym.py}, {offset})")
                return
            self.emit(d, f"rt.cp_warpx4({r}, {tsym.py}, {offset})")
            return
        if name in ("pdl_trigger", "pdl_sync", "set_max_nreg", "disable_warp_group_reg_alloc", "use_swizzle", "cp_async_commit", "cp_async_wait", "wait_wgmma", "fence_proxy_async",
                    "sync_threads"):
            # No effect on the values a kernel computes (fence_proxy_async
            # and sync_threads order memory: in program order, writes are
            # already seen).
            # use_swizzle only renumbers which block computes which tile: a
            # one-to-one mapping gives the same tensors, so the emulated run
            # checks that tilet's is.
            return
        raise Unsupported(f"tile operation {name}")

    @staticmethod
    def scale_words_operand(sym, what):
        """The shared uint32 words that tcgen05_sf_warp_transpose and
        tcgen05_cp_warpx4 take (the region's extents are checked when run)."""
        info = sym.buf
        if info is None or info.scope != "shared" or info.dtype != "uint32":
            raise InvalidProgram(f"{what} takes a region of a shared uint32 buffer"
                                 + (f", not of the {info.scope} {info.dtype} '{info.name}'" if info is not None else ""))

    @staticmethod
    def scale_tmem_operand(sym, what):
        """A tensor-memory buffer of scale words: alloc_tmem([128, cols], uint32)."""
        info = sym.buf
        if info is None or info.scope != "tmem" or info.dtype != "uint32" or len(info.shape) != 2 or info.shape[0] != 128:
            raise InvalidProgram(f"{what} takes a tensor-memory buffer alloc_tmem([128, cols], uint32) of scale words"
                                 + (f", not the {info.scope} {info.dtype} {info.shape} '{info.name}'" if info is not None else ""))

    def tmem_scales_gemm(self, asym, bsym, csym, sfasym, sfbsym, ga, gb, kw):
        """gemm_blockscaled's form with its factors in tensor memory
        (tcgen05.mma kind::mxf8f6f4 or kind::mxf4nvf4, the factors put there
        by tcgen05_cp_warpx4): both factor operands there, shared operands
        of one family -- f8e4m3 / f8e5m2 (which may mix) with UE8M0 factors
        for a multiple of 32 elements of K, the unpacked types among them (e2m1,
        e2m3 and e3m2 in the 8-bit slots of kind::mxf8f6f4), or packed f4e2m1 with UE4M3 factors for
        16 (NVFP4) or UE8M0 ones for 32 (MXFP4) -- and an f32 [128, N] accumulator in tensor memory.
        The factors' word sets and k_start are checked when run (gemm)."""
        for sym in (sfasym, sfbsym):
            self.scale_tmem_operand(sym, "gemm_blockscaled with its scale factors in tensor memory")
        if "sf_layout" in kw:
            raise InvalidProgram("gemm_blockscaled: sf_layout is for scale factors in shared or global memory, not in tensor memory")
        for sym, what in ((asym, "A"), (bsym, "B")):
            if sym.buf.scope != "shared" or sym.buf.dtype not in ("f8e4m3", "f8e5m2", "f4e2m1", *tldtypes.UNPACKED):
                raise InvalidProgram(f"gemm_blockscaled with its scale factors in tensor memory: {what} is a shared f8e4m3, f8e5m2, "
                                     f"f4e2m1 or unpacked 4- or 6-bit tile, not the {sym.buf.scope} {sym.buf.dtype} '{sym.buf.name}'")
        fp4 = [sym.buf.dtype == "f4e2m1" for sym in (asym, bsym)]
        if fp4[0] != fp4[1]:
            raise InvalidProgram(f"gemm_blockscaled with its scale factors in tensor memory: A is {asym.buf.dtype} and B "
                                 f"{bsym.buf.dtype}; f4e2m1 (NVFP4, kind::mxf4nvf4) does not mix with fp8 operands")
        for g in (ga, gb):
            if fp4[0] and g not in (16, 32):
                raise InvalidProgram(f"gemm_blockscaled with its scale factors in tensor memory: f4e2m1 operands take a granularity "
                                     f"of 16 (one UE4M3 factor for 16 elements of K, NVFP4) or 32 (UE8M0, MXFP4), not {g}")
            if not fp4[0] and (g <= 0 or g % 32):
                raise InvalidProgram(f"gemm_blockscaled with its scale factors in tensor memory: a granularity of {g}, "
                                     "not a multiple of 32 (one UE8M0 factor for 32 elements of K or more)")
        if csym.buf.scope != "tmem" or csym.buf.dtype != "f32":
            raise InvalidProgram(f"gemm_blockscaled with its scale factors in tensor memory accumulates into an f32 tensor-memory tile, "
                                 f"not the {csym.buf.scope} {csym.buf.dtype} '{csym.buf.name}'")

    @staticmethod
    def static_word(node, default):
        """A word argument (`op = max`), or `default` when absent."""
        if node is None:
            return default
        if node.kind != "Name":
            raise InvalidProgram("expected a word such as sum, max or min")
        return node.text

    def inline_fn(self, fn, args, d):
        """A fn call is its body in place of the call (docs/language.md,
        fn): a name argument is the caller's thing under the parameter's
        name; another expression is evaluated once, first. The body sees the
        file's constants and its parameters only."""
        params = [k.text for k in fn.kids if k.kind == "FnParam"]
        body = [k for k in fn.kids if k.kind != "FnParam"]
        if len(params) != len(args):
            raise InvalidProgram(f"fn '{fn.text}' takes {len(params)} arguments")
        bound = {}
        for p, a in zip(params, args):
            if a.kind == "Name":
                bound[p] = self.lookup(a.text)
                continue
            v = self.expr(a)
            if v.const is not None and v.untyped:
                bound[p] = Sym("const", ty=v.ty, const=v.const)
                continue
            py = self.fresh("arg")
            self.emit(d, f"{py} = {v.code}")
            bound[p] = Sym("value", py, v.ty)
            if self.thread_mode and self.thread_dependent(v.code):
                self.per_thread.add(py)
        saved_scopes, saved_prefix = self.scopes, self.py_prefix
        self.scopes = [self.scopes[0], bound]
        self.py_prefix = self.fresh("f") + "_"
        self.stmts(body, d)
        self.scopes, self.py_prefix = saved_scopes, saved_prefix

    def dp4a(self, pos, d):
        """c += the products of the four 8-bit integers from element a on and
        the four from element b on, in 32-bit wrapping arithmetic
        (docs/language.md, dp4a)."""
        if self.parallel_depth:
            raise InvalidProgram("'dp4a' inside a parallel loop")
        products = []
        operands = []
        for node in pos[:2]:
            sym = self.lookup(node.kids[0].text)
            idx = [self.index(x) for x in node.kids[1:]]
            operands.append([self.load_code(sym, idx[:-1] + [V(f"({idx[-1].code}) + {t}", idx[-1].ty)]) for t in range(4)])
        for x, y in zip(*operands):
            products.append(f"int({x}) * int({y})")
        target = pos[2]
        if target.kind == "Name":
            sym = self.lookup(target.text)
            self.emit(d, f"{sym.py} = _wrap(int({sym.py}) + {' + '.join(products)}, {sym.ty!r})")
        else:
            sym = self.lookup(target.kids[0].text)
            idx = [self.index(x) for x in target.kids[1:]]
            current = self.load_code(sym, idx)
            self.emit(d, f"{sym.py}.st(_wrap(int({current}) + {' + '.join(products)}, {sym.buf.dtype!r}), "
                         f"{', '.join(i.code for i in idx)})")

    def call_extern(self, pos, d):
        """f(args...) of an import_source file, run by its model: a value
        argument as its value, access_ptr(b, mode) / access_ptr(b[i...], mode)
        as a _Pointer to b's first (or that) element (docs/language.md,
        call_extern)."""
        if self.parallel_depth:
            raise InvalidProgram("'call_extern' inside a parallel loop")
        args = []
        for node in pos[1:]:
            if node.kind != "Call" or node.text != "access_ptr":
                args.append(self.expr(node).code)
                continue
            target, mode = node.kids[0], node.kids[1].text.strip('"')
            if target.kind == "Name":
                sym = self.lookup(target.text)
                if sym.buf is None:
                    raise Unsupported(f"access_ptr of '{target.text}', which is no buffer")
                idx = ["0"] * len(sym.buf.shape)
            else:
                sym = self.lookup(target.kids[0].text)
                idx = [self.index(x).code for x in target.kids[1:]]
            args.append(f"_Pointer({sym.py}, ({''.join(i + ', ' for i in idx)}), {mode!r})")
        self.emit(d, f"_extern({pos[0].text.strip(chr(34))!r})({', '.join(args)})")

    def thread_allreduce(self, pos, kw, d):
        """Every thread posts its value; once all have (a lockstep step),
        each reduces the values of the threads whose thread number differs
        from its own only in the digit of `over` (docs/language.md section 10)."""
        if not self.thread_mode or self.divergent or self.parallel_depth:
            raise Unsupported("thread_allreduce outside thread-level code every thread runs")
        stride, extent = self.thread_digits[kw["over"].text]
        value = self.expr(pos[0])
        target = pos[1]
        site = f"allreduce{target.line}_{target.col}"
        self.emit(d, f"rt.posted.setdefault({site!r}, {{}})[_t] = {value.code}")
        self.emit(d, "yield 0")
        group = f"[rt.posted[{site!r}][_t - (_t // {stride}) % {extent} * {stride} + _j * {stride}] for _j in range({extent})]"
        fold = self.static_word(kw.get("op"), "sum")
        if target.kind == "Name":
            sym = self.lookup(target.text)
            self.emit(d, f"{sym.py} = {self.convert(V(f'{fold}({group})', value.ty), sym.ty)}")
        else:
            sym = self.lookup(target.kids[0].text)
            idx = [self.index(x) for x in target.kids[1:]]
            code = self.convert(V(f"{fold}({group})", value.ty), sym.buf.dtype)
            self.emit(d, f"{sym.py}.st({code}, {', '.join(i.code for i in idx)})")

    def shuffle(self, name, pos, kw):
        """Every thread posts its value; once all have (a lockstep step),
        each takes the value of the lane shfl.sync names (docs/language.md
        section 7), then all have taken theirs (another step) before any
        posts again."""
        d = getattr(self, "shuffle_depth", None)
        if not self.thread_mode or self.divergent or self.parallel_depth or d is None:
            raise Unsupported(f"{name} outside a let or assignment of thread-level code every thread runs")
        value = self.expr(pos[0])
        if value.untyped:
            ty = default_type(value.const)
            value = V(self.convert(value, ty), ty)
        operand = self.integer(pos[1]).code
        width = self.static_int(kw["width"]) if "width" in kw else 32
        site, out = self.fresh("shfl"), self.fresh("shfl_value")
        self.emit(d, f"rt.posted.setdefault({site!r}, {{}})[_t] = {value.code}")
        self.emit(d, "yield 0")
        self.emit(d, f"{out} = rt.shuffle(rt.posted[{site!r}], _t, {name!r}, {operand}, {width})")
        self.emit(d, "yield 0")
        self.per_thread.add(out)
        return V(out, value.ty)

    def atomic_add(self, pos, d):
        dst_node, src_node = pos
        r, sym = self.region(dst_node)
        info = sym.buf
        if self.parallel_depth:
            idx = [self.index(x) for x in dst_node.kids[1:]]
            value = self.convert(self.expr(src_node), info.dtype)
            self.emit(d, f"rt.atomic_add_element({sym.py}, ({', '.join(i.code for i in idx)},), {value})")
            return
        src_is_buffer = False
        if src_node.kind in ("Name", "Index"):
            base = src_node if src_node.kind == "Name" else src_node.kids[0]
            if base.kind == "Name":
                try:
                    src_is_buffer = self.lookup(base.text).buf is not None
                except Unsupported:
                    src_is_buffer = False
        # Both sides single elements: every thread adds its value (TileLang's
        # scalar atomic_add; docs/language.md section 9).
        def element(node, buf):
            return (node.kind == "Index" and buf is not None and len(node.kids) - 1 == len(buf.shape)
                    and all(k.kind != "Slice" for k in node.kids[1:]))
        if src_is_buffer and element(dst_node, info) and element(src_node, self.lookup(src_node.kids[0].text).buf
                                                                if src_node.kind == "Index" else None):
            src_is_buffer = False
        if not src_is_buffer and element(dst_node, info):
            idx = [self.index(x) for x in dst_node.kids[1:]]
            value = self.convert(self.expr(src_node), info.dtype)
            times = 1 if self.thread_mode else self.role_threads
            self.emit(d, f"for _ in range({times}):")
            self.emit(d + 1, f"rt.atomic_add_element({sym.py}, ({', '.join(i.code for i in idx)},), {value})")
            return
        if src_is_buffer:
            if self.thread_mode:
                self.block_level_stmt(lambda dd: self.emit(dd, f"rt.atomic_add_tile({r}, {self.region(src_node)[0]})"), d)
                return
            src, _ = self.region(src_node)
            self.emit(d, f"rt.atomic_add_tile({r}, {src})")
        else:
            value = self.convert(self.expr(src_node), info.dtype)
            self.emit(d, f"rt.atomic_add_value({r}, {value})")

    def atomic_add_lanes(self, lanes, pos, d):
        """atomic_addx2 / atomic_addx4(dst, value): `lanes` consecutive
        elements of the last dimension from each operand's element (or slice
        start), each added atomically (docs/language.md section 9)."""
        def corner(node):
            if node.kind != "Index":
                raise InvalidProgram("atomic_addx2/x4 take buffer elements")
            sym = self.lookup(node.kids[0].text)
            idx = [self.index(k.kids[0] if k.kind == "Slice" else k) for k in node.kids[1:]]
            return sym, idx
        dsym, didx = corner(pos[0])
        ssym, sidx = corner(pos[1])
        times = 1 if (self.thread_mode or self.parallel_depth) else self.role_threads
        for v in range(lanes):
            dv = didx[:-1] + [V(f"({didx[-1].code}) + {v}", didx[-1].ty)]
            sv = sidx[:-1] + [V(f"({sidx[-1].code}) + {v}", sidx[-1].ty)]
            value = self.convert(V(self.load_code(ssym, sv), ssym.buf.dtype), dsym.buf.dtype)
            self.emit(d, f"for _ in range({times}):")
            self.emit(d + 1, f"rt.atomic_add_element({dsym.py}, ({', '.join(i.code for i in dv)},), {value})")

    def atomic_element(self, node, what):
        """The global element an atomic_load / atomic_store names."""
        if node.kind != "Index" or any(k.kind == "Slice" for k in node.kids[1:]):
            raise InvalidProgram(f"{what} names one element")
        sym = self.lookup(node.kids[0].text)
        if sym.buf is None or sym.buf.scope != "global" or len(node.kids) - 1 != len(sym.buf.shape):
            raise InvalidProgram(f"{what} names one element of a global tensor")
        if self.parallel_depth:
            raise InvalidProgram(f"{what} is thread-level code (not in a parallel loop)")
        return sym, [self.index(x) for x in node.kids[1:]]

    def atomic_load(self, call, ty):
        """`v = atomic_load(src[i])`: the element's value (threads run one
        at a time, so every memory order reads the latest store)."""
        args = self.call_args(call)
        if len(args["pos"]) != 1:
            raise InvalidProgram("atomic_load takes one element")
        sym, idx = self.atomic_element(args["pos"][0], "atomic_load")
        if sym.buf.dtype != ty:
            raise InvalidProgram(f"atomic_load of a {sym.buf.dtype} element into a var of {ty}")
        return V(self.load_code(sym, idx), sym.buf.dtype)

    def atomic_store(self, pos, d):
        """atomic_store(dst[i], value): each thread that runs it stores."""
        if len(pos) != 2:
            raise InvalidProgram("atomic_store takes an element and a value")
        sym, idx = self.atomic_element(pos[0], "atomic_store")
        code = self.convert(self.expr(pos[1]), sym.buf.dtype)
        self.emit(d, f"{sym.py}.gst({code}, {', '.join(i.code for i in idx)})")

    def fetch_add(self, sym, call, d):
        """`v = atomic_add(dst[i], x, return_prev = true)`: each thread's
        add, in the order the threads run, gives it the element's value
        before its own add."""
        args = self.call_args(call)
        if len(args["pos"]) != 2 or "return_prev" not in args["kw"] or not self.static_bool(args["kw"]["return_prev"]):
            raise InvalidProgram("a var takes atomic_add's value only with return_prev = true")
        if not self.thread_mode:
            raise Unsupported("atomic_add(..., return_prev = true) in a kernel without thread names (each thread's previous value)")
        dst_node, src_node = args["pos"]
        if dst_node.kind != "Index" or any(k.kind == "Slice" for k in dst_node.kids[1:]):
            raise InvalidProgram("return_prev = true gives the previous value of one element")
        dsym = self.lookup(dst_node.kids[0].text)
        if dsym.buf is None or dsym.buf.scope not in ("global", "shared") or len(dst_node.kids) - 1 != len(dsym.buf.shape):
            raise InvalidProgram("a fetch-add updates one element of a global or shared buffer")
        if dsym.buf.dtype != sym.ty:
            raise InvalidProgram(f"the previous value of a {dsym.buf.dtype} element goes into a var of its type, not {sym.ty}")
        idx = [self.index(x) for x in dst_node.kids[1:]]
        value = self.convert(self.expr(src_node), dsym.buf.dtype)
        self.emit(d, f"{sym.py} = rt.atomic_add_element({dsym.py}, ({', '.join(i.code for i in idx)},), {value})")

    def barrier_info(self, node):
        """What translation knows of the barriers a barrier reference names."""
        name = node.text if node.kind == "Name" else node.kids[0].text
        sym = self.lookup(name)
        if sym.buf is None or sym.buf.scope != "barrier":
            raise InvalidProgram(f"'{name}' is not a barrier")
        return sym.buf

    def check_gemm_2cta(self, asym, bsym, csym, kw, op="gemm"):
        """gemm(..., use_2cta = true) or gemm_blockscaled(..., use_2cta =
        true): tcgen05's cta_group::2 MMA, in a cluster of 2, A and B in
        shared memory, C in tensor memory (the shapes are checked when run:
        B holds half of C's N)."""
        if self.cluster_size != 2:
            raise InvalidProgram(f"{op} with use_2cta runs on the pair of blocks of a cluster of 2, not in a cluster of {self.cluster_size}")
        if "inst" in kw and kw["inst"].text != "tcgen05":
            raise InvalidProgram(f"{op} with use_2cta is a tcgen05 MMA, not inst = {kw['inst'].text}")
        if asym.buf.scope != "shared" or bsym.buf.scope != "shared":
            raise Unsupported(f"{op} with use_2cta whose A or B is not in shared memory")
        if csym.buf.scope != "tmem":
            raise InvalidProgram(f"{op} with use_2cta accumulates into tensor memory, not into the {csym.buf.scope} '{csym.buf.name}'")

    def barrier_ref(self, node):
        if node.kind == "Name":
            sym = self.lookup(node.text)
            return f"{sym.py}[0]"
        sym = self.lookup(node.kids[0].text)
        return f"rt.barrier({sym.py}, {self.integer(node.kids[1]).code})"

    def static_bool(self, node, default=False):
        if node is None:
            return default
        v = self.expr(node)
        if v.const is None or not isinstance(v.const, bool):
            raise Unsupported("expected a constant bool")
        return v.const

    # -------------------------------------------------------------- expressions
    def convert(self, v, ty):
        """Code for v converted to dtype ty."""
        if v.const is not None:
            if v.untyped:
                c = v.const
                if ty == "bool":
                    if not isinstance(c, bool):
                        raise InvalidProgram("a number converted to bool")
                    return repr(c)
                if is_int(ty) and isinstance(c, float):
                    return repr(convert(c, "f64", ty))
                return _lit(convert(c, "f64" if isinstance(c, float) else "int64", ty))
            return _lit(convert(v.const, v.ty, ty))
        if v.ty == ty:
            return v.code
        if ty == "bool":
            raise InvalidProgram(f"{v.ty} converted to bool (compare with 0)")
        if is_float(ty):
            if is_float(v.ty) and v.ty not in ("f64",) and ty in ("f32", "tf32", "f64"):
                return v.code   # a narrow float or f32 is exact in f32 and f64
            fn = ROUND[ty].__name__
            return f"_r_{ty}(float({v.code}))"
        if is_float(v.ty):
            return f"_ftoi({v.code}, {ty!r})"
        return f"_wrap(int({v.code}), {ty!r})"

    def typed(self, v, ty):
        return V(self.convert(v, ty), ty)

    def integer(self, node):
        v = self.expr(node)
        if v.untyped:
            if not isinstance(v.const, int) or isinstance(v.const, bool):
                raise InvalidProgram("an index must be an integer")
            return V(repr(v.const), default_type(v.const), v.const)
        if not is_int(v.ty):
            raise InvalidProgram(f"an index must be an integer, found {v.ty}")
        return v

    def index(self, node):
        return self.integer(node)

    def cond(self, node):
        v = self.expr(node)
        if v.ty != "bool":
            raise InvalidProgram(f"a condition must be bool, found {v.ty}")
        return v

    def load_code(self, sym, idx):
        info = sym.buf
        method = "gld" if info.scope == "global" else "ld"
        if info.scope == "barrier":
            raise InvalidProgram("barriers hold no data")
        call = f"{sym.py}.{method}({', '.join(i.code for i in idx)})"
        if self.parallel_depth and info.name in getattr(self, "parallel_written", ()) and not info.reducer:
            call = f"_tracked(_seen, {self.parallel_iter}, {sym.py}, ({', '.join(i.code for i in idx)},), {call})"
        return call

    def expr(self, n):
        k = n.kind
        if k == "Int":
            c = int(n.text)
            return V(repr(c), UINT, c)
        if k == "Float":
            c = float_literal(self.interp.source_lines, n.line, n.col)
            return V(repr(c), UFLOAT, c)
        if k == "True":
            return V("True", "bool", True)
        if k == "False":
            return V("False", "bool", False)
        if k == "Inf":
            return V("math.inf", UFLOAT, math.inf)
        if k == "Name":
            sym = self.lookup(n.text)
            if sym.kind == "const":
                c = sym.const
                return V(_lit(c), sym.ty, c)
            if sym.kind == "buffer":
                raise InvalidProgram(f"buffer '{n.text}' used as a value")
            return V(sym.py, sym.ty)
        if k == "Index":
            sym = self.lookup(n.kids[0].text)
            if sym.buf is None:
                raise InvalidProgram(f"'{n.kids[0].text}' is not a buffer")
            idx = [self.index(x) for x in n.kids[1:]]
            if len(idx) != len(sym.buf.shape):
                raise InvalidProgram(f"'{n.kids[0].text}' takes {len(sym.buf.shape)} indices")
            return V(self.load_code(sym, idx), sym.buf.dtype)
        if k == "Unary":
            return self.unary(n.text, self.expr(n.kids[0]))
        if k == "Binary":
            op = n.text
            if op in ("&&", "||"):
                a, b = self.cond(n.kids[0]), self.cond(n.kids[1])
                if a.const is not None and b.const is not None:
                    c = (a.const and b.const) if op == "&&" else (a.const or b.const)
                    return V(repr(c), "bool", c)
                return V(f"({a.code} {'and' if op == '&&' else 'or'} {b.code})", "bool")
            return self.binary(op, self.expr(n.kids[0]), self.expr(n.kids[1]))
        if k == "Cond":
            c = self.cond(n.kids[0])
            a, b = self.expr(n.kids[1]), self.expr(n.kids[2])
            if a.untyped and b.untyped:
                if c.const is not None:
                    return a if c.const else b
                ty = default_type(a.const if isinstance(a.const, float) else b.const)
            elif a.untyped:
                ty = adopt(a.const, b.ty)
                ty = b.ty if ty != "int64" else arith_type(ty, b.ty)
            elif b.untyped:
                ty = adopt(b.const, a.ty)
                ty = a.ty if ty != "int64" else arith_type(ty, a.ty)
            elif a.ty == b.ty:
                ty = a.ty
            elif a.ty == "bool" or b.ty == "bool":
                raise InvalidProgram("?: of a bool and a number")
            else:
                ty = arith_type(a.ty, b.ty)
            return V(f"({self.convert(a, ty)} if {c.code} else {self.convert(b, ty)})", ty)
        if k == "Call":
            return self.call_expr(n)
        raise Unsupported(f"expression {k}")

    def unary(self, op, a):
        if op == "!":
            if a.ty != "bool":
                raise InvalidProgram("! needs a bool")
            if a.const is not None:
                return V(repr(not a.const), "bool", not a.const)
            return V(f"(not {a.code})", "bool")
        if a.ty == "bool":
            raise InvalidProgram(f"{op} of a bool")
        if a.untyped:
            c = -a.const if op == "-" else ~a.const
            if op == "~" and not isinstance(a.const, int):
                raise InvalidProgram("~ of a float")
            return V(_lit(c), a.ty, c)
        ty = arith_type(a.ty, a.ty)
        if op == "-":
            if is_float(ty):
                return V(f"(-{self.convert(a, ty)})", ty)
            return V(f"_wrap(-{self.convert(a, ty)}, {ty!r})", ty)
        if not is_int(ty):
            raise InvalidProgram("~ of a float")
        return V(f"_wrap(~{self.convert(a, ty)}, {ty!r})", ty)

    def binary(self, op, a, b):
        # Constant folding of two untyped constants (in 64-bit integers or
        # doubles, docs/language.md section 2).
        if a.untyped and b.untyped:
            x, y = a.const, b.const
            isf = isinstance(x, float) or isinstance(y, float)
            if op in ("<", "<=", ">", ">=", "==", "!="):
                c = {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y, "==": x == y, "!=": x != y}[op]
                return V(repr(c), "bool", c)
            if op == "+": c = x + y
            elif op == "-": c = x - y
            elif op == "*": c = x * y
            elif op == "/": c = _fdiv(float(x), float(y)) if isf else _idiv(x, y)
            elif op == "%": c = _imod(x, y)
            elif op == "<<": c = x << y
            elif op == ">>": c = x >> y
            elif op == "&": c = x & y
            elif op == "|": c = x | y
            elif op == "^": c = x ^ y
            else:
                raise InvalidProgram(f"operator {op} on constants")
            return V(_lit(c), UFLOAT if isf else UINT, c)
        ta = adopt(a.const, b.ty) if a.untyped else a.ty
        tb = adopt(b.const, a.ty) if b.untyped else b.ty
        if op in ("==", "!=") and ta == "bool" and tb == "bool":
            ca, cb = self.convert(a, "bool"), self.convert(b, "bool")
            return V(f"({ca} {op} {cb})", "bool")
        if ta == "bool" or tb == "bool":
            raise InvalidProgram(f"operator {op} on a bool")
        if op in ("<<", ">>"):
            if not (is_int(ta) and is_int(tb)):
                raise InvalidProgram("shifts take integers")
            ty = arith_type(ta, ta)
            ca = self.convert(a, ty)
            cb = self.convert(b, arith_type(tb, tb))
            bits = INT_TYPES[ty][0]
            return V(f"_shift({ca}, {cb}, {op!r}, {ty!r}, {bits})", ty)
        ty = arith_type(ta, tb)
        # An untyped constant that takes a narrow float type is that type's
        # value (docs/language.md section 3: `x * 0.1` with x: bf16 multiplies
        # by bf16(0.1)), then computed in f32 with the other side.
        if a.untyped and ta != ty and ta in NARROW_FLOATS:
            a = V(self.convert(a, ta), ta)
        if b.untyped and tb != ty and tb in NARROW_FLOATS:
            b = V(self.convert(b, tb), tb)
        ca, cb = self.convert(a, ty), self.convert(b, ty)
        if op in ("<", "<=", ">", ">=", "==", "!="):
            return V(f"({ca} {op} {cb})", "bool")
        if op in ("&", "|", "^"):
            if not is_int(ty):
                raise InvalidProgram(f"{op} takes integers")
            return V(f"_wrap({ca} {op} {cb}, {ty!r})", ty)
        if is_float(ty):
            rnd = "_r_f32" if ty == "f32" else ""
            if op == "/":
                return V(f"{rnd}(_fdiv({ca}, {cb}))", ty)
            if op == "%":
                raise InvalidProgram("% takes integers")
            return V(f"{rnd}({ca} {op} {cb})", ty)
        if op == "/":
            return V(f"_wrap(_idiv({ca}, {cb}), {ty!r})", ty)
        if op == "%":
            return V(f"_imod({ca}, {cb})", ty)
        return V(f"_wrap({ca} {op} {cb}, {ty!r})", ty)

    def min_max(self, name, a, b):
        if a.untyped and b.untyped:
            c = min(a.const, b.const) if name == "min" else max(a.const, b.const)
            return V(_lit(c), UFLOAT if isinstance(c, float) else UINT, c)
        ta = adopt(a.const, b.ty) if a.untyped else a.ty
        tb = adopt(b.const, a.ty) if b.untyped else b.ty
        ty = arith_type(ta, tb)
        fn = "_fmin" if name == "min" else "_fmax"
        return V(f"{fn}({self.convert(a, ty)}, {self.convert(b, ty)})", ty)

    def call_expr(self, n):
        name = n.text
        args = self.call_args(n)
        pos = args["pos"]
        if name == "cast":
            v = self.expr(pos[0])
            ty = pos[1].text
            if ty == "bool":
                if v.ty != "bool":
                    raise InvalidProgram("cast to bool: compare with 0")
                return v
            return V(self.convert(v, ty), ty)
        if name == "reinterpret":
            # The bits of the value, read as the other type of the same width
            # (TileLang's T.reinterpret): through the values' byte images.
            v = self.expr(pos[0])
            if v.untyped:
                v = V(self.convert(v, default_type(v.const)), default_type(v.const), None)
            ty = pos[1].text
            if BITS.get(v.ty) != BITS.get(ty) or BITS.get(ty, 0) % 8:
                raise InvalidProgram(f"reinterpret of {v.ty} as {ty}")
            return V(f"_bitcast({v.code}, {v.ty!r}, {ty!r})", ty)
        if name in ("rng_rand", "rng_rand_float"):
            self.random_numbers_here(name + "()")
            return V("_rng.next()", "uint32") if name == "rng_rand" else V("_rng.uniform()", "f32")
        if name == "block_rank_in_cluster":
            return V("rt.rank", "int32")
        if name.startswith("clc_"):
            # A field of a cluster-launch-control answer (Runtime.clc_try_cancel).
            word = ["clc_is_canceled", "clc_get_first_ctaid_x", "clc_get_first_ctaid_y", "clc_get_first_ctaid_z"].index(name)
            return V(f"rt.clc_field({self.region(pos[0])[0]}, {word})", "int32" if word == 0 else "uint32")
        if name == "num_sms":
            return V(str(EMULATED_SM_COUNT), "int32")
        if name in ("shfl_sync", "shfl_xor", "shfl_down", "shfl_up"):
            return self.shuffle(name, pos, args["kw"])
        if name == "clamp":   # min(max(x, lo), hi), as TileLang's T.clamp
            x, lo, hi = (self.expr(p) for p in pos)
            return self.min_max("min", self.min_max("max", x, lo), hi)
        if name in ("min", "max"):
            return self.min_max(name, self.expr(pos[0]), self.expr(pos[1]))
        if name in ("floordiv", "floormod"):
            # Python's // and % (language.md section 7), on integers.
            a, b = self.expr(pos[0]), self.expr(pos[1])
            if a.untyped and b.untyped:
                if b.const == 0:
                    raise InvalidProgram("division by zero")
                c = a.const // b.const if name == "floordiv" else a.const % b.const
                return V(_lit(c), UINT, c)
            ta = adopt(a.const, b.ty) if a.untyped else a.ty
            tb = adopt(b.const, a.ty) if b.untyped else b.ty
            ty = arith_type(ta, tb)
            if not is_int(ty):
                raise InvalidProgram(f"{name} takes integers")
            op = "//" if name == "floordiv" else "%"
            return V(f"_wrap(_pyfloor({self.convert(a, ty)}, {self.convert(b, ty)}, {op!r}), {ty!r})", ty)
        if name == "ceildiv":
            a, b = self.expr(pos[0]), self.expr(pos[1])
            if a.untyped and b.untyped:
                # (a + b - 1) / b in C's truncating division, as for typed operands
                c = _idiv(a.const + b.const - 1, b.const)
                return V(_lit(c), UFLOAT if isinstance(c, float) else UINT, c)
            ta = adopt(a.const, b.ty) if a.untyped else a.ty
            tb = adopt(b.const, a.ty) if b.untyped else b.ty
            ty = arith_type(ta, tb)
            ca, cb = self.convert(a, ty), self.convert(b, ty)
            if not is_int(ty):
                raise InvalidProgram("ceildiv takes integers")
            return V(f"_wrap(_idiv({ca} + {cb} - 1, {cb}), {ty!r})", ty)
        if name == "abs":
            a = self.expr(pos[0])
            if a.untyped:
                return V(_lit(abs(a.const)), a.ty, abs(a.const))
            ty = arith_type(a.ty, a.ty)
            if is_float(ty):
                return V(f"abs({self.convert(a, ty)})", ty)
            return V(f"_wrap(abs({self.convert(a, ty)}), {ty!r})", ty)
        if name == "**":
            # An integer to a constant integer power >= 0 is an integer (docs/language.md section 7).
            a, e = self.expr(pos[0]), self.expr(pos[1])
            int_base = isinstance(a.const, int) and not isinstance(a.const, bool) if a.untyped else is_int(a.ty)
            if int_base and e.untyped and isinstance(e.const, int) and not isinstance(e.const, bool) and e.const >= 0:
                if a.untyped:
                    c = a.const ** e.const
                    return V(_lit(c), UINT, c)
                ty = arith_type(a.ty, a.ty)
                return V(f"_wrap(({self.convert(a, ty)}) ** {e.const}, {ty!r})", ty)
            name = "pow"
        if name in MATH1 or name == "pow":
            vals = [self.expr(p) for p in pos]
            ty = "f64" if any(v.ty == "f64" for v in vals) and name not in F32_ONLY else "f32"
            if all(v.untyped for v in vals):
                fn = {"pow": _pow, **{k: eval(v) for k, v in MATH1.items()}}[name]
                c = float(fn(*[float(v.const) for v in vals]))
                return V(_lit(c), UFLOAT, c)
            codes = [self.convert(v, ty) for v in vals]
            fn = "_pow" if name == "pow" else MATH1[name]
            call = f"{fn}({', '.join(codes)})"
            if name in ("floor", "ceil"):
                call = f"float({call})"
            return V(f"_r_f32({call})" if ty == "f32" else call, ty)
        raise Unsupported(f"builtin {name}")


_ARRIVALS = [0]   # arrivals so far (Runtime.run_roles: whether a round got anywhere)
# What a block's generator yields while it waits for a barrier phase that
# another block of its cluster may complete (Interpreter._run_cluster).
WAIT = "wait"


def _walk(nodes):
    for n in nodes:
        yield n
        yield from _walk(n.kids)


def _track(seen, it, buf, idx, write):
    """Records an access of an iteration of a parallel loop; an element
    written by one iteration and read or written by another is a conflict."""
    # A view (reshape, Tensor) and its buffer share their elements: keyed by
    # the storage and the flat position.
    f = buf.flat(idx) if len(idx) == len(buf.shape) else None
    key = (id(buf.data), f) if f is not None else (id(buf), idx)
    prev = seen.get(key)
    if prev is None:
        seen[key] = (it, write)
        return
    pit, pwrite = prev
    if pit != it and (write or pwrite):
        raise InvalidProgram(f"iterations {pit} and {it} of a parallel loop both access '{buf.name}'{list(idx)}, "
                             "one writing: they are not independent")
    if pit != it:
        seen[key] = (None, False)   # read by several iterations
    elif write:
        seen[key] = (it, True)


def _tracked(seen, it, buf, idx, value):
    _track(seen, it, buf, idx, False)
    return value


def _shift(a, b, op, ty, bits):
    if not 0 <= b < bits:
        raise InvalidProgram(f"shift by {b}")
    return wrap_int(a << b if op == "<<" else a >> b, ty)


def _ftoi(x, ty):
    return convert(x, "f64", ty)


class _Pointer:
    """access_ptr(buf[idx], mode) as an extern function's model sees it: the
    elements of `buf` from idx on, in memory order (docs/language.md,
    call_extern). Reads and writes outside the buffer, reads through a "w"
    pointer and writes through an "r" one are errors of the program."""

    def __init__(self, buf, idx, mode):
        self.buf, self.base, self.mode = buf, buf.flat(idx), mode
        if self.base is None:
            raise InvalidProgram(f"access_ptr of '{buf.name}'{list(idx)}, outside {buf.shape}")

    def _at(self, i):
        if not 0 <= self.base + i < len(self.buf.data):
            raise InvalidProgram(f"an extern function reaches past the end of '{self.buf.name}'")
        return self.base + i

    def __getitem__(self, i):
        if "r" not in self.mode:
            raise InvalidProgram(f"an extern function reads '{self.buf.name}' through access_ptr(..., \"w\")")
        v = self.buf.data[self._at(i)]
        if v is None:
            raise InvalidProgram(f"an extern function reads an element of '{self.buf.name}' never written")
        return v

    def __setitem__(self, i, v):
        if "w" not in self.mode:
            raise InvalidProgram(f"an extern function writes '{self.buf.name}' through access_ptr(..., \"r\")")
        f = self._at(i)
        if self.buf.scope == "global":
            self.buf._own(f, (f,))
        self.buf.data[f] = convert(v, "f64" if isinstance(v, float) else "int64", self.buf.dtype)


def _extern(name):
    """The model of extern function `name` (tests/difftest/extern_models.py)."""
    import extern_models
    if name not in extern_models.MODELS:
        raise Unsupported(f"no model of extern function '{name}' in extern_models.py")
    return extern_models.MODELS[name]


def _bitcast(x, src, dst):
    return from_bytes(to_bytes([x], src), dst, 1)[0]


RUNTIME_GLOBALS = {
    "_Pointer": _Pointer, "_extern": _extern, "_bitcast": _bitcast, "Philox": Philox,
    "math": math, "_exp": _exp, "_exp2": _exp2, "_log": _log, "_log2": _log2, "_sqrt": _sqrt, "_rsqrt": _rsqrt,
    "_pow": _pow, "_sigmoid": _sigmoid, "_fdiv": _fdiv, "_idiv": _idiv, "_imod": _imod, "_fmin": _fmin,
    "_fmax": _fmax, "_pyfloor": _pyfloor, "_wrap": wrap_int, "_shift": _shift, "_ftoi": _ftoi, "_track": _track, "_tracked": _tracked,
    **{f"_r_{t}": fn for t, fn in ROUND.items()},
}


# ------------------------------------------------------------------ the block runtime

class LaunchOrder:
    """The grid's clusters in the order they run (one after another), and
    those clc_try_cancel took, which never run."""

    def __init__(self, origins):
        self.origins, self.taken, self.running = origins, set(), 0

    def take(self):
        for j in range(self.running + 1, len(self.origins)):
            if j not in self.taken:
                self.taken.add(j)
                return [1, *self.origins[j]]
        return [0, 0, 0, 0]


class Runtime:
    """Tile operations, as docs/language.md section 9 defines them, on the
    buffers of the block being run (and of its cluster)."""
    MBarrier = MBarrier

    def __init__(self, cluster):
        self.cluster = cluster      # the blocks' runtimes, by rank
        self.tf32_truncate = False  # f32 gemm operands read as tf32 (Interpreter.tf32_truncate)
        self.rank = 0
        self.block_id = None
        self.sites = {}             # shared allocations by site, for dst_block copies
        self.allocs = {}            # on-chip allocations by site, for the peer of a 2-CTA gemm
        self.once = {}              # thread mode: the block's buffer of each allocation site
        self.posted = {}            # multicast sources by copy, in order (read by the other blocks)
        self.consumed = {}
        self.early = {}             # shared buffers a peer wrote before this block allocated them
        self.launch = None          # the grid's LaunchOrder

    @staticmethod
    def steps(a, b, step):
        if step == 0:
            raise InvalidProgram("a loop step of 0")
        return range(a, b, step)

    def barriers_once(self, site, counts, cluster=False):
        """The block's mbarriers of an allocation every thread meets (thread
        mode), or of a kernel with a cluster (created by the first block that
        reaches them: another block's arrival may come first)."""
        if site not in self.once:
            self.once[site] = [self.MBarrier(c, site, i, cluster) for i, c in enumerate(counts)]
        return self.once[site]

    def alloc_once(self, name, dtype, shape, scope, site):
        """The block's buffer of an allocation every thread meets (thread mode)."""
        if site not in self.once:
            self.once[site] = self.alloc(name, dtype, shape, scope, site)
        return self.once[site]

    @staticmethod
    def run_roles(roles):
        """Runs the roles of a chain of branches on the thread index side by
        side: each until it waits for a phase that has not completed; a
        round in which none gets further is a deadlock."""
        live = list(roles)
        while live:
            arrivals, still = _ARRIVALS[0], []
            for g in live:
                try:
                    next(g)
                    still.append(g)
                except StopIteration:
                    pass
            if _ARRIVALS[0] == arrivals and len(still) == len(live):
                raise InvalidProgram("the roles deadlock: every one waits for a barrier phase that never completes")
            live = still

    @staticmethod
    def run_roles_co(roles):
        """run_roles in a block of a cluster: when no role gets further, the
        block yields WAIT and the other blocks run (one of them may complete
        the phase); the cluster finds a deadlock (Interpreter._run_cluster)."""
        live = list(roles)
        while live:
            arrivals, still = _ARRIVALS[0], []
            for g in live:
                try:
                    next(g)
                    still.append(g)
                except StopIteration:
                    pass
            if _ARRIVALS[0] == arrivals and len(still) == len(live):
                yield WAIT
            live = still

    @staticmethod
    def role_partition(tests, extents, needed):
        """The thread count of each branch of a chain whose conditions read
        block-uniform values as well as thread indices (KernelTranslator.
        role_chain), in this block: thread t takes the first branch whose
        test holds for its indices (None: an else). A branch with a body
        (`needed`) runs on whole consecutive warps, or on no thread."""
        taken = [[] for _ in tests]
        for t in range(math.prod(extents)):
            idx, below = [], 1
            for e in extents:
                idx.append((t // below) % e)
                below *= e
            for b, test in enumerate(tests):
                if test is None or test(*idx):
                    taken[b].append(t)
                    break
        for ts, need in zip(taken, needed):
            if need and ts and (ts != list(range(ts[0], ts[0] + len(ts))) or ts[0] % 32 or len(ts) % 32):
                raise InvalidProgram(f"a branch on the thread index with tile work runs on threads {ts[0]}..{ts[-1]}, "
                                     "not whole consecutive warps")
        return [(len(ts), ts[0]) if need and ts else (0, 0) for ts, need in zip(taken, needed)]

    @staticmethod
    def threads_where(test, first, count, extents):
        """How many of the threads first .. first + count - 1 a test of their
        thread indices holds for (a branch inside a role)."""
        n = 0
        for t in range(first, first + count):
            idx, below = [], 1
            for e in extents:
                idx.append((t // below) % e)
                below *= e
            n += bool(test(*idx))
        return n

    @staticmethod
    def one_warp(threads, what):
        if threads != 32:
            raise InvalidProgram(f"{what} is one warp's work: it runs in a role of 32 threads "
                                 f"(a branch on the thread index), not {threads}")

    @staticmethod
    def lockstep_co(threads):
        """lockstep in a block of a cluster: a thread that yields WAIT (a
        barrier_wait every thread meets) or a cluster meeting (cluster_sync,
        a multicast) hands that over to the cluster and is resumed within
        its step; the threads' steps stay aligned."""
        live = list(threads)
        while live:
            done = 0
            for g in live:
                try:
                    v = next(g)
                    while v != 0:
                        yield v
                        v = next(g)
                except StopIteration:
                    done += 1
            if done and done != len(live):
                raise InvalidProgram("the threads of a block end at different steps")
            if done:
                break

    @staticmethod
    def lockstep(threads):
        """Runs the threads of a block one step each in turn; a step ends
        where every thread meets the next statement (thread mode)."""
        live = list(threads)
        while live:
            done = 0
            for g in live:
                try:
                    next(g)
                except StopIteration:
                    done += 1
            if done and done != len(live):
                raise InvalidProgram("the threads of a block end at different steps")
            if done:
                break

    def alloc(self, name, dtype, shape, scope, site):
        # A shared buffer a peer's multicast answer made before this block got here.
        b = self.early.pop(site, None) or Buf(name, dtype, shape, scope, rt=self)
        b.site = site
        if scope == "shared":
            self.sites[site] = b
        if scope != "local":
            self.allocs[site] = b
        return b

    def whole(self, buf):
        if any(not isinstance(d, int) for d in buf.shape):
            raise InvalidProgram(f"'{buf.name}' has dynamic dimensions; name the tile with indices")
        return Region(buf, [0] * len(buf.shape), list(buf.shape))

    def region(self, buf, items):
        rank = len(buf.shape)
        if len(items) > rank:
            raise InvalidProgram(f"'{buf.name}' indexed with {len(items)} indices")
        mins = [b for b, _ in items]
        extents = [None if e is None else e - b for b, e in items]
        if any(e is not None and e <= 0 for e in extents):
            raise InvalidProgram("an empty or reversed slice")
        if len(items) < rank or any(e is not None for e in extents):
            extents = [1 if e is None else e for e in extents]
            mins += [0] * (rank - len(items))
            extents += list(buf.shape[len(items):])
            return Region(buf, mins, extents)
        return Region(buf, mins, None)

    @staticmethod
    def complete(r, other_shape):
        """A corner takes the other operand's tile shape, right-aligned."""
        if r.extents is not None:
            return r
        rank = len(r.buf.shape)
        tile = [e for e in other_shape if e != 1]
        if len(tile) > rank:
            raise InvalidProgram(f"a {len(tile)}-D tile does not fit '{r.buf.name}'")
        ext = [1] * (rank - len(tile)) + tile
        return Region(r.buf, r.mins, ext)

    def check_inside(self, r):
        # On-chip regions must lie inside their buffer; global ones may not
        # (out-of-range elements read 0 and are not written).
        if r.buf.scope == "global":
            return
        for m, e, n in zip(r.mins, r.extents, r.buf.shape):
            if m < 0 or m + e > n:
                raise InvalidProgram(f"region of '{r.buf.name}' [{m}, {m + e}) outside {n}")

    def pair(self, src, dst, what):
        if src.extents is None and dst.extents is None:
            raise InvalidProgram(f"{what}: neither side has extents")
        src = self.complete(src, dst.extents) if src.extents is None else src
        dst = self.complete(dst, src.extents)
        if src.tile_shape() != dst.tile_shape():
            raise InvalidProgram(f"{what} shapes differ: {src.tile_shape()} and {dst.tile_shape()}")
        self.check_inside(src)
        self.check_inside(dst)
        return src, dst

    def read(self, buf, idx):
        f = buf.flat(idx)
        if buf.scope == "global":
            if f is None:
                return _zero(buf.dtype)
            if buf.owner is not None and buf.owner[f] is not None and buf.owner[f] != self.block_id:
                raise InvalidProgram(f"'{buf.name}'{list(idx)} is read by one block and written by another")
        return buf.data[f]

    def write(self, buf, idx, v):
        f = buf.flat(idx)
        if buf.scope == "global":
            if f is None:
                return
            buf._own(f, idx)
        buf.data[f] = v

    def copy(self, src, dst):
        src, dst = self.pair(src, dst, "copy")
        st, dt = src.buf.dtype, dst.buf.dtype
        for si, di in zip(src.elements(), dst.elements()):
            v = self.read(src.buf, si)
            # Copying an element never written moves garbage: it stays
            # unwritten on chip (reading it later is the error); in global
            # memory the garbage would be the kernel's result.
            if v is None and dst.buf.scope == "global":
                raise InvalidProgram(f"'{src.buf.name}'{list(si)} is copied to global memory before it is written")
            self.write(dst.buf, di, None if v is None else convert(v, st, dt))

    @staticmethod
    def same(posted, what):
        """The vars the roles start from hold one value in every thread
        (KernelTranslator.roles): thread 0 runs the roles for all."""
        if len(set(posted.values())) > 1:
            raise Unsupported(f"{what} differ between threads")

    @staticmethod
    def alike(posted, what):
        """The one value every thread posted for a branch they must take
        alike (KernelTranslator.taken_alike)."""
        values = set(posted.values())
        if len(values) > 1:
            raise InvalidProgram(f"threads take {what} differently, around work of the whole block")
        return values.pop()

    @staticmethod
    def shuffle(posted, t, name, operand, width):
        """shfl.sync (PTX ISA): lane j of the segment of `width` lanes that
        holds thread t's lane, or t's own value where j leaves it."""
        lane, base = t % 32, t - t % 32
        lo = lane & ~(width - 1)
        hi = lo + width - 1
        if name == "shfl_sync":
            j = lo + (operand & (width - 1))
        elif name == "shfl_xor":
            j = lane ^ (operand & 31)
        elif name == "shfl_down":
            j = lane + operand
        else:
            j = lane - operand
        if (name in ("shfl_xor", "shfl_down") and j > hi) or (name == "shfl_up" and j < lo):
            return posted[t]
        if base + j not in posted:
            raise InvalidProgram(f"a shuffle reads lane {j} of a warp with no thread there")
        return posted[base + j]

    def view(self, src, name, shape, dtype):
        """A global tensor over `src`'s elements (and its record of which
        block wrote each one); with another dtype, over its bytes."""
        n = 1
        for e in shape:
            n *= e
        if n * BITS[dtype] > len(src.data) * BITS[src.dtype]:
            raise InvalidProgram(f"view '{name}' of {n} {dtype} elements over '{src.name}' of {len(src.data)} {src.dtype}")
        if dtype != src.dtype:
            v = Buf(name, dtype, shape, "global", data=Reinterpreted(src, dtype, n), rt=self)
            v.owner = [None] * n   # only read: every block may read every element
            return v
        v = Buf(name, src.dtype, shape, "global", data=src.data, rt=self)
        if src.owner is None:
            src.owner = [None] * len(src.data)
        v.owner = src.owner
        return v

    def reshape(self, src, name, shape):
        """A fragment over `src`'s elements with another shape."""
        v = Buf(name, src.dtype, shape, src.scope, data=src.data, rt=self)
        v.site, v.owner = src.site, src.owner
        return v

    def im2col(self, img, dst, nhw_step, c_step, kernel, stride, dilation, pad):
        """Rows nhw_step*R.. and columns c_step*C'.. of the im2col matrix of
        the NHWC image (row: output pixel n, oh, ow; column: tap kh, kw and
        channel c); zeros in the padding and past the matrix."""
        N, H, W, C = img.buf.shape
        OH = (H + 2 * pad - dilation * (kernel - 1) - 1) // stride + 1
        OW = (W + 2 * pad - dilation * (kernel - 1) - 1) // stride + 1
        rows, cols = dst.tile_shape()
        self.check_inside(dst)
        for (i, j), di in zip(itertools.product(range(rows), range(cols)), dst.elements()):
            m, k = nhw_step * rows + i, c_step * cols + j
            n, oh, ow = m // (OH * OW), (m // OW) % OH, m % OW
            kh, kw, c = k // (kernel * C), (k // C) % kernel, k % C
            h, w = oh * stride + kh * dilation - pad, ow * stride + kw * dilation - pad
            inside = m < N * OH * OW and k < kernel * kernel * C and 0 <= h < H and 0 <= w < W
            self.write(dst.buf, di, self.read(img.buf, (n, h, w, c)) if inside else _zero(dst.buf.dtype))

    def cumsum(self, src, dst, dim, reverse):
        """TileLang's T.cumsum: the inclusive running sum along `dim` (from
        the end when reversed), rounded to the buffer's dtype at each step."""
        shape = src.shape
        lines = [()]
        for d, e in enumerate(shape):
            if d != dim:
                lines = [l + (i,) for l in lines for i in range(e)]
        for line in lines:
            acc = _zero(src.dtype)
            order = range(shape[dim] - 1, -1, -1) if reverse else range(shape[dim])
            for k in order:
                idx = list(line)
                idx.insert(dim, k)
                acc = convert(acc + self.read(src, idx), src.dtype, src.dtype)
                self.write(dst, idx, convert(acc, src.dtype, dst.dtype))

    def fill(self, r, value):
        if r.extents is None and len(r.mins) == len(r.buf.shape):
            r = Region(r.buf, r.mins, [1] * len(r.mins))   # one element: fill(s[0], 0)
        if r.extents is None:
            raise InvalidProgram("fill/clear of a corner without extents")
        self.check_inside(r)
        for i in r.elements():
            self.write(r.buf, i, value)

    def reduce(self, op, src, dst, dim, clear):
        s, d = src.buf, dst.buf
        # (A shared operand is the same values: the lowering stages it
        # through a fragment, as TileLang's reduce_macro does.)
        if s.scope not in ("fragment", "shared") or d.scope not in ("fragment", "shared"):
            raise InvalidProgram("reductions take fragments or shared tiles")
        shape = s.shape
        out_shape = shape[:dim] + shape[dim + 1:] or [1]
        if d.shape != out_shape:
            raise InvalidProgram(f"reduction result shape {out_shape} is not {d.shape}")
        st, dt = s.dtype, d.dtype
        for oi in itertools.product(*[range(n) for n in (shape[:dim] + shape[dim + 1:])]):
            vals = []
            for k in range(shape[dim]):
                idx = oi[:dim] + (k,) + oi[dim:]
                v = s.data[s.flat(idx)]
                if v is None:
                    raise InvalidProgram(f"'{s.name}'{list(idx)} is reduced before it is written")
                vals.append(v)
            if op in ("abssum", "absmax"):
                vals = [abs(v) for v in vals]
            out_idx = oi if oi else (0,)
            if op in ("sum", "abssum"):
                # Sums of narrow floats accumulate in f32; the reference sums
                # exactly and rounds once (the order is the implementation's).
                if is_float(st) or is_float(dt):
                    total = math.fsum(float(v) for v in vals)
                    acc_t = "f64" if "f64" in (st, dt) else "f32"
                else:
                    total = sum(vals)
                    acc_t = arith_type(st, dt)
                if not clear:
                    old = d.data[d.flat(out_idx)]
                    if old is None:
                        raise InvalidProgram(f"'{d.name}' is combined (clear = false) before it is written")
                    total = total + old
                value = convert(total, "f64" if is_float(acc_t) else acc_t, dt)
            else:
                m = max(vals) if op in ("max", "absmax") else min(vals)
                if not clear:
                    old = d.data[d.flat(out_idx)]
                    if old is None:
                        raise InvalidProgram(f"'{d.name}' is combined (clear = false) before it is written")
                    m = max(m, old) if op in ("max", "absmax") else min(m, old)
                value = convert(m, st if not clear else st, dt) if is_float(dt) or is_int(dt) else m
            d.data[d.flat(out_idx)] = value

    def scale_factor(self, sf, row, k, granularity, layout, sets=None):
        """gemm_blockscaled's factor for row `row` (of A, or of B as [N, K])
        at K position `k` (k_start included), docs/language.md: four 8-bit
        factors to a uint32 word, byte j the j-th `granularity` elements of
        the word's 4 * granularity; ue4m3 every 16 elements (NVFP4), ue8m0
        every 32 (the MX formats). In tensor memory (tcgen05_cp_warpx4 put
        them there) `sets` is (cpw, W), tmem_word_sets': word number w of row
        r is at lane r % 128, column w * cpw + r // 32, and K position k
        reads word number (k // (4 * granularity)) % W."""
        word_k, byte = k // (4 * granularity), (k // granularity) % 4
        if sf.buf.scope == "tmem":
            cpw, count = sets
            at = (row % 128, (word_k % count) * cpw + row // 32)
        elif layout == "rowmajor":
            at = (row, word_k)
        else:
            # TileLang's blockscaled_chunk_kmajor: a 128-row x 4-word chunk.
            flat = (word_k % 4) * 128 + (row % 32) * 4 + row // 32
            at = divmod(flat, 4)
        if not (0 <= at[0] < sf.extents[0] and 0 <= at[1] < sf.extents[1]):
            raise InvalidProgram(f"gemm_blockscaled reads scale word {list(at)} outside the {sf.extents} region of '{sf.buf.name}'")
        idx = tuple(m + i for m, i in zip(sf.mins, at))
        word = self.read(sf.buf, idx)
        if word is None:
            raise InvalidProgram(f"gemm_blockscaled reads '{sf.buf.name}'{list(idx)} before it is written")
        b = (int(word) >> (8 * byte)) & 0xFF
        return tldtypes.ue4m3_value(b) if granularity == 16 else tldtypes.ue8m0_value(b)

    def gemm(self, a, b, c, ta, tb, clear, scales=None):
        a, b, c = (self.complete(r, []) for r in (a, b, c))
        for r in (a, b, c):
            self.check_inside(r)
        sa, sb, sc = a.tile_shape(), b.tile_shape(), c.tile_shape()
        if len(sa) != 2 or len(sb) != 2 or len(sc) != 2:
            raise InvalidProgram("gemm operands are 2-D tiles")
        m, ka = (sa[1], sa[0]) if ta else (sa[0], sa[1])
        kb, n = (sb[1], sb[0]) if tb else (sb[0], sb[1])
        if ka != kb or sc != [m, n]:
            raise InvalidProgram(f"gemm shapes {sa} {sb} {sc}")
        A = self.gemm_operand(a, ta)
        B = self.gemm_operand(b, tb)
        if scales:
            A, B = self.scaled_operands(a.buf.dtype, A, B, scales)
        self.gemm_accumulate(c, A, B, clear)

    def scaled_operands(self, dtype, A, B, scales):
        """gemm_blockscaled's operands with their factors applied: new rows
        A[m][k] * SFA(m, k) (A as M x K) and B[k][n] * SFB(n, k) (B as
        K x N), `scales` the gemm's (SFA, SFB, k_start, g_a, g_b, layout)
        and `dtype` A's element type (which fixes a tcgen05 k-step)."""
        sfa, sfb, k_start, ga, gb, layout = scales
        sfa, sfb = self.complete(sfa, []), self.complete(sfb, [])
        m, n, ka = len(A), len(B[0]), len(B)
        seta = setb = None
        if sfa.buf.scope == "tmem":
            if m != 128:
                raise InvalidProgram(f"gemm_blockscaled with its scale factors in tensor memory computes 128 rows, not {m}")
            # One tcgen05.mma k-step is 32 fp8 or 64 f4e2m1 elements of K:
            # the gemm starts on a k-step's boundary.
            step = 64 if dtype == "f4e2m1" else 32   # (the unpacked types: kind::mxf8f6f4's 32)
            if k_start < 0 or k_start % step:
                raise InvalidProgram(f"gemm_blockscaled with its scale factors in tensor memory: k_start {k_start} is not "
                                     f"a non-negative multiple of {step} (a k-step of {dtype})")
            seta = self.tmem_word_sets(sfa, m, "SFA")
            setb = self.tmem_word_sets(sfb, n, "SFB")
        A = [[x * self.scale_factor(sfa, i, k_start + k, ga, layout, seta) for k, x in enumerate(row)] for i, row in enumerate(A)]
        sb = [[self.scale_factor(sfb, j, k_start + k, gb, layout, setb) for j in range(n)] for k in range(ka)]
        B = [[x * f for x, f in zip(row, frow)] for row, frow in zip(B, sb)]
        return A, B

    def gemm_operand(self, r, transposed):
        """The values of a gemm operand's 2-D tile as rows of floats: A as
        M x K, B as K x N (the transpose of the tile when it is stored
        transposed)."""
        shape = r.tile_shape()
        rows, cols = (shape[1], shape[0]) if transposed else (shape[0], shape[1])
        out = [[None] * cols for _ in range(rows)]
        for p, idx in enumerate(r.elements()):
            i, j = divmod(p, shape[1])
            v = self.read(r.buf, idx)
            if v is None:
                raise InvalidProgram(f"gemm reads '{r.buf.name}'{list(idx)} before it is written")
            v = float(v)
            if self.tf32_truncate and r.buf.dtype in ("f32", "tf32"):
                v = tldtypes.tf32_truncated(v)
            if transposed:
                out[j][i] = v
            else:
                out[i][j] = v
        return out

    def gemm_accumulate(self, c, A, B, clear):
        """C (+)= A . B, A and B as rows (gemm_operand)."""
        n = len(B[0])
        BT = list(zip(*B))
        ct = c.buf.dtype
        integer = is_int(ct)
        for p, idx in enumerate(c.elements()):
            i, j = divmod(p, n)
            row, colv = A[i], BT[j]
            if integer:
                dot = sum(int(x) * int(y) for x, y in zip(row, colv))
            else:
                dot = math.fsum(x * y for x, y in zip(row, colv))
            if not clear:
                old = self.read(c.buf, idx)
                if old is None:
                    raise InvalidProgram(f"gemm accumulates into '{c.buf.name}'{list(idx)} before it is written")
                dot = dot + old
            # C accumulates in its own dtype; the reference rounds once.
            self.write(c.buf, idx, convert(dot, "int64" if integer else "f64", ct))

    def gemm_2cta(self, a, b, c, ta, tb, clear, scales=None):
        """gemm(..., use_2cta = true), issued by the pair's leader (rank 0)
        of a cluster of 2: one MMA of 2M x N x K whose rows 0..M-1 are block
        0's and M..2M-1 block 1's. Each block h holds its A (M x K) and one
        half of B (K x N/2; block 0 the first N/2 columns); C is M x N in
        tensor memory of each block:
            C(block h) (+)= A(block h) . [B(block 0) | B(block 1)].
        The peer's operands are the same regions of its buffers of the same
        allocations.
        With `scales` (gemm_blockscaled(..., use_2cta = true), TileLang's
        T.tcgen05_gemm_blockscaled(..., use_2cta=True); PTX ISA,
        tcgen05.mma.cta_group::2 block_scale) each block's MMA reads the
        factors in its own tensor memory: SFA of block h for its 128 rows
        and SFB of block h for all N columns of C (TileLang's 2-CTA kernel
        loads block_N SFB words in both blocks), looked up as the 1-CTA
        form does with N = C's N:
            C(h)[m, n] (+)= sum_k A(h)[m, k] SFA(h)(m, k) . Bfull[k, n] SFB(h)(n, k)."""
        op = "gemm_blockscaled with use_2cta" if scales else "gemm with use_2cta"
        if len(self.cluster) != 2:
            raise InvalidProgram(f"{op} in a cluster of {len(self.cluster)} blocks, not 2")
        if self.rank != 0:
            raise InvalidProgram(f"{op} is issued by the leader of the pair (block rank 0), not by block {self.rank}")
        a, b, c = (self.complete(r, []) for r in (a, b, c))
        for r in (a, b, c):
            self.check_inside(r)
        sa, sb, sc = a.tile_shape(), b.tile_shape(), c.tile_shape()
        if len(sa) != 2 or len(sb) != 2 or len(sc) != 2:
            raise InvalidProgram("gemm operands are 2-D tiles")
        m, ka = (sa[1], sa[0]) if ta else (sa[0], sa[1])
        kb, half = (sb[1], sb[0]) if tb else (sb[0], sb[1])
        if ka != kb or sc != [m, 2 * half]:
            raise InvalidProgram(f"{op}: shapes {sa} {sb} {sc}; each block's B holds half of C's N "
                                 f"(A is M x K, B {'N/2 x K' if tb else 'K x N/2'}, C M x N)")
        if scales and m != 128:
            raise InvalidProgram(f"{op}: A and C have {m} rows, not 128 (tcgen05.mma.cta_group::2 block_scale computes "
                                 "128 rows in each block of the pair, M = 256)")
        pair = [(a, b, c), tuple(self.peer_region(r, 1, what, clear, op) for r, what in ((a, "A"), (b, "B"), (c, "C")))]
        halves = [self.gemm_operand(bh, tb) for _, bh, _ in pair]
        B = [r0 + r1 for r0, r1 in zip(*halves)]
        for rank, (ah, _, ch) in enumerate(pair):
            A, Bh = self.gemm_operand(ah, ta), B
            if scales:
                # Block h's own factor buffers: the same regions of its
                # buffers of the same allocations.
                sfa, sfb = (self.peer_region(self.complete(r, []), rank, what, False, op)
                            for r, what in ((scales[0], "SFA"), (scales[1], "SFB")))
                try:
                    A, Bh = self.scaled_operands(a.buf.dtype, A, B, (sfa, sfb) + tuple(scales[2:]))
                except InvalidProgram as e:
                    # Both blocks' buffers have one name: say whose it is.
                    raise InvalidProgram(f"{e} (in block {rank} of the pair)") from None
            self.gemm_accumulate(ch, A, Bh, clear)

    def peer_buffer(self, buf, rank, what, written, op):
        """This block's buffer `buf`, in block `rank` of the cluster: its
        buffer of the same allocation. `written`: the operation only writes
        it (the peer may then not have started, which the interpreter's
        turn-taking cannot model) rather than reads it."""
        if rank == self.rank:
            return buf
        if buf.site is None:
            raise InvalidProgram(f"{op}: {what} '{buf.name}' is not an on-chip buffer of the block")
        peer = self.cluster[rank].allocs.get(buf.site)
        if peer is None:
            # The peer has not started yet: nothing of its can have been written.
            if not written:
                raise InvalidProgram(f"{op} reads '{buf.name}' of block {rank} before anything is written "
                                     f"there (block {rank} has not reached its allocation)")
            raise Unsupported(f"{op} writes '{buf.name}' of block {rank} before block {rank} reaches its "
                              "allocation (the interpreter runs the blocks of a cluster in turn)")
        return peer

    def peer_region(self, r, rank, what, clear, op="gemm with use_2cta"):
        """Region r of this block's buffer, in block `rank` of the cluster:
        the same region of its buffer of the same allocation (C with clear
        is only written)."""
        return Region(self.peer_buffer(r.buf, rank, what, what == "C" and clear, op), r.mins, r.extents)

    @staticmethod
    def tmem_word_sets(sf, rows, what):
        """(cpw, W) of a tensor-memory factor buffer [128, columns] serving
        `rows` rows (M for SFA, N for SFB): a word set (one word of every
        row) takes cpw = ceil(rows / 32) columns, and the buffer holds
        W = columns // cpw of them (K position k reads word set
        (k // (4 g)) % W; W = 1 is the one word of each row at column
        r // 32)."""
        cpw = -(-rows // 32)
        count = sf.extents[1] // cpw
        if count < 1:
            raise InvalidProgram(f"gemm_blockscaled: {what} '{sf.buf.name}' has {sf.extents[1]} columns, too few for the words of "
                                 f"{rows} rows (a word set takes ceil({rows} / 32) = {cpw})")
        return cpw, count

    @staticmethod
    def scale_words(r, what):
        """The multi-indices of a region of scale words that
        tcgen05_sf_warp_transpose and tcgen05_cp_warpx4 take, in row-major
        order: words contiguous in the buffer's row-major storage (every
        dimension after the first of extent > 1 covered whole: min 0, extent
        the buffer's), in rows of a multiple of 128 -- one row SF[stage] of a
        [stages, 128 n] buffer, or SF[stage] / SF[stage, i] of
        [stages, rows, 128 n]. Chunk c is words 128 c .. 128 c + 127."""
        if r.extents is None:
            raise InvalidProgram(f"{what}: the region of '{r.buf.name}' has no extents (index its leading dimensions only, or slice)")
        lead = next((d for d, e in enumerate(r.extents) if e != 1), len(r.extents))
        for d in range(lead + 1, len(r.extents)):
            if r.mins[d] != 0 or r.extents[d] != r.buf.shape[d]:
                raise InvalidProgram(f"{what}: the region of '{r.buf.name}' (from {r.mins}, extents {r.extents}) is not contiguous "
                                     f"in its {r.buf.shape} buffer: dimension {d} is not covered whole, so its words are not "
                                     "consecutive in row-major order")
        count = 1
        for e in r.extents:
            count *= e
        if not r.extents or r.extents[-1] % 128:
            raise InvalidProgram(f"{what}: the region of '{r.buf.name}' has extents {r.extents}, {count} words; "
                                 "its rows are a multiple of 128 words (chunks of 128 rows' words)")
        return list(r.elements())

    def sf_warp_transpose(self, r):
        """TileLang's tcgen05_sf_warp_transpose: in each chunk of 128 words,
        word 4 l + j takes the value word 32 j + l held (l < 32, j < 4). A
        word never written stays unwritten where it moves."""
        self.check_inside(r)
        idx = self.scale_words(r, "tcgen05_sf_warp_transpose")
        old = [self.read(r.buf, i) for i in idx]
        for c in range(0, len(idx), 128):
            for l in range(32):
                for j in range(4):
                    self.write(r.buf, idx[c + 4 * l + j], old[c + 32 * j + l])

    def cp_warpx4(self, r, t, col_offset):
        """tcgen05.cp.32x128b.warpx4: chunk c of 128 words w (a 32-row x
        16-byte tile) goes to the 32 lanes of each of the four lane
        quarters: T[L, col_offset + 4 c + j] = w[4 (L % 32) + j]. A word
        never written stays unwritten."""
        self.check_inside(r)
        idx = self.scale_words(r, "tcgen05_cp_warpx4")
        chunks = len(idx) // 128
        lanes, cols = t.shape
        if col_offset < 0 or col_offset + 4 * chunks > cols:
            raise InvalidProgram(f"tcgen05_cp_warpx4 writes columns {col_offset}..{col_offset + 4 * chunks - 1} "
                                 f"of '{t.name}', which has {cols}")
        for c in range(chunks):
            words = [self.read(r.buf, i) for i in idx[128 * c:128 * (c + 1)]]
            for lane in range(lanes):
                for j in range(4):
                    self.write(t, (lane, col_offset + 4 * c + j), words[4 * (lane % 32) + j])

    def cp_warpx4_pair(self, r, t, col_offset):
        """tcgen05_cp_warpx4(R, T, use_2cta = true), TileLang's: one
        tcgen05.cp.cta_group::2.32x128b.warpx4 issued by the pair's leader
        (rank 0 of a cluster of 2) copies in both blocks of the pair, each
        block's own shared words R into its own tensor memory T at the same
        addresses (PTX ISA, "tcgen05.cp"), in the 1-CTA copy's layout."""
        op = "tcgen05_cp_warpx4 with use_2cta"
        if len(self.cluster) != 2:
            raise InvalidProgram(f"{op} in a cluster of {len(self.cluster)} blocks, not 2 (tcgen05.cp.cta_group::2 copies "
                                 "in both blocks of a CTA pair)")
        if self.rank != 0:
            raise InvalidProgram(f"{op} is issued by the leader of the pair (block rank 0), not by block {self.rank} "
                                 "(as the pair's MMA: TileLang's 2-CTA kernel issues both under block_rank_in_cluster() == 0)")
        for rank in range(2):
            words = self.peer_region(r, rank, "R", False, op)
            self.cp_warpx4(words, self.peer_buffer(t, rank, "T", True, op), col_offset)

    def atomic_add_element(self, buf, idx, v):
        """The add, and the element's value before it (return_prev)."""
        f = buf.flat(idx)
        if f is None:
            if buf.scope == "global":
                return None
            raise InvalidProgram(f"atomic_add outside '{buf.name}'")
        old = buf.data[f]
        if old is None:
            raise InvalidProgram(f"atomic_add to '{buf.name}'{list(idx)} before it is written")
        buf.data[f] = convert(old + v, "f64" if is_float(buf.dtype) else "int64", buf.dtype)
        return old

    def atomic_add_tile(self, dst, src):
        src, dst = self.pair(src, dst, "atomic_add")
        for si, di in zip(src.elements(), dst.elements()):
            v = self.read(src.buf, si)
            if v is None:
                raise InvalidProgram(f"atomic_add reads '{src.buf.name}'{list(si)} before it is written")
            self.atomic_add_element(dst.buf, di, convert(v, src.buf.dtype, dst.buf.dtype))

    def atomic_add_value(self, dst, v):
        if dst.extents is None:
            dst = Region(dst.buf, dst.mins, [1] * len(dst.mins))
        for di in dst.elements():
            self.atomic_add_element(dst.buf, di, v)

    # ---- mbarriers, in program order
    @staticmethod
    def barrier(bars, i):
        if not 0 <= i < len(bars):
            raise InvalidProgram(f"barrier index {i} outside {len(bars)}")
        return bars[i]

    @staticmethod
    def arrive(bar, threads):
        _ARRIVALS[0] += 1
        bar.pending -= threads
        if bar.pending < 0:
            raise InvalidProgram("more arrivals in a phase than its arrive count")
        Runtime.complete_phase(bar)

    @staticmethod
    def complete_phase(bar):
        """A phase completes once all its arrivals and transaction bytes are in."""
        if bar.pending == 0 and bar.tx == 0:
            bar.completed += 1
            bar.pending = bar.count

    @staticmethod
    def transact(bar, nbytes):
        """expect_tx (nbytes > 0) or complete_tx (nbytes < 0) on a barrier."""
        _ARRIVALS[0] += 1
        bar.tx += nbytes
        Runtime.complete_phase(bar)

    def peer_barrier(self, bar, rank, what):
        """Barrier `bar` of this block, in block `rank` of the cluster."""
        if not 0 <= rank < len(self.cluster):
            raise InvalidProgram(f"{what}: block {rank} is outside the cluster of {len(self.cluster)} blocks")
        if rank == self.rank:
            return bar
        if bar.site is None:
            raise Unsupported(f"{what}: a barrier of another block outside a kernel with a cluster")
        peer = self.cluster[rank]
        counts = [b.count for b in self.once[bar.site]]
        return peer.barriers_once(bar.site, counts, bar.cluster)[bar.index]

    def arrive_at(self, bar, rank, threads):
        """barrier_arrive(b, r): each of `threads` arrives once on b of block r."""
        if rank != self.rank and not bar.cluster:
            raise InvalidProgram(f"barrier_arrive on a barrier of block {rank} (this is block {self.rank}): only an "
                                 "alloc_cluster_barrier barrier takes arrivals from other blocks")
        self.arrive(self.peer_barrier(bar, rank, "barrier_arrive"), threads)

    def arrive_pair(self, bar):
        """One arrival on `bar` of both blocks of the pair (a cluster of 2):
        the completion of a 2-CTA gemm, tcgen05_mma_arrive(..., arrive_2cta = true)."""
        if len(self.cluster) != 2:
            raise InvalidProgram(f"an arrival on both blocks of a pair in a cluster of {len(self.cluster)} blocks")
        for rank in range(2):
            self.arrive(self.peer_barrier(bar, rank, "a 2-CTA arrival"), 1)

    def pair_load(self, src, dst, bar):
        """tma_copy(src, dst, barrier = b), b a cluster barrier, in a cluster
        of 2: the tile lands in this block's dst; its bytes complete on b of
        the leader (rank 0), which expects the bytes of both blocks' copies
        (the leader's copy expects twice its own bytes); this block's own b
        (when it is not the leader) gets nothing."""
        if len(self.cluster) != 2:
            raise InvalidProgram(f"a pair load in a cluster of {len(self.cluster)} blocks")
        s, dt = self.pair(src, dst, "tma_copy")
        if s.buf.scope != "global" or dt.buf.scope != "shared":
            raise Unsupported("a tma_copy completing on a cluster barrier that is not a load from global into shared memory")
        self.copy(src, dst)
        nbytes = math.prod(dt.extents) * BITS[dt.buf.dtype] // 8
        leader = self.peer_barrier(bar, 0, "a pair load")
        if self.rank == 0:
            self.transact(leader, 2 * nbytes)
        self.transact(leader, -nbytes)

    def arrive_expect_tx(self, bar, nbytes, threads):
        """barrier_arrive_expect_tx: each of `threads` adds `nbytes` to the
        phase's transaction bytes and arrives."""
        self.transact(bar, nbytes * threads)
        self.arrive(bar, threads)

    def clc_try_cancel(self, answer, bar, multicast):
        """clc_try_cancel[_multicast](answer, b): takes the first cluster of
        the launch order that has neither run nor been taken (it then never
        runs) and answers [1, x, y, z], its first block's index, or [0, 0, 0,
        0] when none is left; the answer lands in this block's `answer` (in
        every block of the cluster, multicast) and completes 16 bytes on the
        block's b."""
        words = self.launch.take()
        for r in (range(len(self.cluster)) if multicast else [self.rank]):
            dst = answer if r == self.rank else self.peer_answer(answer, r)
            base = list(dst.mins)
            for k, w in enumerate(words):
                idx = base[:-1] + [base[-1] + k]
                self.write(dst.buf, idx, w)
            self.transact(self.peer_barrier(bar, r, "clc_try_cancel_multicast"), -16)

    def peer_answer(self, region, rank):
        """The same shared tile in block `rank` of the cluster, made there
        now if that block has not reached its allocation yet."""
        other = self.cluster[rank]
        site = region.buf.site
        buf = other.sites.get(site) or other.early.get(site)
        if buf is None:
            b = region.buf
            buf = Buf(b.name, b.dtype, b.shape, b.scope, rt=other)
            buf.site = site
            other.early[site] = buf
        return Region(buf, region.mins, region.extents)

    def clc_field(self, answer, word):
        idx = list(answer.mins)
        idx[-1] += word
        v = self.read(answer.buf, idx)
        if v is None:
            raise InvalidProgram(f"the cluster-launch-control answer in '{answer.buf.name}' is read before it is written")
        return v

    @staticmethod
    def wait(bar, parity, line):
        # A wait for parity P returns once the number of completed phases
        # has the other parity (docs/language.md section 11).
        if bar.completed % 2 == parity:
            raise Unsupported(f"the barrier_wait at line {line} does not return in program order")

    def remote_arrive(self, bar, rank):
        raise Unsupported("remote_barrier")

    # ---- clusters
    def cluster_post(self, tag, src):
        self.posted.setdefault(tag, []).append(src)

    def multicast(self, src, dst, mask, tag):
        """Every block of `mask` receives the tile its lowest block loads
        (docs/language.md section 9); the others load their own."""
        leader = (mask & -mask).bit_length() - 1
        if (mask >> self.rank) & 1:
            n = self.consumed.get(tag, 0)
            self.consumed[tag] = n + 1
            src = self.cluster[leader].posted[tag][n]
        self.copy(src, dst)

    def remote(self, dst, rank):
        if not 0 <= rank < len(self.cluster):
            raise InvalidProgram(f"dst_block {rank} outside the cluster")
        other = self.cluster[rank]
        for site, b in self.sites.items():
            if b is dst.buf:
                if site not in other.sites:
                    raise Unsupported("dst_block copy into a buffer the peer has not allocated yet")
                return Region(other.sites[site], dst.mins, dst.extents)
        raise InvalidProgram("dst_block copies into shared memory")


# ------------------------------------------------------------------ the interpreter

class Interpreter:
    def __init__(self, dump_text, source_text):
        self.source_lines = source_text.splitlines()
        self.tree = parse_dump(dump_text)
        self.tf32_truncate = False   # f32 gemm operands read as tf32 (difftest's tf32.truncate)
        self.consts = {}
        self.kernels = {}
        self.target = None
        self.dtypes = {}   # dtype constants: name -> dtype
        self.fns = {}      # fn name -> its node (FnParam kids, then the body)
        for c in self.tree.kids:
            if c.kind == "Const":
                self.resolve_dtypes(c)
                name = c.text.partition(": ")[0]
                if c.kids and c.kids[0].kind == "DType":
                    self.dtypes[name] = c.kids[0].text   # const dt = f16;
                else:
                    self.const(c)
            elif c.kind == "Target":
                self.target = c.text
        for c in self.tree.kids:
            if c.kind == "Fn":
                self.resolve_dtypes(c)
                self.fns[c.text] = c
            if c.kind == "Kernel":
                self.resolve_dtypes(c)
                self.kernels[c.text] = c
        self._compiled = {}

    def resolve_dtypes(self, node):
        """Names of dtype constants become the dtypes they name: in type
        annotations (`Param A: dt`, `Var x: dt`, `Const c: dt`) and where an
        expression names a dtype (alloc_*, cast)."""
        if node.kind == "Name" and node.text in self.dtypes:
            node.kind, node.text = "DType", self.dtypes[node.text]
        elif node.kind in ("Param", "Var", "Const") and ": " in node.text:
            name, _, rest = node.text.partition(": ")
            ty, sep, tail = rest.partition(" ")
            node.text = f"{name}: {self.dtypes.get(ty, ty)}{sep}{tail}"
        for k in node.kids:
            self.resolve_dtypes(k)

    def const(self, c):
        name, _, ty = c.text.partition(": ")
        t = KernelTranslator(self, Node("Kernel", "", 0, 0))
        t.scopes = [self.consts]
        v = t.expr(c.kids[0])
        if v.const is None:
            raise Unsupported(f"constant '{name}' is not constant")
        if ty:
            self.consts[name] = Sym("const", ty=ty, const=convert(v.const, "f64" if isinstance(v.const, float) else
                                                                   ("bool" if isinstance(v.const, bool) else "int64"), ty))
        else:
            self.consts[name] = Sym("const", ty=v.ty, const=v.const)

    def compile(self, name):
        if name not in self._compiled:
            t = KernelTranslator(self, self.kernels[name])
            src = t.translate()
            env = dict(RUNTIME_GLOBALS)
            exec(compile(src, f"<tl kernel {name}>", "exec"), env)
            self._compiled[name] = (t, env["block"], src)
        return self._compiled[name]

    def signature(self, name):
        """[(name, 'tensor'|'scalar', dtype, dims)], [dynamic dimension names]"""
        t, _, _ = self.compile(name)
        return t.params, t.dyn

    def shape_of(self, name, param, dyn):
        t, _, _ = self.compile(name)
        for p in t.params:
            if p[0] == param:
                return [self._dim(d, dyn) for d in p[3]]
        raise KeyError(param)

    @staticmethod
    def _dim(d, dyn):
        kind, v = d
        if kind == "const":
            return v
        if kind == "dyn":
            return dyn[v]
        return eval(v, dict(RUNTIME_GLOBALS), {"n_" + k: x for k, x in dyn.items()})

    def run(self, name, tensors, scalars, dyn):
        """Runs kernel `name` on `tensors` (param -> list of values, updated
        in place), `scalars` (param -> value) and `dyn` (dimension -> int)."""
        t, block, _ = self.compile(name)
        env = {"n_" + k: v for k, v in dyn.items()}
        ev = KernelTranslator(self, self.kernels[name])
        ev.scopes = [dict(self.consts)]
        for d in t.dyn:
            ev.define(d, Sym("value", "n_" + d, "int32"))
        # The grid may be sized by scalar parameters too (max_seqlen_q of a varlen attention).
        for pname, kind, dtype, _ in t.params:
            if kind == "scalar" and pname in scalars:
                ev.define(pname, Sym("value", "n_" + pname, dtype))
                env["n_" + pname] = scalars[pname]
        grid = [eval(ev.integer(g).code, dict(RUNTIME_GLOBALS), env) for g in t.grid]
        grid += [1] * (3 - len(grid))
        cl = [ev.static_int(c) for c in t.cluster] + [1] * (3 - len(t.cluster))
        if any(g % c for g, c in zip(grid, cl)):
            raise InvalidProgram("the grid is not made of whole clusters")
        bufs = {}
        args = []
        for pname, kind, dtype, dims in t.params:
            if kind == "tensor":
                shape = [self._dim(d, dyn) for d in dims]
                b = Buf(pname, dtype, shape, "global", tensors[pname])
                bufs[pname] = b
                args.append(b)
            else:
                args.append(convert(scalars[pname], dtype if not is_float(dtype) else "f64", dtype))
        args += [dyn[d] for d in t.dyn]
        size = cl[0] * cl[1] * cl[2]
        launch = LaunchOrder([(cx, cy, cz) for cz in range(0, grid[2], cl[2]) for cy in range(0, grid[1], cl[1]) for cx in range(0, grid[0], cl[0])])
        for at, (cx, cy, cz) in enumerate(launch.origins):
                    if at in launch.taken:
                        continue   # canceled by a clc_try_cancel: the cluster that took it did its work
                    launch.running = at
                    rts = []
                    gens = []
                    for r in range(size):
                        rt = Runtime(rts)
                        rt.tf32_truncate = self.tf32_truncate
                        rt.rank = r
                        bid = (cx + r % cl[0], cy + (r // cl[0]) % cl[1], cz + r // (cl[0] * cl[1]))
                        rt.block_id = bid
                        rt.launch = launch
                        rts.append(rt)
                    for b in bufs.values():
                        b.rt = None
                    for r, rt in enumerate(rts):
                        gens.append(block(rt, *rt.block_id, *args))
                    self._run_cluster(rts, gens, bufs)
        return bufs

    @staticmethod
    def _run_cluster(rts, gens, bufs):
        """The blocks of a cluster run as coroutines: each up to its next
        cluster-wide meeting point (cluster_sync, a multicast), where it
        waits for the others -- all must reach the same one -- or up to a
        barrier_wait whose phase has not completed (it yields WAIT), when the
        next block runs. A round in which no block gets anywhere (no arrival,
        none reaching a meeting point or its end) is a deadlock."""
        n = len(gens)
        state = [None] * n      # None: runs; a tag: at that meeting point; True: done
        while True:
            arrivals, moved = _ARRIVALS[0], False
            for r in range(n):
                if state[r] is not None:
                    continue
                for b in bufs.values():
                    b.rt = rts[r]
                try:
                    v = next(gens[r])
                except StopIteration:
                    state[r], moved = True, True
                    continue
                if v != WAIT:
                    state[r], moved = v, True
            if all(x is True for x in state):
                return
            if all(x is not None for x in state):
                # Every block is at a meeting point or done: they meet, or
                # they reached different ones.
                if len(set(state)) != 1:
                    raise InvalidProgram("the blocks of a cluster do not meet at the same cluster_sync")
                state = [None] * n
                continue
            if not moved and _ARRIVALS[0] == arrivals:
                raise InvalidProgram("the blocks of the cluster deadlock: each waits for a barrier phase that never "
                                     "completes" + (", or for a cluster_sync another block does not reach"
                                                    if any(x not in (None, True) for x in state) else ""))
