// PhaseTimes.h -- wall time per translation phase, for --time-report.
//
// A user who finds a translation slow (or a developer chasing the 3 ms goal
// of scripts/bench-translate) asks where the time goes, as clang's
// -ftime-report answers: start-up, parsing, analysis, each pass, printing,
// writing. Phases of the same name add up (one entry per pass, whatever the
// number of kernels).
#pragma once

#include <chrono>
#include <iosfwd>
#include <string>
#include <vector>

namespace tilet {

class PhaseTimes {
public:
    using Clock = std::chrono::steady_clock;

    // Adds the time since `start` to the phase `name`.
    void add(const std::string &name, Clock::time_point start);

    // One line per phase in first-seen order, then the total, in milliseconds.
    void print(std::ostream &os) const;

private:
    struct Phase {
        std::string name;
        double ms = 0;
        unsigned count = 0;
    };
    std::vector<Phase> phases_;
};

// Times the enclosing scope as one phase; does nothing with no PhaseTimes.
class PhaseScope {
public:
    PhaseScope(PhaseTimes *times, std::string name) : times_(times), name_(std::move(name)), start_(PhaseTimes::Clock::now()) {}
    ~PhaseScope() {
        if (times_) times_->add(name_, start_);
    }
    PhaseScope(const PhaseScope &) = delete;
    PhaseScope &operator=(const PhaseScope &) = delete;

private:
    PhaseTimes *times_;
    std::string name_;
    PhaseTimes::Clock::time_point start_;
};

} // namespace tilet
