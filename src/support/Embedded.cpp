#include "support/Embedded.h"

#include "support/InternalError.h"

namespace tilet::embedded {

std::string_view get(std::string_view name) {
    for (const Entry &entry : all()) {
        if (entry.name == name) return entry.content;
    }
    TILET_INTERNAL_ERROR("template '" << name << "' was not embedded at build time");
}

} // namespace tilet::embedded
