// PhaseTimes.cpp -- wall time per translation phase, for --time-report.
#include "support/PhaseTimes.h"

#include <cstdio>
#include <ostream>

namespace tilet {

void PhaseTimes::add(const std::string &name, Clock::time_point start) {
    double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    for (Phase &p : phases_) {
        if (p.name != name) continue;
        p.ms += ms;
        ++p.count;
        return;
    }
    phases_.push_back({name, ms, 1});
}

void PhaseTimes::print(std::ostream &os) const {
    double total = 0;
    for (const Phase &p : phases_) total += p.ms;
    char line[160];
    os << "tilet: time report (wall clock, ms)\n";
    for (const Phase &p : phases_) {
        std::snprintf(line, sizeof line, "  %-30s %9.3f %5.1f%%%s\n", p.name.c_str(), p.ms, total > 0 ? 100 * p.ms / total : 0.0,
                      p.count > 1 ? (" (" + std::to_string(p.count) + " runs)").c_str() : "");
        os << line;
    }
    std::snprintf(line, sizeof line, "  %-30s %9.3f\n", "total", total);
    os << line;
}

} // namespace tilet
