// FileStore: every operation opens the log, takes the lock, replays what other processes
// appended since this one last looked, then appends its own record.
#include <distributed/FileStore.h>
#include <distributed/TCPProtocol.h>

#include <c10/util/Exception.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

namespace c10d::inline tessera {

namespace {
constexpr const char* kCleanupKey = "cleanup/";
constexpr const char* kUserPrefix = "/";
enum Record : uint8_t { kSet = 0, kDelete = 1 };
}  // namespace

class FileStore::Locked {
 public:
  explicit Locked(FileStore& store) : store_(store) {
    fd_ = ::open(store.path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    TORCH_CHECK(fd_ >= 0, "FileStore: cannot open ", store.path_, " (", tcp::errno_text(errno), ")");
    while (::flock(fd_, LOCK_EX) != 0) {
      TORCH_CHECK(errno == EINTR, "FileStore: cannot lock ", store.path_, " (", tcp::errno_text(errno), ")");
    }
    refresh();
  }
  ~Locked() {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }

  void append(Record kind, const std::string& key, const Bytes& value) {
    std::string rec(1, static_cast<char>(kind));
    tcp::put_arg(rec, key);
    tcp::put_arg(rec, value);
    const off_t end = ::lseek(fd_, 0, SEEK_END);
    TORCH_CHECK(end >= 0 && static_cast<size_t>(end) == store_.read_up_to_,
                "FileStore: ", store_.path_, " changed under its lock");
    const char* p = rec.data();
    size_t n = rec.size();
    while (n > 0) {
      const ssize_t k = ::write(fd_, p, n);
      if (k < 0 && errno == EINTR) continue;
      TORCH_CHECK(k > 0, "FileStore: cannot write ", store_.path_, " (", tcp::errno_text(errno), ")");
      p += k;
      n -= static_cast<size_t>(k);
    }
    store_.read_up_to_ += rec.size();
    apply(kind, key, value);
  }

 private:
  void apply(Record kind, const std::string& key, const Bytes& value) {
    if (kind == kSet) {
      store_.cache_[key] = value;
    } else {
      store_.cache_.erase(key);
    }
  }

  void refresh() {
    struct stat st {};
    TORCH_CHECK(::fstat(fd_, &st) == 0, "FileStore: cannot stat ", store_.path_);
    const size_t size = static_cast<size_t>(st.st_size);
    if (size < store_.read_up_to_) {  // the file was removed and made again: start over
      store_.read_up_to_ = 0;
      store_.cache_.clear();
    }
    if (size == store_.read_up_to_) return;
    std::string log(size - store_.read_up_to_, '\0');
    const ssize_t got = ::pread(fd_, log.data(), log.size(), static_cast<off_t>(store_.read_up_to_));
    TORCH_CHECK(got == static_cast<ssize_t>(log.size()), "FileStore: cannot read ", store_.path_);
    size_t pos = 0;
    auto field = [&](std::string& out) {  // a u64 length and its bytes
      uint64_t len = 0;
      TORCH_CHECK(log.size() - pos >= sizeof(len), "FileStore: ", store_.path_, " is truncated or corrupt");
      std::memcpy(&len, log.data() + pos, sizeof(len));
      pos += sizeof(len);
      TORCH_CHECK(log.size() - pos >= len, "FileStore: ", store_.path_, " is truncated or corrupt");
      out.assign(log, pos, len);
      pos += len;
    };
    std::string key, value;
    while (pos < log.size()) {
      const auto kind = static_cast<Record>(log[pos++]);
      field(key);
      field(value);
      apply(kind, key, Bytes(value.begin(), value.end()));
    }
    store_.read_up_to_ = size;
  }

  FileStore& store_;
  int fd_ = -1;
};

FileStore::FileStore(std::string path, int64_t num_workers) : path_(std::move(path)), num_workers_(num_workers) {
  std::lock_guard<std::mutex> g(mu_);
  Locked file(*this);  // fails here, not at first use, when the path is not writable
}

FileStore::~FileStore() {
  try {
    const int64_t finished = add_raw(kCleanupKey, 1);
    if (num_workers_ == -1 || finished >= num_workers_) ::unlink(path_.c_str());
  } catch (const std::exception&) {
    // the file is gone already, or its directory: nothing to clean up
  }
}

int64_t FileStore::add_raw(const std::string& key, int64_t value) {
  std::lock_guard<std::mutex> g(mu_);
  Locked file(*this);
  auto it = cache_.find(key);
  const int64_t now = value + (it == cache_.end() ? 0 : parse_counter(it->second));
  file.append(kSet, key, counter_bytes(now));
  return now;
}

void FileStore::set(const std::string& key, const Bytes& value) {
  std::lock_guard<std::mutex> g(mu_);
  Locked file(*this);
  file.append(kSet, kUserPrefix + key, value);
}

Bytes FileStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  std::lock_guard<std::mutex> g(mu_);
  Locked file(*this);
  auto it = cache_.find(kUserPrefix + key);
  if (it == cache_.end()) {
    if (!expected.empty()) return expected;
  } else if (it->second != expected) {
    return it->second;
  }
  file.append(kSet, kUserPrefix + key, desired);
  return desired;
}

Bytes FileStore::get(const std::string& key) {
  wait({key}, timeout_);
  std::lock_guard<std::mutex> g(mu_);
  Locked file(*this);
  auto it = cache_.find(kUserPrefix + key);
  TORCH_CHECK(it != cache_.end(), "FileStore: key ", key, " was deleted while get() waited for it");
  return it->second;
}

int64_t FileStore::add(const std::string& key, int64_t value) { return add_raw(kUserPrefix + key, value); }

bool FileStore::delete_key(const std::string& key) {
  std::lock_guard<std::mutex> g(mu_);
  Locked file(*this);
  // torch's FileStore reports true whether or not the key existed; so does this one.
  if (cache_.count(kUserPrefix + key)) file.append(kDelete, kUserPrefix + key, {});
  return true;
}

bool FileStore::check(const std::vector<std::string>& keys) {
  std::lock_guard<std::mutex> g(mu_);
  Locked file(*this);
  for (const auto& k : keys) {
    if (!cache_.count(kUserPrefix + k)) return false;
  }
  return true;
}

int64_t FileStore::num_keys() {
  std::lock_guard<std::mutex> g(mu_);
  Locked file(*this);
  return static_cast<int64_t>(cache_.size());
}

void FileStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  const auto start = std::chrono::steady_clock::now();
  while (!check(keys)) {
    if (timeout != kNoTimeout && std::chrono::steady_clock::now() - start >= timeout) throw_timeout(keys, timeout);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace c10d::inline tessera
