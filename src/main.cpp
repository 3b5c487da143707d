// main.cpp -- `tilet`: parse the command line, run, and map anything
// unexpected to an internal error (never an abort, never blamed on the user).
#include "driver/Driver.h"
#include "support/BigStack.h"
#include "support/InternalError.h"

#include <exception>
#include <iostream>

int main(int argc, char **argv) {
    try {
        tilet::ParseResult parsed = tilet::parseCommandLine(argc, argv);
        if (!parsed.options) return parsed.exitCode;
        const tilet::Options &options = *parsed.options;
        return tilet::runWithStack(tilet::translationStackBytes(options.maxNesting), [&] { return tilet::runTilet(options); });
    } catch (const std::bad_alloc &) {
        std::cerr << "tilet: error: out of memory\n";
        return 1;
    } catch (const std::exception &e) {
        std::cerr << "tilet: internal compiler error: unexpected exception: " << e.what()
                  << "\nplease report this with the input file; it is a bug in tilet, not in the input\n";
        return tilet::kInternalErrorExitCode;
    }
}
