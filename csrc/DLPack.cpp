// DLPack both ways, without copies: Tensor.__dlpack__ hands out a "dltensor" capsule whose
// DLManagedTensor keeps the tensor alive; tessera._C._from_dlpack takes one (from torch,
// numpy, ...) and builds a tensor over its memory, calling its deleter when the last
// tensor lets go. The structs are DLPack's ABI (dlpack.h, version 0.x unversioned).
#include "python_api.h"

#include <aten/core/TensorUtils.h>
#include <c10/util/Exception.h>
#include <c10/util/safe_numerics.h>

#include <cstdint>
#include <vector>

namespace tessera::python {

namespace {

enum DLDeviceType : int32_t { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3 };
struct DLDevice {
  DLDeviceType device_type;
  int32_t device_id;
};
enum DLDataTypeCode : uint8_t { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLComplex = 5, kDLBool = 6 };
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

constexpr const char* kCapsuleName = "dltensor";
constexpr const char* kUsedCapsuleName = "used_dltensor";

DLDataType dl_type_of(c10::ScalarType t) {
  const auto bits = static_cast<uint8_t>(c10::elementSize(t) * 8);
  switch (t) {
    case c10::kBool: return {kDLBool, 8, 1};
    case c10::kByte: return {kDLUInt, 8, 1};
    case c10::kChar:
    case c10::kShort:
    case c10::kInt:
    case c10::kLong: return {kDLInt, bits, 1};
    case c10::kHalf:
    case c10::kFloat:
    case c10::kDouble: return {kDLFloat, bits, 1};
    case c10::kBFloat16: return {kDLBfloat, 16, 1};
    case c10::kComplexHalf:
    case c10::kComplexFloat:
    case c10::kComplexDouble: return {kDLComplex, bits, 1};
    default: TORCH_CHECK_TYPE(false, "DLPack has no type for ", t);
  }
}

c10::ScalarType scalar_type_of(DLDataType t) {
  TORCH_CHECK(t.lanes == 1, "tessera does not support DLPack tensors with lanes != 1");
  switch (t.code) {
    case kDLBool:
      if (t.bits == 8) return c10::kBool;
      break;
    case kDLUInt:
      if (t.bits == 8) return c10::kByte;
      break;
    case kDLInt:
      if (t.bits == 8) return c10::kChar;
      if (t.bits == 16) return c10::kShort;
      if (t.bits == 32) return c10::kInt;
      if (t.bits == 64) return c10::kLong;
      break;
    case kDLFloat:
      if (t.bits == 16) return c10::kHalf;
      if (t.bits == 32) return c10::kFloat;
      if (t.bits == 64) return c10::kDouble;
      break;
    case kDLBfloat:
      if (t.bits == 16) return c10::kBFloat16;
      break;
    case kDLComplex:
      if (t.bits == 32) return c10::kComplexHalf;
      if (t.bits == 64) return c10::kComplexFloat;
      if (t.bits == 128) return c10::kComplexDouble;
      break;
    default:
      break;
  }
  TORCH_CHECK(false, "Unsupported DLPack data type: code ", int(t.code), ", ", int(t.bits), " bits");
}

DLDevice dl_device_of(c10::Device d) {
  switch (d.type()) {
    case c10::DeviceType::CPU: return {kDLCPU, 0};
    case c10::DeviceType::CUDA: return {kDLCUDA, static_cast<int32_t>(d.has_index() ? d.index() : 0)};
    default: TORCH_CHECK(false, "Cannot pack tensors on ", d, " into DLPack");
  }
}

c10::Device device_of(DLDevice d) {
  switch (d.device_type) {
    case kDLCPU:
    case kDLCUDAHost: return c10::Device(c10::kCPU);
    case kDLCUDA: return c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(d.device_id));
    default: TORCH_CHECK(false, "Unsupported DLPack device type: ", int(d.device_type));
  }
}

// What an exported capsule owns: the tensor and the shape/stride arrays its DLTensor points at.
struct Exported {
  at::Tensor tensor;
  std::vector<int64_t> shape, strides;
  DLManagedTensor managed;
};

void delete_exported(DLManagedTensor* self) { delete static_cast<Exported*>(self->manager_ctx); }

// A capsule nobody consumed still owns its tensor.
void capsule_destructor(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, kCapsuleName)) return;  // consumed ("used_dltensor")
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsuleName));
  if (managed && managed->deleter) managed->deleter(managed);
}

void release_imported(void* ctx) {
  auto* managed = static_cast<DLManagedTensor*>(ctx);
  if (!managed->deleter) return;
  // Producers' deleters may touch Python objects (numpy's does).
  if (Py_IsInitialized()) {
    PyGILState_STATE gil = PyGILState_Ensure();
    managed->deleter(managed);
    PyGILState_Release(gil);
  } else {
    managed->deleter(managed);
  }
}

}  // namespace

PyObject* tensor_to_dlpack(const at::Tensor& t) {
  check_plain_geometry(t, OpaqueAccess::Data);
  check_plain_geometry(t, OpaqueAccess::Strides);
  TORCH_CHECK(!t.requires_grad(), "Can't export tensors that require gradient, use tensor.detach()");
  // The consumer would read raw memory; torch 1.13 refuses only conj (and exports neg views wrong).
  TORCH_CHECK(!t.is_conj(), "Can't export tensors with the conjugate bit set");
  TORCH_CHECK(!t.is_neg(), "Can't export tensors with the negative bit set");
  auto* e = new Exported{t, t.sizes().vec(), t.strides().vec(), {}};
  DLTensor& dl = e->managed.dl_tensor;
  try {
    dl.data = t.numel() ? t.data_ptr() : nullptr;
    dl.device = dl_device_of(t.device());
    dl.dtype = dl_type_of(t.scalar_type());
  } catch (...) {
    delete e;
    throw;
  }
  dl.ndim = static_cast<int32_t>(t.dim());
  dl.shape = e->shape.data();
  dl.strides = e->strides.data();
  dl.byte_offset = 0;
  e->managed.manager_ctx = e;
  e->managed.deleter = delete_exported;
  PyObject* capsule = PyCapsule_New(&e->managed, kCapsuleName, capsule_destructor);
  if (!capsule) {
    delete e;
    throw python_error();
  }
  return capsule;
}

PyObject* tensor_dlpack_device(const at::Tensor& t) {
  const DLDevice d = dl_device_of(t.device());
  return Py_BuildValue("(ii)", static_cast<int>(d.device_type), static_cast<int>(d.device_id));
}

at::Tensor tensor_from_dlpack(PyObject* capsule) {
  TORCH_CHECK(PyCapsule_IsValid(capsule, kCapsuleName),
              "from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed only once, so you "
              "might have already constructed a tensor from it once.");
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsuleName));
  const DLTensor& dl = managed->dl_tensor;
  const c10::ScalarType dtype = scalar_type_of(dl.dtype);
  const c10::Device device = device_of(dl.device);
  TORCH_CHECK(dl.ndim >= 0 && (dl.ndim == 0 || dl.shape != nullptr), "from_dlpack: invalid DLTensor: ndim ", dl.ndim,
              dl.shape ? "" : " with no shape array");
  std::vector<int64_t> sizes(dl.shape, dl.shape + dl.ndim);
  std::vector<int64_t> strides;
  if (dl.strides) {
    strides.assign(dl.strides, dl.strides + dl.ndim);
  } else {  // a null strides array means compact row-major
    strides.assign(static_cast<size_t>(dl.ndim), 1);
    for (int32_t d = dl.ndim - 2; d >= 0; --d) {
      TORCH_CHECK(!c10::mul_overflows(strides[d + 1], std::max<int64_t>(sizes[d + 1], 1), &strides[d]),
                  "from_dlpack: the element count of shape ", c10::IntArrayRef(sizes), " overflows");
    }
  }
  // from_blob checks the sizes and strides (computeStorageNbytes) before anything is made.
  void* data = static_cast<char*>(dl.data) + dl.byte_offset;
  // The capsule is consumed first: from here on the tensor's storage owns `managed`.
  if (PyCapsule_SetName(capsule, kUsedCapsuleName) != 0) throw python_error();
  c10::DataPtr ptr(data, managed, release_imported, device);
  return at::from_blob(std::move(ptr), sizes, strides, dtype);
}

namespace {

PyObject* dlpack_method(PyObject* self, PyObject* args, PyObject* kwargs) {
  HANDLE_TH_ERRORS
  static const char* names[] = {"stream", nullptr};
  PyObject* stream = Py_None;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$O:__dlpack__", const_cast<char**>(names), &stream)) return nullptr;
  const at::Tensor& t = unwrap(self);
  TORCH_CHECK(stream == Py_None || !t.is_cpu(), "stream must be None for CPU tensors");
  return tensor_to_dlpack(t);
  END_HANDLE_TH_ERRORS
}

PyObject* dlpack_device_method(PyObject* self, PyObject*) {
  HANDLE_TH_ERRORS
  return tensor_dlpack_device(unwrap(self));
  END_HANDLE_TH_ERRORS
}

PyObject* from_dlpack_fn(PyObject*, PyObject* capsule) {
  HANDLE_TH_ERRORS
  return wrap(tensor_from_dlpack(capsule));
  END_HANDLE_TH_ERRORS
}

PyMethodDef tensor_methods[] = {
    {"__dlpack__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(dlpack_method)), METH_VARARGS | METH_KEYWORDS,
     "__dlpack__(*, stream=None): a DLPack capsule sharing this tensor's memory."},
    {"__dlpack_device__", dlpack_device_method, METH_NOARGS, "(DLPack device type, device index)."},
    {nullptr, nullptr, 0, nullptr}};

PyMethodDef module_functions[] = {
    {"_from_dlpack", from_dlpack_fn, METH_O, "A tensor over the memory of a DLPack capsule (consumed)."},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

PyMethodDef* dlpack_tensor_methods() { return tensor_methods; }
PyMethodDef* dlpack_functions() { return module_functions; }

}  // namespace tessera::python
