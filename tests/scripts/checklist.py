"""The bookkeeping the test scripts share: expect() records a check and its
failure, finish() prints the failures and the count and exits 1 if any."""
import sys

failures = []
counted = [0]


def expect(cond, what, detail=""):
    counted[0] += 1
    if not cond:
        failures.append(what + ("\n  " + detail[-3000:] if detail else ""))


def finish(name):
    for f in failures:
        print("FAIL " + f)
    print(f"{name}: {counted[0]} check(s), {len(failures)} failure(s)")
    sys.exit(1 if failures else 0)
