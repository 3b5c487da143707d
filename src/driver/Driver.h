// Driver.h -- one run of tilet: read, check, lower, print, write.
#pragma once

#include "driver/Options.h"

namespace tilet {

// Returns the exit status: 0 success, 1 user error, 70 internal error.
int runTilet(const Options &options);

} // namespace tilet
