#include "support/SourceManager.h"

#include "support/InternalError.h"

namespace tilet {

bool SourceRange::contains(const SourceLoc &l) const {
    auto notAfter = [](const SourceLoc &a, const SourceLoc &b) { return a.line < b.line || (a.line == b.line && a.col <= b.col); };
    return l.file == begin.file && notAfter(begin, l) && notAfter(l, end);
}

std::string SourceRange::lineColumn() const { return std::to_string(begin.line) + ":" + std::to_string(begin.col); }

SourceRange SourceRange::span(const SourceRange &a, const SourceRange &b) {
    if (!a.valid()) return b;
    if (!b.valid()) return a;
    SourceRange r = a;
    auto before = [](const SourceLoc &x, const SourceLoc &y) {
        return x.line < y.line || (x.line == y.line && x.col < y.col);
    };
    if (before(b.begin, r.begin)) r.begin = b.begin;
    if (before(r.end, b.end)) r.end = b.end;
    return r;
}

SourceManager::SourceManager() { files_.push_back(File{}); }

FileId SourceManager::add(std::string name, std::string text) {
    File f;
    f.name = std::move(name);
    f.text = std::move(text);
    f.lineStarts.push_back(0);
    for (size_t i = 0; i < f.text.size(); ++i) {
        if (f.text[i] == '\n') f.lineStarts.push_back(static_cast<uint32_t>(i + 1));
    }
    files_.push_back(std::move(f));
    return static_cast<FileId>(files_.size() - 1);
}

const SourceManager::File &SourceManager::get(FileId file) const {
    TILET_ASSERT(file != kNoFile && file < files_.size(), "bad file id " << file);
    return files_[file];
}

const std::string &SourceManager::name(FileId file) const { return get(file).name; }
const std::string &SourceManager::text(FileId file) const { return get(file).text; }

uint32_t SourceManager::lineCount(FileId file) const {
    return static_cast<uint32_t>(get(file).lineStarts.size());
}

std::string_view SourceManager::line(FileId file, uint32_t line) const {
    const File &f = get(file);
    if (line == 0 || line > f.lineStarts.size()) return {};
    size_t begin = f.lineStarts[line - 1];
    size_t end = line < f.lineStarts.size() ? f.lineStarts[line] - 1 : f.text.size();
    std::string_view v(f.text);
    v = v.substr(begin, end - begin);
    if (!v.empty() && v.back() == '\r') v.remove_suffix(1);
    return v;
}

uint32_t countCodePoints(std::string_view utf8) {
    uint32_t n = 0;
    for (unsigned char c : utf8) {
        if ((c & 0xC0) != 0x80) ++n;   // count every byte that does not continue a sequence
    }
    return n;
}

size_t findInvalidUtf8(std::string_view text) {
    size_t i = 0;
    while (i < text.size()) {
        unsigned char c = static_cast<unsigned char>(text[i]);
        size_t len;
        uint32_t cp;
        if (c < 0x80) { ++i; continue; }
        else if ((c & 0xE0) == 0xC0) { len = 2; cp = c & 0x1F; }
        else if ((c & 0xF0) == 0xE0) { len = 3; cp = c & 0x0F; }
        else if ((c & 0xF8) == 0xF0) { len = 4; cp = c & 0x07; }
        else return i;
        if (i + len > text.size()) return i;
        for (size_t k = 1; k < len; ++k) {
            unsigned char cc = static_cast<unsigned char>(text[i + k]);
            if ((cc & 0xC0) != 0x80) return i;
            cp = (cp << 6) | (cc & 0x3F);
        }
        // Reject overlong forms, surrogates and values past U+10FFFF.
        static const uint32_t minimum[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < minimum[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
        i += len;
    }
    return std::string_view::npos;
}

} // namespace tilet
