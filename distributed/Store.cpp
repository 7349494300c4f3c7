// Store's shared pieces, the in-process HashStore and the PrefixStore view.
#include <distributed/Store.h>

#include <c10/util/Exception.h>

#include <charconv>

namespace c10d::inline tessera {

Store::~Store() = default;

void Store::throw_timeout(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  std::string names;
  for (const auto& k : keys) names += (names.empty() ? "" : ", ") + k;
  TORCH_CHECK(false, "Timeout waiting for key(s) [", names, "] in the store after ", timeout.count(), " ms");
}

int64_t parse_counter(const Bytes& value) {
  int64_t out = 0;
  const char* begin = reinterpret_cast<const char*>(value.data());
  auto [end, ec] = std::from_chars(begin, begin + value.size(), out);
  TORCH_CHECK(ec == std::errc() && end == begin + value.size(),
              "Store::add: the key holds a value that is not an integer");
  return out;
}

Bytes counter_bytes(int64_t value) {
  const std::string s = std::to_string(value);
  return Bytes(s.begin(), s.end());
}

// ---- HashStore ----

void HashStore::set(const std::string& key, const Bytes& value) {
  {
    std::lock_guard<std::mutex> g(mu_);
    map_[key] = value;
  }
  changed_.notify_all();
}

Bytes HashStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  std::unique_lock<std::mutex> g(mu_);
  auto it = map_.find(key);
  if (it == map_.end()) {
    if (!expected.empty()) return expected;
    map_[key] = desired;
  } else if (it->second == expected) {
    it->second = desired;
  } else {
    return it->second;
  }
  g.unlock();
  changed_.notify_all();
  return desired;
}

Bytes HashStore::get(const std::string& key) {
  std::unique_lock<std::mutex> g(mu_);
  auto ready = [&] { return map_.count(key) != 0; };
  if (timeout_ == kNoTimeout) {
    changed_.wait(g, ready);
  } else if (!changed_.wait_for(g, timeout_, ready)) {
    throw_timeout({key}, timeout_);
  }
  return map_.at(key);
}

int64_t HashStore::add(const std::string& key, int64_t value) {
  int64_t now = value;
  {
    std::lock_guard<std::mutex> g(mu_);
    auto it = map_.find(key);
    if (it != map_.end()) now += parse_counter(it->second);
    map_[key] = counter_bytes(now);
  }
  changed_.notify_all();
  return now;
}

bool HashStore::delete_key(const std::string& key) {
  std::lock_guard<std::mutex> g(mu_);
  return map_.erase(key) != 0;
}

bool HashStore::check(const std::vector<std::string>& keys) {
  std::lock_guard<std::mutex> g(mu_);
  for (const auto& k : keys) {
    if (!map_.count(k)) return false;
  }
  return true;
}

int64_t HashStore::num_keys() {
  std::lock_guard<std::mutex> g(mu_);
  return static_cast<int64_t>(map_.size());
}

void HashStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> g(mu_);
  auto ready = [&] {
    for (const auto& k : keys) {
      if (!map_.count(k)) return false;
    }
    return true;
  };
  if (timeout == kNoTimeout) {
    changed_.wait(g, ready);
  } else if (!changed_.wait_for(g, timeout, ready)) {
    throw_timeout(keys, timeout);
  }
}

// ---- PrefixStore ----

PrefixStore::PrefixStore(std::string prefix, std::shared_ptr<Store> store)
    : Store(store ? store->timeout() : kDefaultTimeout), prefix_(std::move(prefix)), store_(std::move(store)) {
  TORCH_CHECK(store_, "PrefixStore needs a store to wrap");
}

std::vector<std::string> PrefixStore::prefixed(const std::vector<std::string>& keys) const {
  std::vector<std::string> out;
  out.reserve(keys.size());
  for (const auto& k : keys) out.push_back(prefixed(k));
  return out;
}

void PrefixStore::set(const std::string& key, const Bytes& value) { store_->set(prefixed(key), value); }
Bytes PrefixStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  return store_->compare_set(prefixed(key), expected, desired);
}
Bytes PrefixStore::get(const std::string& key) { return store_->get(prefixed(key)); }  // the store's timeout
int64_t PrefixStore::add(const std::string& key, int64_t value) { return store_->add(prefixed(key), value); }
bool PrefixStore::delete_key(const std::string& key) { return store_->delete_key(prefixed(key)); }
bool PrefixStore::check(const std::vector<std::string>& keys) { return store_->check(prefixed(keys)); }
int64_t PrefixStore::num_keys() { return store_->num_keys(); }
void PrefixStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  store_->wait(prefixed(keys), timeout);
}
void PrefixStore::set_timeout(std::chrono::milliseconds timeout) {
  Store::set_timeout(timeout);
  store_->set_timeout(timeout);
}

}  // namespace c10d::inline tessera
