// main.cpp -- `tilet`: everything is in tiletMain (driver/Driver.h), which
// the fuzzer's fork server (tests/fuzz/fork_server.cpp) calls too.
#include "driver/Driver.h"

int main(int argc, char **argv) { return tilet::tiletMain(argc, argv); }
