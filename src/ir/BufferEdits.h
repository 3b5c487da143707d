// BufferEdits.h -- how a pass changes what is known about a buffer.
//
// Buffers are immutable once the IR refers to them (ir::Buffer points to
// const). A pass that decides a fact -- a fragment's layout, a shared
// buffer's offset, swizzle or alignment, a tensor's read-only-ness -- edits a
// private copy here, reads its own decisions back through `current`, and
// applies them all at once with `applyTo`: every reference in the kernel
// (parameters, statements, TMA descriptors, and other buffers' `registers`,
// `remoteOf` and `viewOf`) then names the new version. Later passes see the facts as
// part of the IR, and a pass that decided something has visibly changed it.
#pragma once

#include "ir/IR.h"

#include <map>

namespace tilet::ir {

// Old buffer -> its replacement.
using BufferReplacement = std::map<const BufferNode *, Buffer>;

class BufferEdits {
public:
    // The buffer with this pass's edits so far (itself when unedited).
    const BufferNode &current(const Buffer &b) const;
    // A private copy of `b` to change, made on first use.
    BufferNode &edit(const Buffer &b);
    // Wide or TMA accesses of `b` need its storage aligned to `bytes`: the
    // buffer's own, or for a view (viewOf) the tensor it starts at.
    void alignAtLeast(const Buffer &b, int64_t bytes);
    bool empty() const { return edited_.empty(); }
    // Replaces every edited buffer throughout the kernel.
    void applyTo(Kernel &kernel) const;

private:
    std::map<const BufferNode *, std::shared_ptr<BufferNode>> edited_;
};

// Replaces buffers throughout the kernel: its parameters, its body, its TMA
// descriptors, and (transitively) every buffer whose `registers`,
// `remoteOf` or `viewOf` names a replaced one.
void replaceBuffers(Kernel &kernel, const BufferReplacement &replacement);
Stmt replaceBuffers(const Stmt &s, const BufferReplacement &replacement);

} // namespace tilet::ir
