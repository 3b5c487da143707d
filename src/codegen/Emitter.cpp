#include "codegen/Emitter.h"

#include "support/InternalError.h"

#include <algorithm>
#include <cctype>

namespace tilet {

void Emitter::line(const std::string &text) {
    out_ << std::string(indent_ * 4, ' ') << text << '\n';
    lines_ += 1 + static_cast<int64_t>(std::count(text.begin(), text.end(), '\n'));
}
void Emitter::blank() {
    out_ << '\n';
    ++lines_;
}
void Emitter::open(const std::string &head) {
    line(head + " {");
    ++indent_;
}
void Emitter::close(const std::string &comment) {
    --indent_;
    line(comment.empty() ? "}" : "} // " + comment);
}
void Emitter::raw(const std::string &text) {
    out_ << text;
    lines_ += static_cast<int64_t>(std::count(text.begin(), text.end(), '\n'));
}

namespace {
// C++ keywords and names CUDA device code or the generated code itself uses.
const char *kReserved[] = {
    "alignas", "alignof", "and", "asm", "auto", "bool", "break", "case", "catch", "char", "class", "const", "constexpr",
    "continue", "default", "delete", "do", "double", "else", "enum", "explicit", "export", "extern", "false", "float",
    "for", "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "nullptr",
    "operator", "or", "private", "protected", "public", "register", "return", "short", "signed", "sizeof", "static",
    "struct", "switch", "template", "this", "throw", "true", "try", "typedef", "typeid", "typename", "union",
    "unsigned", "using", "virtual", "void", "volatile", "while", "xor", "threadIdx", "blockIdx", "blockDim", "gridDim",
    "warpSize", "min", "max", "abs", "exp", "log", "sqrt", "pow", "dim3", "half", "config", "err", "stream",
    "tilet_smem", "uint4", "uint2", "float4", "float2", "int4", "int2", "main", "NULL", "assert", "printf",
    // the launch functions' own locals (HostPrinter's printLaunch)
    "grid_x", "grid_y", "grid_z", "device_status", "init_status", "sm_count_status", "attributes", "variant"};
} // namespace

NameTable::NameTable(std::set<std::string> taken) : used_(std::move(taken)) {
    for (const char *r : kReserved) used_.insert(r);
}

std::string NameTable::unique(std::string base) {
    std::string legal;
    for (char c : base) legal += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
    if (legal.empty() || std::isdigit(static_cast<unsigned char>(legal[0]))) legal = "v_" + legal;
    // Identifiers with a double underscore or _Capital are reserved to the implementation.
    if (legal.find("__") != std::string::npos || (legal[0] == '_' && legal.size() > 1 && std::isupper(static_cast<unsigned char>(legal[1]))))
        legal = "u" + legal;
    std::string name = legal;
    if (used_.count(name)) {
        int &i = firstFree_.try_emplace(legal, 1).first->second;
        while (used_.count(name = legal + "_" + std::to_string(i))) ++i;
    }
    used_.insert(name);
    return name;
}

const std::string &NameTable::var(const ir::VarNode *v) {
    auto it = names_.find(v);
    if (it != names_.end()) return it->second;
    std::string name = unique(v->name);
    if (!scopes_.empty()) scopes_.back().push_back({v, name});
    return names_[v] = name;
}

const std::string &NameTable::buffer(const ir::BufferNode *b) {
    auto it = names_.find(b);
    if (it != names_.end()) return it->second;
    std::string name = unique(b->name);
    if (!scopes_.empty()) scopes_.back().push_back({b, name});
    return names_[b] = name;
}

void NameTable::popScope() {
    for (const auto &[key, name] : scopes_.back()) {
        used_.erase(name);
        names_.erase(key);
        // `base_K` is free again: the smallest free suffix of `base` may be K.
        size_t underscore = name.rfind('_');
        if (underscore != std::string::npos && underscore + 1 < name.size() &&
            name.find_first_not_of("0123456789", underscore + 1) == std::string::npos && name.size() - underscore <= 9) {
            auto hint = firstFree_.find(name.substr(0, underscore));
            int k = std::stoi(name.substr(underscore + 1));
            if (hint != firstFree_.end() && k >= 1 && k < hint->second) hint->second = k;
        }
    }
    scopes_.pop_back();
}

std::string NameTable::fresh(const std::string &base) { return unique(base); }

std::string fillTemplate(std::string_view text, const std::map<std::string, std::string> &values) {
    std::string out;
    size_t i = 0;
    while (i < text.size()) {
        size_t open = text.find("{{", i);
        if (open == std::string_view::npos) {
            out += text.substr(i);
            break;
        }
        out += text.substr(i, open - i);
        size_t close = text.find("}}", open);
        TILET_ASSERT(close != std::string_view::npos, "unterminated template placeholder");
        std::string key(text.substr(open + 2, close - open - 2));
        auto it = values.find(key);
        TILET_ASSERT(it != values.end(), "template placeholder '" << key << "' has no value");
        out += it->second;
        i = close + 2;
    }
    return out;
}

} // namespace tilet
