// The race detector's own tests: runs one kernel of racecheck_kernels.cu.in
// (tests/scripts/racecheck_unit.py checks the reports against the kernel's
// "racecheck:" lines).
extern "C" int racecheck_run(const char *name);

int main(int argc, char **argv) { return argc == 2 ? racecheck_run(argv[1]) : 2; }
