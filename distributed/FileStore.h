// The store of processes that share a file system (torch's FileStore, behind file://
// init): an append-only log of sets and deletes, each access under an exclusive flock. The
// last of world_size stores to close removes the file.
#pragma once

#include <distributed/Store.h>

namespace c10d::inline tessera {

class TORCH_API FileStore final : public Store {
 public:
  FileStore(std::string path, int64_t num_workers = -1);
  ~FileStore() override;

  void set(const std::string& key, const Bytes& value) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t value) override;
  bool delete_key(const std::string& key) override;
  bool check(const std::vector<std::string>& keys) override;
  int64_t num_keys() override;
  using Store::wait;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;

  const std::string& path() const { return path_; }
  int64_t num_workers() const { return num_workers_; }

 private:
  class Locked;  // the file opened, locked and read up to its end
  int64_t add_raw(const std::string& key, int64_t value);
  std::string path_;
  int64_t num_workers_;
  std::mutex mu_;
  size_t read_up_to_ = 0;  // bytes of the log already in cache_
  std::unordered_map<std::string, Bytes> cache_;
};

}  // namespace c10d::inline tessera
