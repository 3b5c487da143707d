#include "passes/Explain.h"

#include <algorithm>
#include <cstdio>
#include <ostream>

namespace tilet {

namespace {

std::vector<const Decision *> sorted(const std::vector<Decision> &all) {
    std::vector<const Decision *> out;
    for (const Decision &d : all) out.push_back(&d);
    std::stable_sort(out.begin(), out.end(), [](const Decision *a, const Decision *b) {
        const SourceLoc &x = a->where.begin, &y = b->where.begin;
        if (x.file != y.file) return x.file < y.file;
        if (x.line != y.line) return x.line < y.line;
        return x.col < y.col;
    });
    return out;
}


} // namespace

void Explain::record(Decision d) {
    auto same = [&](const Decision &x) {
        if (x.where.begin.line != d.where.begin.line || x.where.begin.col != d.where.begin.col || x.op != d.op || x.choice != d.choice ||
            x.why != d.why || x.details != d.details || x.rejected.size() != d.rejected.size())
            return false;
        for (size_t i = 0; i < x.rejected.size(); ++i) {
            if (x.rejected[i].option != d.rejected[i].option || x.rejected[i].reason != d.rejected[i].reason) return false;
        }
        return true;
    };
    for (const Decision &x : decisions_) {
        if (same(x)) return;
    }
    decisions_.push_back(std::move(d));
}

void Explain::breakPromise(const std::string &promised, SourceRange inside, const std::vector<SourceRange> &issued, const std::string &why) {
    for (Decision &d : decisions_) {
        if (d.promises != promised || !d.where.contains(inside.begin)) continue;
        if (std::any_of(issued.begin(), issued.end(), [&](const SourceRange &r) { return d.where.contains(r.begin); })) continue;
        d.rejected.insert(d.rejected.begin(), Rejected{promised, why});
        d.choice = d.otherwise;
        d.why.clear();
        d.promises.clear();
    }
}

void Explain::printRemarks(DiagnosticEngine &diags, const std::string &target) const {
    for (const Decision *d : sorted(decisions_)) {
        std::string text = (target.empty() ? "" : "[" + target + "] ") + d->op + ": " + d->choice;
        if (!d->why.empty()) text += " (" + d->why + ")";
        Diagnostic diag{Severity::Remark, d->where, text, {}, {}};
        for (const std::string &detail : d->details) diag.note(d->where, detail);
        for (const Rejected &r : d->rejected) diag.note(d->where, r.option + " rejected: " + r.reason);
        for (Diagnostic &n : diag.notes) n.showSource = false;
        diags.report(std::move(diag));
    }
}

void Explain::printJson(const SourceManager &sources, std::ostream &out, const std::string &target) const {
    for (const Decision *d : sorted(decisions_)) {
        out << "{";
        if (!target.empty()) out << "\"target\":" << jsonString(target) << ",";
        out << "\"file\":" << jsonString(d->where.valid() ? sources.name(d->where.begin.file) : "")
            << ",\"line\":" << d->where.begin.line << ",\"column\":" << d->where.begin.col
            << ",\"op\":" << jsonString(d->op) << ",\"choice\":" << jsonString(d->choice)
            << ",\"why\":" << jsonString(d->why) << ",\"details\":[";
        for (size_t i = 0; i < d->details.size(); ++i) out << (i ? "," : "") << jsonString(d->details[i]);
        out << "],\"rejected\":[";
        for (size_t i = 0; i < d->rejected.size(); ++i)
            out << (i ? "," : "") << "{\"option\":" << jsonString(d->rejected[i].option)
                << ",\"reason\":" << jsonString(d->rejected[i].reason) << "}";
        out << "]}\n";
    }
}

} // namespace tilet
