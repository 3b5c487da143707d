// Driver.h -- one run of tilet: read, check, lower, print, write.
#pragma once

#include "driver/Options.h"

namespace tilet {

// The whole command: parse the command line, run runTilet on a thread with
// the stack it needs, and map anything unexpected to an internal error
// (never an abort, never blamed on the user). Returns the exit status.
int tiletMain(int argc, char **argv);

// Returns the exit status: 0 success, 1 user error, 70 internal error.
int runTilet(const Options &options);

// The stack runTilet needs when the input nests `maxNesting` levels deep
// (main.cpp runs it on a thread with this stack, support/BigStack.h).
size_t translationStackBytes(unsigned maxNesting);

} // namespace tilet
