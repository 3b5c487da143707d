// Uniformity.h -- which values may differ between the threads of a block.
//
// A value is thread-dependent when it reads the thread index (directly,
// through a variable bound to such a value, or a shuffle) or a per-thread
// register. Register variables (`var`, `alloc_local`) that every thread
// assigns alike -- uniform values at uniform indices, under control flow
// every thread follows alike -- hold one value in all threads; the rest
// (fragments' registers, anything written per thread) are per-thread. Used
// by insert-syncs (which branches every thread takes alike) and by
// store-uniform-once (which stores every thread would make alike). Inside a
// ws(...) role, "every thread" is the role's: a register allocated outside
// the roles that roles write alike in their threads (TileLang's tile
// scheduler state, set before the role branches and advanced in each) holds
// one value in each role's threads -- each thread has its own register, so
// another role's writes never reach them -- and differs between roles. A
// walk that asks inside a role says so with enterRole / leaveRole.
#pragma once

#include "ir/IR.h"

#include <map>
#include <set>
#include <vector>

namespace tilet::ir {

class Uniformity {
public:
    // Finds the per-thread registers of `body`, to a fixpoint: a register is
    // uniform only if everything it is computed from is.
    explicit Uniformity(const Stmt &body);

    bool threadDependent(const Expr &e) const;
    // The same, but a fragment's registers count as alike in every thread:
    // at the language's level a fragment holds one value per element (a
    // fragment read outside parallel loops is fully replicated, and tile
    // operations and parallel loops write every replica alike).
    bool threadDependentBeyondFragments(const Expr &e) const;
    // Marks a variable bound to a thread-dependent value (a walk's own lets and loops).
    void bind(const VarNode *v, bool dependent);
    // A walk enters and leaves the body of ws(...) role `role` (roles nest).
    void enterRole(const WarpSpecialize &role) { roles_.push_back(&role); }
    void leaveRole() { roles_.pop_back(); }
    // The register `e` reads that makes it differ between threads, if that is
    // the only reason (no thread index, no value derived from one): a
    // program's own per-thread `var`, never one of the lowering's guards.
    const BufferNode *onlyPerThreadRegister(const Expr &e) const;
    // Whether threads may leave the loop `loop` (a For or While), or skip
    // one of its iterations, apart from each other: a break or continue
    // under a condition that differs between them. The rest of its body
    // then runs in some of the threads only.
    bool jumpsApart(const StmtNode *loop) const { return jumpsApart_.count(loop) > 0; }
    // Whether threads may run a For or While loop differently: its bounds or
    // condition differ between them, or they leave it apart (jumpsApart).
    bool loopRunsApart(const Stmt &loop) const;

private:
    struct Sources {
        bool threadIndex = false;
        const BufferNode *perThreadRegister = nullptr;
    };
    Sources sourcesOf(const Expr &e) const;
    void findPerThreadRegisters(const Stmt &s, bool divergent);
    void findInLoop(const Stmt &loop, const Stmt &body, bool divergent);

    // Whether register `b` may differ between the threads that run the
    // point walked (those of the innermost role entered, or the block).
    bool perThread(const BufferNode *b) const;

    std::set<const VarNode *> dependentVars_;
    std::set<const BufferNode *> perThread_;   // registers whose value may differ between threads, wherever read
    // Registers allocated outside a role and written alike by the threads of
    // roles: the roles that write each. Alike where every thread that runs
    // the point runs all or none of each writer (inside a writer, or in a
    // role of other warps), per-thread elsewhere.
    std::map<const BufferNode *, std::set<const WarpSpecialize *>> roleWritten_;
    std::vector<const WarpSpecialize *> roles_;   // the ws(...) roles around the point walked, outermost first
    std::map<const BufferNode *, size_t> allocatedInRoles_;   // a register allocated inside roles: how many roles around it
    bool loopEntryDivergent_ = false;          // the innermost loop being walked was entered under divergent control
    bool jumpMetApart_ = false;                // and a jump of it was met under a thread-dependent condition
    int roleDepth_ = 0, loopRoleDepth_ = 0;    // ws(...) roles around the statement walked, and around the innermost loop
    std::set<const StmtNode *> jumpsApart_;
};

} // namespace tilet::ir
