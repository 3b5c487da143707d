// fork_server.cpp -- runs tilet on many inputs from one process, for
// scripts/fuzz.
//
// Starting a process of the sanitizer build costs more than translating a
// mutant (mapping ASan's shadow memory, loading the 100 MB binary). This
// server starts once and forks a child per input; the child is a fresh tilet
// as far as the input can tell (the server itself never translates
// anything), runs tiletMain as main() would, and exits through exit(), so
// LeakSanitizer checks it as it checks a whole run.
//
// Protocol, one line per input on stdin, fields separated by tabs:
//   DIRECTORY  TIMEOUT_SECONDS  ARG...
// The child runs in DIRECTORY with `tilet ARG...`, its stderr in
// DIRECTORY/stderr. One line per input on stdout: the exit status, or
// "signal N", or "timeout" when it ran longer than TIMEOUT_SECONDS.
#include "driver/Driver.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <iostream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

std::vector<std::string> split(const std::string &line) {
    std::vector<std::string> fields;
    std::string field;
    std::istringstream in(line);
    while (std::getline(in, field, '\t')) fields.push_back(field);
    return fields;
}

[[noreturn]] void runChild(const std::vector<std::string> &fields) {
    if (chdir(fields[0].c_str()) != 0) _exit(121);
    int err = open("stderr", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int devnull = open("/dev/null", O_RDWR);
    if (err < 0 || devnull < 0) _exit(122);
    dup2(devnull, 0);
    dup2(devnull, 1);
    dup2(err, 2);
    close(err);
    close(devnull);
    // A hang ends the child; the server reports it as a timeout.
    alarm(static_cast<unsigned>(std::atoi(fields[1].c_str())));
    std::vector<std::string> args{"tilet"};
    args.insert(args.end(), fields.begin() + 2, fields.end());
    std::vector<char *> argv;
    for (std::string &a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int status = tilet::tiletMain(static_cast<int>(args.size()), argv.data());
    std::cerr.flush();
    std::exit(status);   // not _exit: the sanitizers' exit-time checks run as after main()
}

} // namespace

int main() {
    std::string line;
    while (std::getline(std::cin, line)) {
        std::vector<std::string> fields = split(line);
        if (fields.size() < 2) {
            std::cout << "bad request" << std::endl;
            continue;
        }
        pid_t pid = fork();
        if (pid < 0) {
            std::cout << "fork failed" << std::endl;
            continue;
        }
        if (pid == 0) runChild(fields);
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        if (WIFEXITED(status)) std::cout << WEXITSTATUS(status) << std::endl;
        else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) std::cout << "timeout" << std::endl;
        else if (WIFSIGNALED(status)) std::cout << "signal " << WTERMSIG(status) << std::endl;
        else std::cout << "unknown" << std::endl;
    }
    return 0;
}
