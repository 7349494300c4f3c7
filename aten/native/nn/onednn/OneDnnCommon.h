// What the oneDNN kernels (convolution, bfloat16 matmul, the int8 ones) share: the CPU engine,
// the caller-owned scratchpad attribute, plain memory descriptors of tensors and weights, scratch memory
// from the caching allocator, and an LRU cache of built primitives keyed by shape.
// Included only by the .cpp files of this folder (it pulls in dnnl.hpp).
#pragma once

#include <aten/core/Tensor.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace at::inline tessera::native::onednn {

const dnnl::engine& cpu_engine();

// Every primitive takes its scratch memory from the caller (allocated per call): with the
// library's default, scratchpads are per-thread buffers sized for the thread that built
// the primitive, and a cached plan runs on whichever thread calls it.
const dnnl::primitive_attr& user_scratchpad();

// A tensor's plain layout as oneDNN sees it: its sizes and strides.
dnnl::memory::desc plain_desc(const Tensor& t, dnnl::memory::data_type type);

// A convolution weight [O, I/g, k...] as oneDNN's grouped [g, O/g, I/g, k...] when groups > 1,
// its strides kept.
dnnl::memory::desc weight_desc(const Tensor& w, int64_t groups, dnnl::memory::data_type type);

// `d`'s dims and type in the layout the primitive chooses (format_tag::any).
dnnl::memory::desc any_like(const dnnl::memory::desc& d);

// Memory in oneDNN's layout `d`, from the caching allocator (a fresh malloc of a large
// block would page-fault on every call); `keep` holds it until the stream is done.
dnnl::memory blocked_memory(const dnnl::memory::desc& d, std::vector<Tensor>& keep);

using Key = std::vector<int64_t>;
struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = 1469598103934665603ull;
    for (int64_t v : k) h = (h ^ static_cast<size_t>(v)) * 1099511628211ull;
    return h;
  }
};

// Appends a tensor's rank, sizes and strides to a key.
void append_layout(Key& key, const Tensor& t);

// Plans by shape, least recently used first out. A refused shape (oneDNN has no
// implementation: build threw dnnl::error) is cached as null, and the caller takes its
// fallback path.
template <typename Plan>
class PlanCache {
 public:
  template <typename Build>
  std::shared_ptr<const Plan> get(const Key& key, Build build) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = index_.find(key);
      if (it != index_.end()) {
        order_.splice(order_.begin(), order_, it->second);
        return it->second->second;
      }
    }
    std::shared_ptr<const Plan> plan;
    try {
      plan = std::make_shared<const Plan>(build());
    } catch (const dnnl::error&) {
      plan = nullptr;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (index_.find(key) == index_.end()) {
      order_.emplace_front(key, plan);
      index_[key] = order_.begin();
      if (order_.size() > kCapacity) {
        index_.erase(order_.back().first);
        order_.pop_back();
      }
    }
    return plan;
  }
  size_t usable() {  // plans oneDNN built (not the refused shapes)
    std::lock_guard<std::mutex> lock(mutex_);
    size_t n = 0;
    for (const auto& entry : order_) n += entry.second != nullptr;
    return n;
  }

 private:
  static constexpr size_t kCapacity = 256;
  using Entry = std::pair<Key, std::shared_ptr<const Plan>>;
  std::mutex mutex_;
  std::list<Entry> order_;
  std::unordered_map<Key, typename std::list<Entry>::iterator, KeyHash> index_;
};

}  // namespace at::inline tessera::native::onednn
