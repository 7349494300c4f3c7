#include <c10/core/StorageImpl.h>

namespace c10::inline tessera {

StorageImpl::StorageImpl(use_byte_size_t, size_t nbytes, DataPtr data_ptr, Allocator* allocator, bool resizable)
    : data_ptr_(std::move(data_ptr)), nbytes_(nbytes), resizable_(resizable), allocator_(allocator) {
  TORCH_CHECK(!resizable || allocator != nullptr, "a resizable storage needs an allocator");
}

StorageImpl::StorageImpl(use_byte_size_t tag, size_t nbytes, Allocator* allocator, bool resizable)
    : StorageImpl(tag, nbytes, allocator->allocate(nbytes), allocator, resizable) {}

StorageImpl::~StorageImpl() = default;

DataPtr StorageImpl::set_data_ptr(DataPtr&& data_ptr) {
  DataPtr old = std::move(data_ptr_);
  data_ptr_ = std::move(data_ptr);
  return old;
}

void StorageImpl::release_resources() {
  data_ptr_.clear();
  nbytes_ = 0;
}

}  // namespace c10::inline tessera
