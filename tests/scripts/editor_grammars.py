#!/usr/bin/env python3
"""The editor grammars against the language.

usage: editor_grammars.py drift SOURCE_ROOT
       editor_grammars.py vim SOURCE_ROOT       (headless vim -es)
       editor_grammars.py vscode SOURCE_ROOT    (vscode-tmgrammar-test from scripts/setup)

drift: every keyword and builtin of grammar/Tile.g4 is highlighted by both
the TextMate grammar (editors/vscode) and the Vim syntax (editors/vim), so
neither can fall behind the language. vim: the highlight group Vim gives
chosen tokens of a sample, with *.tl detected as tile (not Teal). vscode:
the grammar's own test files (editors/vscode/tests/*.tl).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklist import expect, finish  # noqa: E402

mode, ROOT = sys.argv[1], os.path.abspath(sys.argv[2])


def grammar_words():
    """Keyword tokens of the ANTLR grammar: NAME : 'word'; with a word literal."""
    with open(os.path.join(ROOT, "grammar", "Tile.g4")) as f:
        return re.findall(r"^[A-Z_0-9]+\s*:\s*'([a-z_][a-z0-9_]*)';", f.read(), re.M)


if mode == "drift":
    words = grammar_words()
    expect(len(words) > 80, f"the grammar's keywords are found ({len(words)})")
    with open(os.path.join(ROOT, "editors", "vscode", "syntaxes", "tile.tmLanguage.json")) as f:
        tm = json.load(f)
    alternations = set()
    for pattern in tm["repository"]["keywords"]["patterns"]:
        m = re.fullmatch(r"\\b\((.*)\)\\b", pattern["match"])
        if m:
            alternations.update(m.group(1).split("|"))
    with open(os.path.join(ROOT, "editors", "vim", "syntax", "tile.vim")) as f:
        vim_words = set()
        for line in f:
            if line.startswith("syntax keyword "):
                vim_words.update(line.split()[3:])
    missing_tm = [w for w in words if w not in alternations]
    missing_vim = [w for w in words if w not in vim_words]
    expect(not missing_tm, "every keyword and builtin is highlighted by the TextMate grammar", " ".join(missing_tm))
    expect(not missing_vim, "every keyword and builtin is highlighted by the Vim syntax", " ".join(missing_vim))

elif mode == "vim":
    vim = shutil.which("vim")
    if not vim:
        print("editor_grammars: vim missing, skipped")
        sys.exit(77)
    sample = """kernel scale(X: f32[64]) grid(1) threads(64) {
    // a comment
    let s = alloc_shared([64], f32);
    copy(X, s, prefer = tma);
    for i in parallel(64) { X[i] = exp2(s[i] * 0.5) + 0x10; }
    barrier_wait(b, 0);
    let row = col + sync;
    set_max_nreg(24, dec);
}
"""
    # (line, column, expected group), 1-based.
    want = [(1, 1, "tileKeyword"), (1, 8, "tileKernelName"), (1, 14, "tileParameter"), (1, 17, "tileType"),
            (2, 5, "tileComment"), (3, 13, "tileMemory"), (3, 27, "tileNumber"), (4, 5, "tileOp"), (4, 25, "tileHint"),
            (5, 5, "tileKeyword"), (5, 14, "tileLoop"), (5, 36, "tileBuiltin"), (5, 48, "tileFloat"), (5, 55, "tileNumber"),
            (6, 5, "tileSync"), (7, 9, ""), (7, 15, ""), (7, 21, ""), (8, 22, "tileHint")]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "sample.tl")
        with open(path, "w") as f:
            f.write(sample)
        out = os.path.join(tmp, "groups.txt")
        script = os.path.join(tmp, "probe.vim")
        with open(script, "w") as f:
            f.write("let g:out = [&filetype]\n")
            for l, c, _ in want:
                f.write(f"call add(g:out, synIDattr(synID({l}, {c}, 1), 'name'))\n")
            f.write(f"call writefile(g:out, '{out}')\nqa!\n")
        p = subprocess.run([vim, "-es", "-N", "-u", "NONE", "-i", "NONE", "--cmd", f"set rtp^={ROOT}/editors/vim",
                            "-c", "filetype on", "-c", "syntax on", "-c", f"edit {path}", "-c", f"source {script}"],
                           capture_output=True, text=True, timeout=60)
        got = open(out).read().splitlines() if os.path.exists(out) else []
        expect(got[:1] == ["tile"], "ftdetect makes *.tl tile, not Teal", f"{got[:1]} {p.stderr[-500:]}")
        for (l, c, group), actual in zip(want, got[1:]):
            expect(actual == group, f"line {l} column {c} is {group}", f"vim says {actual!r}")
        expect(len(got) == len(want) + 1, "vim answered for every probe", p.stdout[-500:] + p.stderr[-500:])

elif mode == "vscode":
    tool = os.path.join(ROOT, ".tools", "node_modules", ".bin", "vscode-tmgrammar-test")
    if not os.path.exists(tool):
        print(f"FAIL {tool} is missing: scripts/setup installs it (npm)")
        sys.exit(1)
    p = subprocess.run([tool, "-g", os.path.join(ROOT, "editors", "vscode", "syntaxes", "tile.tmLanguage.json"),
                        os.path.join(ROOT, "editors", "vscode", "tests", "*.tl")], capture_output=True, text=True, timeout=120)
    print(p.stdout[-3000:])
    expect(p.returncode == 0, "vscode-tmgrammar-test accepts every assertion in editors/vscode/tests", p.stderr[-2000:])

finish(f"editor_grammars {mode}")
