#include "frontend/Ast.h"

#include <ostream>
#include <sstream>

namespace tilet::ast {

const char *unaryOpSpelling(UnaryOp op) {
    switch (op) {
    case UnaryOp::Neg: return "-";
    case UnaryOp::Not: return "!";
    case UnaryOp::BitNot: return "~";
    }
    return "?";
}

const char *binaryOpSpelling(BinaryOp op) {
    switch (op) {
    case BinaryOp::Mul: return "*";
    case BinaryOp::Div: return "/";
    case BinaryOp::Mod: return "%";
    case BinaryOp::Add: return "+";
    case BinaryOp::Sub: return "-";
    case BinaryOp::Shl: return "<<";
    case BinaryOp::Shr: return ">>";
    case BinaryOp::Lt: return "<";
    case BinaryOp::Le: return "<=";
    case BinaryOp::Gt: return ">";
    case BinaryOp::Ge: return ">=";
    case BinaryOp::Eq: return "==";
    case BinaryOp::Ne: return "!=";
    case BinaryOp::BitAnd: return "&";
    case BinaryOp::BitXor: return "^";
    case BinaryOp::BitOr: return "|";
    case BinaryOp::And: return "&&";
    case BinaryOp::Or: return "||";
    }
    return "?";
}

const char *loopKindName(LoopKind k) {
    switch (k) {
    case LoopKind::Serial: return "serial";
    case LoopKind::Unroll: return "unroll";
    case LoopKind::Parallel: return "parallel";
    case LoopKind::Pipelined: return "pipelined";
    case LoopKind::Vectorized: return "vectorized";
    case LoopKind::Persistent: return "persistent";
    }
    return "?";
}

namespace {

class Dumper {
public:
    Dumper(const SourceManager &s, std::ostream &o) : sources_(s), out_(o) {}

    void file(const File &f) {
        out_ << "File " << sources_.name(f.id) << "\n";
        ++depth_;
        for (const Import &i : f.imports) line("Import \"" + i.path + "\"", i.range);
        for (const TargetDecl &t : f.targets) line("Target " + t.name, t.range);
        for (const ConstDecl &c : f.consts) {
            std::string type = !c.typeName.empty() ? c.typeName : c.type ? std::string(dtypeName(*c.type)) : "";
            line("Const " + c.name.name + (type.empty() ? "" : ": " + type), c.range);
            child([&] { expr(*c.value); });
        }
        for (const FnDecl &fn : f.fns) {
            line("Fn " + fn.name.name, fn.range);
            child([&] {
                for (const Ident &p : fn.params) line("FnParam " + p.name, p.range);
                stmts(fn.body);
            });
        }
        for (const Kernel &k : f.kernels) kernel(k);
        --depth_;
    }

private:
    template <class F> void child(F f) { ++depth_; f(); --depth_; }

    void line(const std::string &text, SourceRange r) {
        out_ << std::string(depth_ * 2, ' ') << text << " @" << r.begin.line << ':' << r.begin.col << "\n";
    }

    void kernel(const Kernel &k) {
        line("Kernel " + k.name.name, k.range);
        child([&] {
            for (const Param &p : k.params) {
                line("Param " + p.name.name + ": " + (p.typeName.empty() ? std::string(dtypeName(p.dtype)) : p.typeName) + (p.isTensor ? " tensor" : ""), p.range);
                child([&] {
                    for (const Dim &d : p.dims) {
                        if (d.value) expr(*d.value);
                        else if (!d.divisor) line("DynDim " + d.dynName.name, d.range);
                        else {
                            line("DynDim " + d.dynName.name + " %", d.range);
                            child([&] { expr(*d.divisor); });
                        }
                    }
                });
            }
            if (!k.launch.grid.empty()) {
                line("Grid", k.launch.gridRange);
                child([&] {
                    for (const auto &g : k.launch.grid) expr(*g);
                    for (const Ident &n : k.launch.blockNames) line("BlockIndex " + n.name, n.range);
                });
            }
            if (!k.launch.threads.empty()) {
                line("Threads", k.launch.threadsRange);
                child([&] {
                    for (const auto &t : k.launch.threads) expr(*t);
                    for (const Ident &n : k.launch.threadNames) line("ThreadIndex " + n.name, n.range);
                });
            }
            if (!k.launch.cluster.empty()) {
                line("Cluster", k.launch.clusterRange);
                child([&] { for (const auto &c : k.launch.cluster) expr(*c); });
            }
            if (k.launch.minBlocksPerSm) {
                line("MinBlocksPerSm", k.launch.minBlocksPerSm->range);
                child([&] { expr(*k.launch.minBlocksPerSm); });
            }
            stmts(k.body);
        });
    }

    void stmts(const StmtList &list) {
        for (const StmtPtr &s : list) stmt(*s);
    }

    void args(const std::vector<Arg> &as) {
        for (const Arg &a : as) {
            if (!a.name.empty()) {
                line("Keyword " + a.name, a.nameRange);
                child([&] { expr(*a.value); });
            } else {
                expr(*a.value);
            }
        }
    }

    void stmt(const Stmt &s) {
        switch (s.kind) {
        case StmtKind::Let: {
            auto &l = static_cast<const Let &>(s);
            line("Let " + l.name.name, s.range);
            child([&] { expr(*l.init); });
            break;
        }
        case StmtKind::Var: {
            auto &v = static_cast<const Var &>(s);
            line("Var " + v.name.name + ": " + (v.typeName.empty() ? std::string(dtypeName(v.type)) : v.typeName), s.range);
            if (v.init) child([&] { expr(*v.init); });
            break;
        }
        case StmtKind::Assign: {
            auto &a = static_cast<const Assign &>(s);
            static const char *ops[] = {"=", "+=", "-=", "*=", "/="};
            line(std::string("Assign ") + a.target.name + (a.indices.empty() ? "" : "[...]") + " " +
                     ops[static_cast<int>(a.op)], s.range);
            child([&] {
                for (const auto &i : a.indices) expr(*i);
                expr(*a.value);
            });
            break;
        }
        case StmtKind::For: {
            auto &f = static_cast<const For &>(s);
            std::string vars;
            for (const Ident &v : f.vars) vars += (vars.empty() ? "" : ", ") + v.name;
            line("For " + vars + " in " + loopKindName(f.loopKind), s.range);
            child([&] {
                args(f.args);
                stmts(f.body);
            });
            break;
        }
        case StmtKind::If: {
            auto &i = static_cast<const If &>(s);
            line("If", s.range);
            child([&] {
                expr(*i.cond);
                line("Then", s.range);
                child([&] { stmts(i.thenBody); });
                if (i.hasElse) {
                    line("Else", s.range);
                    child([&] { stmts(i.elseBody); });
                }
            });
            break;
        }
        case StmtKind::While: {
            auto &w = static_cast<const While &>(s);
            line("While", s.range);
            child([&] {
                expr(*w.cond);
                line("Do", s.range);
                child([&] { stmts(w.body); });
            });
            break;
        }
        case StmtKind::Ws: {
            auto &w = static_cast<const Ws &>(s);
            line("Ws", s.range);
            child([&] {
                for (const auto &r : w.roles) expr(*r);
                stmts(w.body);
            });
            break;
        }
        case StmtKind::CallStmt: expr(*static_cast<const CallStmt &>(s).call); break;
        case StmtKind::Break: line("Break", s.range); break;
        case StmtKind::Continue: line("Continue", s.range); break;
        }
    }

    void expr(const Expr &e) {
        switch (e.kind) {
        case ExprKind::IntLit: line("Int " + std::to_string(static_cast<const IntLit &>(e).value), e.range); break;
        case ExprKind::FloatLit: {
            std::ostringstream os;
            os << static_cast<const FloatLit &>(e).value;
            line("Float " + os.str(), e.range);
            break;
        }
        case ExprKind::BoolLit: line(static_cast<const BoolLit &>(e).value ? "True" : "False", e.range); break;
        case ExprKind::InfLit: line("Inf", e.range); break;
        case ExprKind::StringLit: line("String \"" + static_cast<const StringLit &>(e).value + "\"", e.range); break;
        case ExprKind::Name: line("Name " + static_cast<const Name &>(e).name, e.range); break;
        case ExprKind::DTypeRef: line("DType " + std::string(dtypeName(static_cast<const DTypeRef &>(e).dtype)), e.range); break;
        case ExprKind::List:
            line("List", e.range);
            child([&] { for (const auto &i : static_cast<const List &>(e).items) expr(*i); });
            break;
        case ExprKind::Index: {
            auto &ix = static_cast<const Index &>(e);
            line("Index", e.range);
            child([&] {
                expr(*ix.base);
                for (const IndexItem &it : ix.items) {
                    if (it.isSlice()) {   // `a:` has one child: to the end of the dimension
                        line("Slice", it.range);
                        child([&] {
                            expr(*it.begin);
                            if (it.end) expr(*it.end);
                        });
                    } else {
                        expr(*it.begin);
                    }
                }
            });
            break;
        }
        case ExprKind::Unary: {
            auto &u = static_cast<const Unary &>(e);
            line(std::string("Unary ") + unaryOpSpelling(u.op), e.range);
            child([&] { expr(*u.operand); });
            break;
        }
        case ExprKind::Binary: {
            auto &b = static_cast<const Binary &>(e);
            line(std::string("Binary ") + binaryOpSpelling(b.op), e.range);
            child([&] { expr(*b.lhs); expr(*b.rhs); });
            break;
        }
        case ExprKind::Cond: {
            auto &c = static_cast<const Cond &>(e);
            line("Cond", e.range);
            child([&] { expr(*c.cond); expr(*c.thenValue); expr(*c.elseValue); });
            break;
        }
        case ExprKind::Call: {
            auto &c = static_cast<const Call &>(e);
            line("Call " + c.callee, e.range);
            child([&] { args(c.args); });
            break;
        }
        }
    }

    const SourceManager &sources_;
    std::ostream &out_;
    int depth_ = 0;
};

} // namespace

void dump(const File &file, const SourceManager &sources, std::ostream &out) { Dumper(sources, out).file(file); }

} // namespace tilet::ast
