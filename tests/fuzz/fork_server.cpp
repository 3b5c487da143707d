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
// With --persistent the server translates each input itself instead, with no
// fork: about ten times faster in the sanitizer build, whose fork and exit
// (copying ASan's page tables, LeakSanitizer's scan at exit) cost more than
// the translation. What a run leaves behind is then shared with the next
// input, so the answers are a filter, not a verdict: leaks are checked after
// each input (LeakSanitizer's recoverable check, reported as "leak"), and a
// sanitizer report, crash or hang ends the server -- scripts/fuzz then runs
// that input again in a forked child, whose answer is the one it reports.
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

#if defined(__SANITIZE_ADDRESS__) && __has_include(<sanitizer/lsan_interface.h>)
#include <sanitizer/lsan_interface.h>
#define TILET_FUZZ_LEAK_CHECK 1
#endif

namespace {

std::vector<std::string> split(const std::string &line) {
    std::vector<std::string> fields;
    std::string field;
    std::istringstream in(line);
    while (std::getline(in, field, '\t')) fields.push_back(field);
    return fields;
}

int runTiletWithArgs(const std::vector<std::string> &fields) {
    std::vector<std::string> args{"tilet"};
    args.insert(args.end(), fields.begin() + 2, fields.end());
    std::vector<char *> argv;
    for (std::string &a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int status = tilet::tiletMain(static_cast<int>(args.size()), argv.data());
    std::cerr.flush();
    return status;
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
    std::exit(runTiletWithArgs(fields));   // not _exit: the sanitizers' exit-time checks run as after main()
}

std::string forkAndRun(const std::vector<std::string> &fields) {
    pid_t pid = fork();
    if (pid < 0) return "fork failed";
    if (pid == 0) runChild(fields);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) return std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) return "timeout";
    if (WIFSIGNALED(status)) return "signal " + std::to_string(WTERMSIG(status));
    return "unknown";
}

// Runs the input in this process with its stdout and stderr redirected as a
// child's would be, and puts them back afterwards; SIGALRM's default action
// ends the server on a hang.
std::string runInProcess(const std::vector<std::string> &fields, const std::string &home) {
    if (chdir(fields[0].c_str()) != 0) return "121";
    int err = open("stderr", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int devnull = open("/dev/null", O_RDWR);
    if (err < 0 || devnull < 0) return "122";
    std::cout.flush();
    int savedOut = dup(1), savedErr = dup(2);
    dup2(devnull, 1);
    dup2(err, 2);
    close(err);
    close(devnull);
    alarm(static_cast<unsigned>(std::atoi(fields[1].c_str())));
    int status = runTiletWithArgs(fields);
    alarm(0);
    bool leaked = false;
#ifdef TILET_FUZZ_LEAK_CHECK
    leaked = __lsan_do_recoverable_leak_check() != 0;
#endif
    dup2(savedOut, 1);
    dup2(savedErr, 2);
    close(savedOut);
    close(savedErr);
    if (chdir(home.c_str()) != 0) return "123";
    return leaked ? "leak" : std::to_string(status);
}

} // namespace

int main(int argc, char **argv) {
    bool persistent = argc > 1 && std::string(argv[1]) == "--persistent";
    char *cwd = getcwd(nullptr, 0);
    std::string home = cwd ? cwd : "/";
    std::free(cwd);
    std::string line;
    while (std::getline(std::cin, line)) {
        std::vector<std::string> fields = split(line);
        if (fields.size() < 2) {
            std::cout << "bad request" << std::endl;
            continue;
        }
        std::cout << (persistent ? runInProcess(fields, home) : forkAndRun(fields)) << std::endl;
    }
    return 0;
}
