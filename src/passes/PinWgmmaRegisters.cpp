// PinWgmmaRegisters.cpp -- see PinWgmmaRegisters.h.
#include "passes/PinWgmmaRegisters.h"

#include "ir/Visitor.h"

#include <algorithm>

namespace tilet {

namespace {

using ir::Buffer;
using ir::Stmt;

// The register operands of the wgmmas in `s` -- each accumulator, and A
// where it is read from registers -- in program order, once each.
void accumulatorsIn(const Stmt &s, std::vector<Buffer> &out) {
    auto add = [&](const Buffer &b) {
        if (std::find(out.begin(), out.end(), b) == out.end()) out.push_back(b);
    };
    ir::forEachStmt(s, [&](const Stmt &x) {
        if (const ir::Wgmma *w = ir::as<ir::Wgmma>(x)) {
            add(w->d);
            if (w->a.buffer->scope != ir::MemScope::Shared) add(w->a.buffer);
        }
    });
}

bool commits(const Stmt &s) {
    bool found = false;
    ir::forEachStmt(s, [&](const Stmt &x) {
        if (const ir::WgmmaSync *w = ir::as<ir::WgmmaSync>(x); w && w->sync == ir::WgmmaSyncKind::Commit) found = true;
    });
    return found;
}

class Pinner : public ir::Mutator {
public:
    explicit Pinner(const ir::Kernel &k) { accumulatorsIn(k.body, accumulators_); }
    using ir::Mutator::mutate;

protected:
    Stmt mutateAllocate(const Stmt &self, const ir::Allocate &n) override {
        inScope_.push_back(n.buffer.get());
        Stmt out = ir::Mutator::mutateAllocate(self, n);
        inScope_.pop_back();
        return out;
    }

    // A fence pins the accumulators of the group it opens: the wgmmas after
    // it in this list, up to the statement that commits them. A wait pins
    // those of the wgmmas of the nearest statement before it in this list
    // that has any: the group it waits for. (Pinning more would keep dead
    // accumulators alive across the wait.)
    Stmt mutateSeq(const Stmt &self, const ir::Seq &n) override {
        std::vector<Stmt> out;
        bool changed = false;
        for (size_t i = 0; i < n.stmts.size(); ++i) {
            const ir::WgmmaSync *sync = ir::as<ir::WgmmaSync>(n.stmts[i]);
            if (!sync || sync->sync == ir::WgmmaSyncKind::Commit) {
                Stmt m = mutate(n.stmts[i]);
                changed |= m != n.stmts[i];
                if (m) out.push_back(m);
                continue;
            }
            std::vector<Buffer> group;
            if (sync->sync == ir::WgmmaSyncKind::Fence) {
                for (size_t j = i + 1; j < n.stmts.size(); ++j) {
                    accumulatorsIn(n.stmts[j], group);
                    if (commits(n.stmts[j])) break;
                }
            } else {
                for (size_t j = i; j-- > 0 && group.empty();) accumulatorsIn(n.stmts[j], group);
            }
            out.push_back(pinned(*sync, group.empty() ? visible() : visibleOf(group)));
            changed = true;
        }
        return changed ? std::make_shared<ir::Seq>(std::move(out), n.span) : self;
    }

    // A fence or wait outside a list, or with no wgmma beside it in its list
    // (issued in an earlier iteration, say): every accumulator in scope.
    Stmt mutateWgmmaSync(const Stmt &self, const ir::WgmmaSync &n) override {
        if (n.sync == ir::WgmmaSyncKind::Commit) return self;
        return pinned(n, visible());
    }

private:
    static Stmt pinned(const ir::WgmmaSync &n, std::vector<Buffer> pins) {
        return std::make_shared<ir::WgmmaSync>(n.sync, n.pending, n.span, std::move(pins));
    }
    std::vector<Buffer> visibleOf(const std::vector<Buffer> &buffers) const {
        std::vector<Buffer> out;
        for (const Buffer &b : buffers)
            if (std::find(inScope_.begin(), inScope_.end(), b.get()) != inScope_.end()) out.push_back(b);
        return out;
    }
    std::vector<Buffer> visible() const { return visibleOf(accumulators_); }

    std::vector<Buffer> accumulators_;                 // every wgmma's, in program order
    std::vector<const ir::BufferNode *> inScope_;      // the enclosing allocations
};

} // namespace

ir::Kernel pinWgmmaRegisters(const ir::Kernel &kernel, PassContext &) {
    ir::Kernel out = kernel;
    if (!kernel.body) return out;
    out.body = Pinner(kernel).mutate(kernel.body);
    return out;
}

} // namespace tilet
