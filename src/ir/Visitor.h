// Visitor.h -- read-only and rewriting traversals of the IR.
//
// Both classes have one method per node kind (generated from Nodes.def). The
// defaults visit every child. A Mutator rebuilds a node only when one of its
// children changed, and otherwise returns the very same node, so "did this
// pass change anything" is a pointer comparison.
#pragma once

#include "ir/IR.h"

#include <functional>

namespace tilet::ir {

class Visitor {
public:
    virtual ~Visitor() = default;
    virtual void visit(const Expr &e);
    virtual void visit(const Stmt &s);
    // The mins of a tile operation's region (every node that has one calls it).
    virtual void visitRegion(const Region &r);

#define TILET_IR_EXPR(name) virtual void visit##name(const name &node);
#define TILET_IR_STMT(name) virtual void visit##name(const name &node);
#include "ir/Nodes.def"
};

class Mutator {
public:
    virtual ~Mutator() = default;
    virtual Expr mutate(const Expr &e);
    virtual Stmt mutate(const Stmt &s);
    virtual Region mutateRegion(const Region &r);
    // Every buffer and TMA descriptor a node names goes through these (the
    // defaults keep them); ir::BufferEdits overrides them to replace buffers.
    virtual Buffer mutateBuffer(const Buffer &b) { return b; }
    virtual TmaDescriptorRef mutateTmaDescriptor(const TmaDescriptorRef &d) { return d; }
    // The indices of every element access of a buffer (loads, stores, vector
    // and TMA copies, ldmatrix and wgmma operands); sets `changed` when the
    // result differs. Passes that rewrite how buffers are addressed override it.
    virtual std::vector<Expr> mutateIndices(const BufferNode &buffer, const std::vector<Expr> &indices, bool &changed);
    // A matrix operand of wgmma or tcgen05.mma: its indices and buffer.
    WgmmaOperand mutateOperand(const WgmmaOperand &o, bool &changed);
    std::vector<Expr> mutateAll(const std::vector<Expr> &es, bool &changed);

protected:
#define TILET_IR_EXPR(name) virtual Expr mutate##name(const Expr &self, const name &node);
#define TILET_IR_STMT(name) virtual Stmt mutate##name(const Stmt &self, const name &node);
#include "ir/Nodes.def"
};

// Calls `f` on every expression node (pre-order), including those inside
// statements and regions.
void forEachExpr(const Stmt &s, const std::function<void(const Expr &)> &f);
void forEachExpr(const Expr &e, const std::function<void(const Expr &)> &f);
// Calls `f` on every statement node (pre-order).
void forEachStmt(const Stmt &s, const std::function<void(const Stmt &)> &f);

// Whether the loop body `body` holds a break or continue of its own loop
// (one inside a nested loop belongs to that loop).
bool jumpsOutOf(const Stmt &body);

// Replaces variables by expressions.
Expr substitute(const Expr &e, const std::vector<std::pair<VarRef, Expr>> &map);
Stmt substitute(const Stmt &s, const std::vector<std::pair<VarRef, Expr>> &map);
bool usesVar(const Expr &e, const VarNode *v);

} // namespace tilet::ir
