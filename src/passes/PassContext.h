// PassContext.h -- what every pass receives besides the kernel: the target,
// where to report user errors, and where to record decisions.
#pragma once

#include "passes/Explain.h"
#include "support/Diagnostics.h"
#include "target/Target.h"

namespace tilet {

struct PassContext {
    const Target &target;
    DiagnosticEngine &diags;
    Explain &explain;
};

} // namespace tilet
