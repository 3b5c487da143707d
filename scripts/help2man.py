#!/usr/bin/env python3
"""Writes the tilet(1) man page from `tilet --help`, so the two never differ.

usage: help2man.py TILET OUT.1 VERSION
"""
import subprocess
import sys

tilet, out, version = sys.argv[1:4]
text = subprocess.run([tilet, "--help"], capture_output=True, text=True, check=True).stdout


def roff(s):
    # Backslashes first, then what roff would take as requests or escapes.
    s = s.replace("\\", "\\e").replace("-", "\\-")
    return "\\&" + s if s.startswith((".", "'")) else s


lines = text.splitlines()
summary = lines[0].split(" -- ", 1)[-1] if lines else "tile-language translator"
page = [f'.TH TILET 1 "" "tilet {version}" "User Commands"', ".SH NAME", f"tilet \\- {roff(summary)}", ".SH SYNOPSIS",
        ".B tilet", "[\\fIOPTIONS\\fR] \\fIinput\\fR", ".SH DESCRIPTION", roff(lines[0]) if lines else ""]
section = None
# CLI11 puts the text of an option too long for its column on the next line,
# indented: join it to its option first, so each option is one paragraph.
joined = []
for line in lines[1:]:
    stripped = line.strip()
    prev = joined[-1].strip() if joined else ""
    if line.startswith("          ") and not stripped.startswith("-") and prev.startswith("-") and "  " not in prev:
        joined[-1] = joined[-1] + "  " + stripped
    else:
        joined.append(line)
for line in joined:
    stripped = line.strip()
    if not stripped or stripped.startswith("Usage:"):
        continue
    if stripped in ("Positionals:", "Options:", "Examples:"):
        section = stripped[:-1].upper()
        page.append(".SH " + section)
        continue
    if line.startswith("  ") and section in ("POSITIONALS", "OPTIONS"):
        # "  -o,--output TEXT   text": the option in bold, the text indented.
        parts = stripped.split("  ", 1)
        if len(parts) == 2 and stripped.startswith("-") or (section == "POSITIONALS" and len(parts) == 2):
            page += [".TP", "\\fB" + roff(parts[0].strip()) + "\\fR", roff(parts[1].strip())]
        else:
            page.append(roff(stripped))
    elif section == "EXAMPLES" and line.startswith("  "):
        page += [".nf", roff(stripped), ".fi"]
    else:
        page += [".PP", roff(stripped)]
page += [".SH SEE ALSO", "nvcc(1); the documentation in docs/ of the tilet sources."]
with open(out, "w") as f:
    f.write("\n".join(page) + "\n")
