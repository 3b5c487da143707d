// BufferEdits.cpp -- see BufferEdits.h.
#include "ir/BufferEdits.h"

#include "ir/Visitor.h"

namespace tilet::ir {

const BufferNode &BufferEdits::current(const Buffer &b) const {
    auto it = edited_.find(b.get());
    return it == edited_.end() ? *b : *it->second;
}

void BufferEdits::alignAtLeast(const Buffer &b, int64_t bytes) {
    Buffer storage = storageRoot(b);   // a view's pointer is its tensor's
    if (current(storage).alignment < bytes) edit(storage).alignment = bytes;
}

BufferNode &BufferEdits::edit(const Buffer &b) {
    std::shared_ptr<BufferNode> &copy = edited_[b.get()];
    if (!copy) copy = std::make_shared<BufferNode>(*b);
    return *copy;
}

void BufferEdits::applyTo(Kernel &kernel) const {
    if (edited_.empty()) return;
    BufferReplacement replacement;
    for (const auto &[old, edited] : edited_) replacement[old] = edited;
    replaceBuffers(kernel, replacement);
}

namespace {

class BufferReplacer : public Mutator {
public:
    explicit BufferReplacer(const BufferReplacement &replacement) : replacement_(replacement) {}
    using Mutator::mutate;

    // Memoized, so that every reference to one old buffer (or descriptor)
    // names one new one: buffers are compared by identity.
    Buffer mutateBuffer(const Buffer &b) override {
        if (!b) return b;
        auto memo = resolved_.find(b.get());
        if (memo != resolved_.end()) return memo->second;
        auto it = replacement_.find(b.get());
        Buffer out = it == replacement_.end() ? b : it->second;
        Buffer registers = mutateBuffer(out->registers), remoteOf = mutateBuffer(out->remoteOf), viewOf = mutateBuffer(out->viewOf);
        if (registers != out->registers || remoteOf != out->remoteOf || viewOf != out->viewOf) {
            auto copy = std::make_shared<BufferNode>(*out);
            copy->registers = registers;
            copy->remoteOf = remoteOf;
            copy->viewOf = viewOf;
            out = copy;
        }
        resolved_[b.get()] = out;
        return out;
    }

    TmaDescriptorRef mutateTmaDescriptor(const TmaDescriptorRef &d) override {
        if (!d) return d;
        auto memo = descriptors_.find(d.get());
        if (memo != descriptors_.end()) return memo->second;
        TmaDescriptorRef out = d;
        Buffer tensor = mutateBuffer(d->tensor);
        if (tensor != d->tensor) {
            auto copy = std::make_shared<TmaDescriptor>(*d);
            copy->tensor = tensor;
            out = copy;
        }
        descriptors_[d.get()] = out;
        return out;
    }

private:
    const BufferReplacement &replacement_;
    std::map<const BufferNode *, Buffer> resolved_;
    std::map<const TmaDescriptor *, TmaDescriptorRef> descriptors_;
};

} // namespace

void replaceBuffers(Kernel &kernel, const BufferReplacement &replacement) {
    BufferReplacer replacer(replacement);
    for (Param &p : kernel.params) {
        if (p.tensor) p.tensor = replacer.mutateBuffer(p.tensor);
    }
    for (TmaDescriptorRef &d : kernel.tmaDescriptors) d = replacer.mutateTmaDescriptor(d);
    kernel.body = replacer.mutate(kernel.body);
}

Stmt replaceBuffers(const Stmt &s, const BufferReplacement &replacement) { return BufferReplacer(replacement).mutate(s); }

} // namespace tilet::ir
