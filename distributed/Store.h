// The key-value stores that processes rendezvous through (torch's c10d::Store): the ranks
// of a process group exchange their transport addresses here, and programs use them for
// their own counters and barriers. Values are bytes; get() and wait() block until the keys
// exist or the timeout passes, then raise.
#pragma once

#include <c10/macros/Macros.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace c10d::inline tessera {

using Bytes = std::vector<uint8_t>;

class TORCH_API Store {
 public:
  static constexpr std::chrono::milliseconds kDefaultTimeout = std::chrono::seconds(300);
  static constexpr std::chrono::milliseconds kNoTimeout = std::chrono::milliseconds::zero();

  explicit Store(std::chrono::milliseconds timeout = kDefaultTimeout) : timeout_(timeout) {}
  virtual ~Store();

  virtual void set(const std::string& key, const Bytes& value) = 0;
  // Sets `desired` when the key holds `expected` (or is absent and `expected` is empty);
  // returns what the key holds afterwards, or `expected` when it is absent (torch's rule).
  virtual Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) = 0;
  virtual Bytes get(const std::string& key) = 0;  // waits for the key
  // Adds to the integer the key holds (its decimal text; absent counts as 0).
  virtual int64_t add(const std::string& key, int64_t value) = 0;
  virtual bool delete_key(const std::string& key) = 0;
  virtual bool check(const std::vector<std::string>& keys) = 0;
  virtual int64_t num_keys() = 0;
  void wait(const std::vector<std::string>& keys) { wait(keys, timeout()); }
  virtual void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;

  virtual std::chrono::milliseconds timeout() const { return timeout_; }
  virtual void set_timeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }

 protected:
  [[noreturn]] static void throw_timeout(const std::vector<std::string>& keys, std::chrono::milliseconds timeout);
  std::chrono::milliseconds timeout_;
};

// The integer add() keeps, as its decimal text.
int64_t parse_counter(const Bytes& value);
Bytes counter_bytes(int64_t value);

// In one process: threads rendezvous through a map.
class TORCH_API HashStore final : public Store {
 public:
  void set(const std::string& key, const Bytes& value) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t value) override;
  bool delete_key(const std::string& key) override;
  bool check(const std::vector<std::string>& keys) override;
  int64_t num_keys() override;
  using Store::wait;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  std::unordered_map<std::string, Bytes> map_;
};

// Every key of `store` under "<prefix>/": process groups share one store this way.
class TORCH_API PrefixStore final : public Store {
 public:
  PrefixStore(std::string prefix, std::shared_ptr<Store> store);
  void set(const std::string& key, const Bytes& value) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t value) override;
  bool delete_key(const std::string& key) override;
  bool check(const std::vector<std::string>& keys) override;
  int64_t num_keys() override;
  using Store::wait;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  void set_timeout(std::chrono::milliseconds timeout) override;
  std::chrono::milliseconds timeout() const override { return store_->timeout(); }
  const std::shared_ptr<Store>& underlying_store() const { return store_; }

 private:
  std::string prefixed(const std::string& key) const { return prefix_ + "/" + key; }
  std::vector<std::string> prefixed(const std::vector<std::string>& keys) const;
  std::string prefix_;
  std::shared_ptr<Store> store_;
};

}  // namespace c10d::inline tessera
