// A process group's worker thread: jobs run one after another in the order they were
// queued, each numbered (Gloo's tags) in that order, since every rank must issue its
// collectives alike. Destruction runs what is queued, then joins the thread.
#pragma once

#include <c10/macros/Macros.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace c10d::inline tessera {

class TORCH_API WorkQueue {
 public:
  WorkQueue();
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Queues make(seq)'s job, seq counting this queue's jobs from 0; raises (naming `who`
  // and `op`) once the queue is shutting down.
  void push(const char* who, const char* op, const std::function<std::function<void()>(uint64_t seq)>& make);

 private:
  void run();

  std::mutex mu_;
  std::condition_variable queued_;
  std::deque<std::function<void()>> jobs_;
  uint64_t next_seq_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace c10d::inline tessera
