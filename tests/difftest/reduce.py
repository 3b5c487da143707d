"""Delta reduction of a failing program (ddmin over statements, then
unwrapping of loops and branches), keeping it valid and failing the same way.

A statement is a line of the kernel body, or a line ending in '{' together
with everything up to its matching '}' (an if with its else). Candidates of
one round are tested together -- one tilet run each and, for failures seen
only when running the code, one g++ compile for the whole round -- and the
smallest that still fails the same way is kept.
"""
import os

import difftest


def body_bounds(lines):
    """Indices of the kernel body's first line and of its closing '}'."""
    # The body opens on a line of its own, or at the end of the kernel's
    # header (`kernel k(...) grid(1) threads(128) {`).
    start = next(i for i, l in enumerate(lines)
                 if l.strip() == "{" or (l.lstrip().startswith("kernel ") and l.rstrip().endswith("{"))) + 1
    end = max(i for i, l in enumerate(lines) if l.strip() == "}")
    return start, end


def statements(lines):
    """[(first, last)] line ranges of every statement, at every depth."""
    start, end = body_bounds(lines)
    out, stack = [], []
    for i in range(start, end):
        s = lines[i].strip()
        if not s or s.startswith("//"):
            continue
        if s.startswith("}"):
            if s.endswith("{"):      # } else {
                continue
            first = stack.pop()
            out.append((first, i))
            continue
        if s.endswith("{"):
            stack.append(i)
        else:
            out.append((i, i))
    return sorted(out)


def top_units(lines, units):
    """Statements not inside another statement of the list."""
    res, last = [], -1
    for a, b in units:
        if a > last:
            res.append((a, b))
            last = b
    return res


def without(lines, ranges):
    drop = set()
    for a, b in ranges:
        drop.update(range(a, b + 1))
    return [l for i, l in enumerate(lines) if i not in drop]


def unwrap_candidates(lines):
    """Each loop or branch replaced by its body (each branch of an if)."""
    out = []
    for a, b in statements(lines):
        if a == b:
            continue
        head = lines[a].strip()
        inner = lines[a + 1:b]
        depth, split = 0, None
        for k, l in enumerate(inner):
            s = l.strip()
            if s.startswith("}") and s.endswith("{") and depth == 0:
                split = k
            depth += s.count("{") - s.count("}") if not (s.startswith("}") and s.endswith("{")) else 0
        bodies = [inner] if split is None else [inner[:split], inner[split + 1:]]
        if head.startswith("if") and split is not None:
            out.append(lines[:a] + inner[:split] + [lines[b]] + lines[b + 1:])   # drop the else part
        for body in bodies:
            dedented = [l[4:] if l.startswith("    ") else l for l in body]
            out.append(lines[:a] + dedented + lines[b + 1:])
    return out


def reduce(case, tilet, work, max_rounds=60, timeout=20, log=None):
    os.makedirs(work, exist_ok=True)
    lines = case.text.splitlines()
    counter = [0]

    def interesting(cands):
        if not cands:
            return []
        cs = []
        for text in cands:
            counter[0] += 1
            c = difftest.Case(counter[0], "\n".join(text) + "\n", case.arch, case.kernel, case.scalars, case.dyn, case.seed)
            cs.append(c)
        emulate = case.outcome not in ("reject", "internal", "crash")
        difftest.run_cases(cs, tilet, work, jobs=2, batch_size=max(1, (len(cs) + 1) // 2), timeout=timeout, emulate=emulate)
        if log:
            log(f"reduce: {len(cs)} candidates: " + ", ".join(sorted(set(str(c.outcome) for c in cs))))
        return [text for text, c in zip(cands, cs) if same_failure(case, c)]

    n = 2
    for _ in range(max_rounds):
        units = top_units(lines, statements(lines))
        # Statements at every depth, in chunks of the current granularity.
        allu = statements(lines)
        chunk = max(1, len(allu) // n)
        cands = []
        for k in range(0, len(allu), chunk):
            group = top_units(lines, allu[k:k + chunk])
            cands.append(without(lines, group))
        good = interesting(cands)
        if good:
            lines = min(good, key=len)
            n = max(2, n - 1)
            continue
        if chunk == 1:
            good = interesting(unwrap_candidates(lines))
            if good:
                lines = min(good, key=len)
                continue
            break
        n = min(n * 2, len(allu))
    return "\n".join(lines) + "\n"


def same_failure(orig, c):
    if c.outcome != orig.outcome:
        return False
    if orig.outcome in ("reject", "internal", "crash"):
        # The same message, wherever it now points.
        def msg(d):
            first = d.strip().splitlines()[0] if d.strip() else ""
            return first.split(": ", 2)[-1] if ": " in first else first
        return msg(orig.detail).split("'")[0] == msg(c.detail).split("'")[0]
    return True
