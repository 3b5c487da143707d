// Embedded.h -- read-only access to the files under templates/, compiled into
// the binary by templates/embed.py so that `tilet` needs no files at run time.
#pragma once

#include <span>
#include <string_view>

namespace tilet::embedded {

struct Entry {
    std::string_view name;     // path relative to templates/, e.g. "cuda/ptx_helpers.cu"
    std::string_view content;
};

// Every embedded file, sorted by name.
std::span<const Entry> all();

// The content of `name`; an internal error if it was not embedded, because
// the set of templates is fixed at build time.
std::string_view get(std::string_view name);

} // namespace tilet::embedded
