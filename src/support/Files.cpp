#include "support/Files.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace tilet {

namespace {

std::string describeErrno(int err) { return std::strerror(err); }

// Writes `content` to a fresh temporary beside `path`; returns its name.
bool writeTemporary(const std::string &path, const std::string &content, std::string &tmpPath, std::string &error) {
    std::filesystem::path p(path);
    std::string dir = p.parent_path().string();
    if (dir.empty()) dir = ".";
    std::string pattern = dir + "/." + p.filename().string() + ".tmp.XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    int fd = mkstemp(buf.data());
    if (fd < 0) {
        error = "cannot write '" + path + "': " + describeErrno(errno);
        return false;
    }
    tmpPath = buf.data();
    size_t written = 0;
    while (written < content.size()) {
        ssize_t n = ::write(fd, content.data() + written, content.size() - written);
        if (n < 0) {
            if (errno == EINTR) continue;
            error = "cannot write '" + path + "': " + describeErrno(errno);
            ::close(fd);
            std::remove(tmpPath.c_str());
            return false;
        }
        written += static_cast<size_t>(n);
    }
    // mkstemp creates 0600; outputs get the usual 0644 less the umask.
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    if (::close(fd) != 0) {
        error = "cannot write '" + path + "': " + describeErrno(errno);
        std::remove(tmpPath.c_str());
        return false;
    }
    return true;
}

} // namespace

bool writeFilesAtomically(const std::vector<PendingFile> &files, std::string &error) {
    std::vector<std::string> temps;
    auto cleanup = [&]() {
        for (const std::string &t : temps) std::remove(t.c_str());
    };
    for (const PendingFile &f : files) {
        std::error_code ec;
        if (std::filesystem::is_directory(f.path, ec)) {
            error = "cannot write '" + f.path + "': is a directory";
            cleanup();
            return false;
        }
        std::string tmp;
        if (!writeTemporary(f.path, f.content, tmp, error)) {
            cleanup();
            return false;
        }
        temps.push_back(tmp);
    }
    for (size_t i = 0; i < files.size(); ++i) {
        if (std::rename(temps[i].c_str(), files[i].path.c_str()) != 0) {
            error = "cannot write '" + files[i].path + "': " + describeErrno(errno);
            for (size_t j = i; j < temps.size(); ++j) std::remove(temps[j].c_str());
            return false;
        }
    }
    return true;
}

} // namespace tilet
