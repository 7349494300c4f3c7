// Python's t[index] and t[index] = value, with torch's (and numpy's) rules. Basic indices
// (ints, slices, None, Ellipsis) become views (select, slice, unsqueeze); advanced ones
// (index tensors, lists, bool masks, Python bools) are gathered per dimension and handed
// to aten::index / aten::index_put_ in one call, which broadcasts them and places the
// indexed dims where torch does. Every step is an operator, so autograd records it.
#include "TorchFunction.h"
#include "python_api.h"

#include <aten/core/TensorUtils.h>
#include <aten/ops/Functions.h>
#include <c10/util/Exception.h>

#include <string>
#include <vector>

namespace tessera::python {

namespace {

// An int (or numpy integer scalar); numpy arrays also have __index__ but index as tensors.
bool is_int_index(PyObject* obj) {
  return !PyBool_Check(obj) && !is_tensor(obj) && !is_numpy_array(obj) && PyIndex_Check(obj);
}

// A 0-dim integer tensor indexes like the int it holds (a view, through select).
bool is_scalar_int_tensor(PyObject* obj) {
  if (!is_tensor(obj)) return false;
  const at::Tensor& t = unwrap(obj);
  return t.dim() == 0 && c10::isIntegralType(t.scalar_type(), /*includeBool=*/false) && t.scalar_type() != c10::kByte;
}

// A list (or ndarray) used as an index: a bool/uint8 mask, else int64 (torch converts
// other element types, and an empty list, to int64).
at::Tensor sequence_index(PyObject* obj, c10::Device device) {
  at::Tensor t = tensor_from_data(obj, std::nullopt, device);
  if (t.scalar_type() == c10::kBool || t.scalar_type() == c10::kByte) return t;
  return t.scalar_type() == c10::kLong ? t : t.to(c10::kLong);
}

int64_t to_int64(PyObject* obj) {
  PyObject* index = PyNumber_Index(obj);
  if (!index) throw python_error();
  long long v = PyLong_AsLongLong(index);
  Py_DECREF(index);
  if (v == -1 && PyErr_Occurred()) throw python_error();
  return v;
}

// numpy's rule, kept by torch: a list (not a tuple) holding slices, None, Ellipsis,
// tensors or sequences is several indices; any other list is one index tensor.
bool sequence_is_tuple(PyObject* index) {
  if (PyTuple_Check(index)) return true;
  if (is_tensor(index) || !PySequence_Check(index) || PyUnicode_Check(index) || PyBytes_Check(index)) return false;
  if (is_numpy_array(index)) return false;
  Py_ssize_t n = PySequence_Size(index);
  if (n < 0) throw python_error();
  if (n >= 32) return false;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PySequence_GetItem(index, i);
    if (!item) throw python_error();
    const bool several = item == Py_None || item == Py_Ellipsis || PySlice_Check(item) || is_tensor(item) ||
                         (PySequence_Check(item) && !PyUnicode_Check(item));
    Py_DECREF(item);
    if (several) return true;
  }
  return false;
}

bool is_mask(const at::Tensor& t) { return t.scalar_type() == c10::kBool || t.scalar_type() == c10::kByte; }

// How many of self's dims the indices consume (masks consume one per mask dim).
int64_t count_specified_dims(const std::vector<PyObject*>& items) {
  int64_t count = 0;
  for (PyObject* item : items) {
    if (item == Py_None || item == Py_Ellipsis || PyBool_Check(item)) continue;
    if (is_tensor(item)) {
      const at::Tensor& t = unwrap(item);
      count += is_mask(t) ? t.dim() : 1;
    } else {
      ++count;
    }
  }
  return count;
}

// The index tensor standing for a Python bool (or a 0-dim mask) at a new size-1 dim.
at::Tensor bool_index(bool value, c10::Device device) {
  return value ? at::zeros({1}, at::TensorOptions(c10::kLong).device(device))
               : at::empty({0}, at::TensorOptions(c10::kLong).device(device));
}

// t[...] and t[()]: a new view of all of t whose backward is the identity.
at::Tensor alias_of(const at::Tensor& t) {
  return t.dim() == 0 ? t.view(c10::IntArrayRef{}) : at::slice(t, 0, std::nullopt, std::nullopt, 1);
}

// The basic part of an indexing applied as views, and the advanced indices it leaves for
// aten::index / index_put_, by position in the sliced tensor (nullopt: untouched dim).
struct Sliced {
  at::Tensor tensor;
  std::vector<std::optional<at::Tensor>> indices;
  bool any_index = false;
};

void record(Sliced& s, int64_t dim, at::Tensor index) {
  if (static_cast<int64_t>(s.indices.size()) <= dim) s.indices.resize(static_cast<size_t>(dim + 1));
  s.indices[static_cast<size_t>(dim)] = std::move(index);
  s.any_index = true;
}

Sliced apply_slicing(const at::Tensor& self, PyObject* index) {
  std::vector<PyObject*> items;
  PyObject* seq = nullptr;
  if (sequence_is_tuple(index)) {
    seq = PySequence_Tuple(index);
    if (!seq) throw python_error();
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(seq); ++i) items.push_back(PyTuple_GET_ITEM(seq, i));
  } else {
    items.push_back(index);
  }
  struct TupleRef {
    PyObject* p;
    ~TupleRef() { Py_XDECREF(p); }
  } hold{seq};

  const int64_t ndim = self.dim();
  const int64_t specified = count_specified_dims(items);
  if (ndim == 0 && specified > 0 && items.size() == 1 && is_int_index(items[0])) {
    TORCH_CHECK_INDEX(false, "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ "
                      "to convert a 0-dim tensor to a number");
  }
  TORCH_CHECK_INDEX(specified <= ndim, "too many indices for tensor of dimension ", ndim);

  Sliced s{self, {}, false};
  int64_t dim = 0, real_dim = 0;  // dim in the result so far; dim of self it reads
  bool seen_ellipsis = false;
  for (PyObject* item : items) {
    if (is_int_index(item) || is_scalar_int_tensor(item)) {
      const int64_t i = is_tensor(item) ? unwrap(item).item().toLong() : to_int64(item), size = s.tensor.size(dim);
      // (a nested tensor's select kernel checks the index against its own sizes)
      TORCH_CHECK_INDEX(s.tensor.is_nested() || (i >= -size && i < size), "index ", i,
                        " is out of bounds for dimension ", real_dim, " with size ", size);
      s.tensor = s.tensor.select(dim, i);
      ++real_dim;
    } else if (PySlice_Check(item)) {
      Py_ssize_t start = 0, stop = 0, step = 0;
      if (PySlice_Unpack(item, &start, &stop, &step) < 0) throw python_error();
      TORCH_CHECK_VALUE(step > 0, "step must be greater than zero");
      s.tensor = at::slice(s.tensor, dim, start, stop, step);
      ++dim;
      ++real_dim;
    } else if (item == Py_Ellipsis) {
      TORCH_CHECK_INDEX(!seen_ellipsis, "an index can only have a single ellipsis ('...')");
      seen_ellipsis = true;
      dim += ndim - specified;
      real_dim += ndim - specified;
    } else if (item == Py_None) {
      s.tensor = s.tensor.unsqueeze(dim);
      ++dim;
    } else if (PyBool_Check(item)) {
      s.tensor = s.tensor.unsqueeze(dim);
      record(s, dim, bool_index(item == Py_True, self.device()));
      ++dim;
    } else if (is_tensor(item) || PySequence_Check(item)) {
      at::Tensor t = is_tensor(item) ? unwrap(item) : sequence_index(item, self.device());
      if (is_mask(t) && t.dim() == 0) {
        s.tensor = s.tensor.unsqueeze(dim);
        record(s, dim, bool_index(t.item().toBool(), self.device()));
        ++dim;
        continue;
      }
      const int64_t consumed = is_mask(t) ? t.dim() : 1;
      record(s, dim, std::move(t));
      dim += consumed;
      real_dim += consumed;
    } else {
      TORCH_CHECK_INDEX(false, "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
                        "indices (got ", Py_TYPE(item)->tp_name, ")");
    }
  }
  return s;
}

// The assigned value: a tensor as given, a number as a 0-dim tensor of self's dtype.
at::Tensor value_to_tensor(const at::Tensor& self, PyObject* value) {
  if (is_tensor(value)) return unwrap(value);
  c10::Scalar number;
  TORCH_CHECK_TYPE(number_to_scalar(value, number), "can't assign a ", Py_TYPE(value)->tp_name, " to a ",
                   at::tensor_type_string(self));
  at::Tensor v = at::empty({}, self.options());
  v.fill_(number);
  return v;
}

// value without its leading size-1 dims: `t[0] = v[None]` assigns like `t[0] = v`.
at::Tensor drop_leading_ones(const at::Tensor& value) {
  int64_t lead = 0;
  while (lead < value.dim() && value.size(lead) == 1) ++lead;
  if (lead == 0) return value;
  return value.view(value.sizes().slice(static_cast<size_t>(lead)));
}

void copy_to(const at::Tensor& dst, const at::Tensor& src) {
  if (dst.sizes().equals(src.sizes())) {
    dst.copy_(src);
  } else if (src.dim() == 0) {
    dst.fill_(src);
  } else {
    dst.copy_(drop_leading_ones(src).expand(dst.sizes()));
  }
}

}  // namespace

namespace {
// An index that overrides __torch_function__: the object itself or an element of a tuple.
bool index_has_torch_function(PyObject* index) {
  if (PyTuple_Check(index)) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(index); ++i) {
      if (is_overloaded(PyTuple_GET_ITEM(index, i))) return true;
    }
    return false;
  }
  return is_overloaded(index);
}

// As torch hands an overriding index to __torch_function__: always as a tuple.
PyObject* as_index_tuple(PyObject* index) {
  if (PyTuple_Check(index)) {
    Py_INCREF(index);
    return index;
  }
  return PyTuple_Pack(1, index);
}
}  // namespace

PyObject* tensor_getitem(PyObject* self, PyObject* index) {
  HANDLE_TH_ERRORS
  if (C10_UNLIKELY(self_has_torch_function(self))) return handle_operator_torch_function("__getitem__", nullptr, self, index);
  if (C10_UNLIKELY(index_has_torch_function(index))) {
    PyObject* wrapped = as_index_tuple(index);
    if (!wrapped) return nullptr;
    PyObject* result = handle_operator_torch_function("__getitem__", nullptr, self, wrapped);
    Py_DECREF(wrapped);
    return result;
  }
  const at::Tensor& t = unwrap(self);
  // The common single-index forms without building a tuple.
  if (is_int_index(index) && t.dim() > 0) {
    const int64_t i = to_int64(index), size = t.size(0);
    TORCH_CHECK_INDEX(t.is_nested() || (i >= -size && i < size), "index ", i,
                      " is out of bounds for dimension 0 with size ", size);
    return wrap(t.select(0, i));
  }
  if (index == Py_None) return wrap(t.unsqueeze(0));
  if (index == Py_Ellipsis) return wrap(alias_of(t));
  Sliced s = apply_slicing(t, index);
  if (s.any_index) return wrap(at::index(s.tensor, s.indices));
  return wrap(s.tensor.is_same(t) ? alias_of(t) : std::move(s.tensor));
  END_HANDLE_TH_ERRORS
}

int tensor_setitem(PyObject* self, PyObject* index, PyObject* value) {
  try {
    TORCH_CHECK_TYPE(value != nullptr, "Tensor does not support deleting items");
    // (torch hands __setitem__ the index as it came; only __getitem__ wraps it in a tuple)
    if (C10_UNLIKELY(self_has_torch_function(self) || index_has_torch_function(index) || is_overloaded(value))) {
      PyObject* args = PyTuple_Pack(2, index, value);
      if (!args) return -1;
      PyObject* result = handle_method_torch_function(self, "__setitem__", args, nullptr);
      Py_DECREF(args);
      if (!result) return -1;
      Py_DECREF(result);
      return 0;
    }
    const at::Tensor& t = unwrap(self);
    TORCH_CHECK_NOT_IMPLEMENTED(!t.is_nested(), "item assignment is not supported on nested tensors");
    at::Tensor v = value_to_tensor(t, value);
    if (is_int_index(index) && t.dim() > 0) {
      const int64_t i = to_int64(index), size = t.size(0);
      TORCH_CHECK_INDEX(i >= -size && i < size, "index ", i, " is out of bounds for dimension 0 with size ", size);
      copy_to(t.select(0, i), v);
      return 0;
    }
    Sliced s = apply_slicing(t, index);
    if (!s.any_index) {
      copy_to(s.tensor, v);
      return 0;
    }
    at::Tensor target = s.tensor;
    target.index_put_(s.indices, drop_leading_ones(v));
    return 0;
  } catch (...) {
    set_python_error();
    return -1;
  }
}

}  // namespace tessera::python
