// StorageImpl: one reference-counted allocation of bytes that tensors view. Storage is
// the handle; several tensors (views) share one StorageImpl.
#pragma once

#include <c10/core/Allocator.h>
#include <c10/util/intrusive_ptr.h>

#include <cstddef>

namespace c10::inline tessera {

class C10_API StorageImpl : public intrusive_ptr_target {
 public:
  struct use_byte_size_t {};

  // Adopts existing memory (from_blob, a numpy array, another allocator's block).
  StorageImpl(use_byte_size_t, size_t nbytes, DataPtr data_ptr, Allocator* allocator, bool resizable);
  // Allocates nbytes from the allocator.
  StorageImpl(use_byte_size_t, size_t nbytes, Allocator* allocator, bool resizable);
  ~StorageImpl() override;

  size_t nbytes() const { return nbytes_; }
  void set_nbytes(size_t nbytes) { nbytes_ = nbytes; }
  bool resizable() const { return resizable_; }
  Allocator* allocator() const { return allocator_; }

  const DataPtr& data_ptr() const { return data_ptr_; }
  // Installs new memory and returns the old, which the caller frees or keeps.
  DataPtr set_data_ptr(DataPtr&& data_ptr);
  void* data() const { return data_ptr_.get(); }
  Device device() const { return data_ptr_.device(); }
  DeviceType device_type() const { return data_ptr_.device().type(); }

  // The memory goes as soon as the last tensor does, even while weak references remain.
  void release_resources() override;

 private:
  DataPtr data_ptr_;
  size_t nbytes_;
  bool resizable_;
  Allocator* allocator_;
};

class C10_API Storage {
 public:
  Storage() = default;
  explicit Storage(intrusive_ptr<StorageImpl> impl) : impl_(std::move(impl)) {}
  Storage(StorageImpl::use_byte_size_t tag, size_t nbytes, Allocator* allocator, bool resizable = false)
      : impl_(make_intrusive<StorageImpl>(tag, nbytes, allocator, resizable)) {}

  bool defined() const { return static_cast<bool>(impl_); }
  StorageImpl* unsafeGetStorageImpl() const { return impl_.get(); }
  const intrusive_ptr<StorageImpl>& getIntrusivePtr() const { return impl_; }
  size_t nbytes() const { return impl_->nbytes(); }
  void* data() const { return impl_->data(); }
  Device device() const { return impl_->device(); }
  bool is_alias_of(const Storage& other) const { return impl_ == other.impl_; }
  size_t use_count() const { return impl_.use_count(); }

 private:
  intrusive_ptr<StorageImpl> impl_;
};

}  // namespace c10::inline tessera
