// WorkQueue's thread loop.
#include <distributed/WorkQueue.h>

#include <c10/util/Exception.h>

namespace c10d::inline tessera {

WorkQueue::WorkQueue() : thread_([this] { run(); }) {}

WorkQueue::~WorkQueue() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stopping_ = true;  // the thread finishes what is queued, then returns
  }
  queued_.notify_all();
  thread_.join();
}

void WorkQueue::push(const char* who, const char* op, const std::function<std::function<void()>(uint64_t)>& make) {
  {
    std::lock_guard<std::mutex> g(mu_);
    TORCH_CHECK(!stopping_, who, "::", op, ": the process group is shutting down");
    jobs_.push_back(make(next_seq_++));
  }
  queued_.notify_one();
}

void WorkQueue::run() {
  while (true) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> g(mu_);
      queued_.wait(g, [&] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

}  // namespace c10d::inline tessera
