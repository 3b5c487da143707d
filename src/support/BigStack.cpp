#include "support/BigStack.h"

#include <exception>
#include <pthread.h>

namespace tilet {

namespace {

struct Job {
    const std::function<int()> *fn = nullptr;
    int result = 0;
    std::exception_ptr error;
};

void *runJob(void *arg) {
    Job &job = *static_cast<Job *>(arg);
    try {
        job.result = (*job.fn)();
    } catch (...) {
        job.error = std::current_exception();
    }
    return nullptr;
}

} // namespace

int runWithStack(size_t bytes, const std::function<int()> &fn) {
    Job job;
    job.fn = &fn;
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) return fn();
    pthread_t thread;
    bool started = pthread_attr_setstacksize(&attr, bytes) == 0 && pthread_create(&thread, &attr, runJob, &job) == 0;
    pthread_attr_destroy(&attr);
    if (!started) return fn();
    pthread_join(thread, nullptr);
    if (job.error) std::rethrow_exception(job.error);
    return job.result;
}

} // namespace tilet
