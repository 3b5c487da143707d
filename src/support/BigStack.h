// BigStack.h -- runs a function on a thread with a stack of a given size.
//
// Every stage of tilet recurses over trees whose depth the input decides.
// The front end bounds that depth (--max-nesting, frontend/Structure.h), and
// the translation runs on a thread whose stack is sized for the bound, so
// neither the 8 MiB default of the main thread nor the larger frames of a
// sanitizer build decide where tilet crashes: the limit is a diagnostic.
#pragma once

#include <cstddef>
#include <functional>

namespace tilet {

// Runs `fn` on a new thread with a stack of `bytes` and returns its result;
// an exception thrown by `fn` is rethrown here. If no such thread can be
// created (a tight address-space limit), runs `fn` on the calling thread.
int runWithStack(size_t bytes, const std::function<int()> &fn);

} // namespace tilet
