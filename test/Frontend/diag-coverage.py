#!/usr/bin/env python3
"""Every user-facing error and warning site of the frontend and tilec has a
test.

Finds each diags.error / diags.warning / error / fail call in lib/Frontend
and tools/tilec, takes the longest literal piece of its message, and looks
for it in the test files. Sites listed in EXEMPT are known: unreachable from source, a
compiler bug by design, or (said so) not yet tested. Prints the count; exits 1 naming any other site with
no test, so a new error without a test fails the suite.
  diag-coverage.py ROOT
"""
import glob
import os
import re
import sys

root = sys.argv[1]
# Fragment -> why it has no test.
EXEMPT = {
    "internal compiler error: the generated tile IR does not":
        "a verifier failure after generation is a compiler bug",
    "blocks nested too deeply":
        "every block follows a condition or range, whose expression reaches "
        "the depth limit first",
    "a slice 'a : b' is only allowed as a tensor index":
        "the parser accepts slices only inside [...]",
    "unsupported operator": "every operator the parser builds is handled",
    "invalid operand to": "unary operators meet only values the checks before "
                          "it let through",
    "out of host memory running the kernel in the interpreter;":
        "reaching it takes most of the host's memory, too much for CI",
    # Not yet tested: no program found to reach them (they may be unreachable).
    "expected a value": "not yet tested",
    "a bool cannot combine with": "not yet tested",
    "store of a": "not yet tested",
    "expected a type, found": "not yet tested",
}
sources = glob.glob(os.path.join(root, "lib/Frontend/**/*.cpp"), recursive=True)
sources.append(os.path.join(root, "tools/tilec/tilec.cpp"))
tests = ""
for path in glob.glob(os.path.join(root, "test/**/*"), recursive=True):
    if os.path.isfile(path) and not path.endswith(".py"):
        tests += open(path, errors="replace").read()
sites, missing = 0, []
for path in sorted(sources):
    text = open(path).read()
    for call in re.finditer(r"(?:diags\.error|diags\.errorNoLoc|diags\.warning|\berror|\bfail)\s*\(", text):
        literal = re.search(r'"((?:[^"\\]|\\.)*)"', text[call.end():call.end() + 400])
        if not literal:
            continue
        pieces = [p.strip() for p in re.split(r"\\.", literal.group(1)) if len(p.strip()) >= 6]
        key = max(pieces, key=len) if pieces else literal.group(1)
        sites += 1
        if key in tests or key in EXEMPT:
            continue
        line = text[:call.start()].count("\n") + 1
        missing.append("%s:%d: %s" % (os.path.relpath(path, root), line, key))
print("error and warning sites: %d, exempt: %d, without a test: %d" % (sites, len(EXEMPT), len(missing)))
for m in missing:
    print("no test: " + m)
sys.exit(1 if missing else 0)
