// The quantized:: operator namespace: the schemas of torch 1.13's quantized operators that
// tessera implements, exactly as torch declares them. Their kernels register for QuantizedCPU
// and QuantizedMeta in the family files beside this one (BinaryOps.cpp, Activation.cpp,
// Cat.cpp, Pooling.cpp, Normalization.cpp, Linear.cpp, Conv.cpp; the embedding tables, plain
// uint8 tensors, for CPU and Meta in EmbeddingBag.cpp); quantized tensors carry no autograd,
// so no other key has a kernel. The packed weights of the GEMM family are the custom classes
// LinearPackedParamsBase, Conv2dPackedParamsBase and Conv3dPackedParamsBase.
#include <aten/library.h>
#include <aten/native/quantized/PackedConv.h>
#include <aten/native/quantized/PackedLinear.h>

#include <string>

namespace {

// Conv2dPackedParamsBase / Conv3dPackedParamsBase and their methods, as torch registers them.
template <class Packed>
void register_conv_class(torch::Library& m, const char* name, int64_t spatial_dims) {
  using Ptr = c10::intrusive_ptr<Packed>;
  m.class_<Packed>(name)
      .def("unpack", &Packed::unpack)
      .def("weight", [](const Ptr& p) { return p->weight(); })
      .def("bias", [](const Ptr& p) { return p->bias(); })
      .def("stride", [](const Ptr& p) { return p->geometry().stride; })
      .def("padding", [](const Ptr& p) { return p->geometry().padding; })
      .def("output_padding", [](const Ptr& p) { return p->geometry().output_padding; })
      .def("dilation", [](const Ptr& p) { return p->geometry().dilation; })
      .def("groups", [](const Ptr& p) { return p->geometry().groups; })
      .def("transpose", [](const Ptr& p) { return p->geometry().transpose; })
      .def_pickle([](const Ptr& p) { return at::native::conv_packed_state(*p); },
                  [spatial_dims](const c10::IValue& state) {
                    auto [weight, bias, geometry] = at::native::conv_from_state(state, spatial_dims);
                    return c10::make_intrusive<Packed>(weight, bias, geometry);
                  });
}

}  // namespace

TORCH_LIBRARY(quantized, m) {
  using at::native::LinearPackedParamsBase;
  register_conv_class<at::native::Conv2dPackedParams>(m, "Conv2dPackedParamsBase", 2);
  register_conv_class<at::native::Conv3dPackedParams>(m, "Conv3dPackedParamsBase", 3);
  m.class_<LinearPackedParamsBase>("LinearPackedParamsBase")
      .def("unpack", &LinearPackedParamsBase::unpack)
      .def("bias", [](const c10::intrusive_ptr<LinearPackedParamsBase>& self) { return self->bias(); })
      .def_pickle([](const c10::intrusive_ptr<LinearPackedParamsBase>& self) { return self->unpack(); },
                  [](const c10::IValue& state) {
                    const auto items = state.toTupleElements();
                    TORCH_CHECK(items.size() == 2, "a LinearPackedParamsBase state is (weight, bias), got ",
                                items.size(), " items");
                    return LinearPackedParamsBase::prepack(items[0].toTensor(),
                                                           items[1].to<std::optional<at::Tensor>>());
                  });
  m.def("add(Tensor qa, Tensor qb, float scale, int zero_point) -> Tensor qc");
  m.def("add.out(Tensor qa, Tensor qb, Tensor(a!) out) -> Tensor(a!) out");
  m.def("add.Scalar(Tensor qa, Scalar b) -> Tensor qc");
  m.def("add.Scalar2(Scalar b, Tensor qa) -> Tensor qc");
  m.def("add.Scalar_out(Tensor qa, Scalar b, Tensor(a!) out) -> Tensor(a!) out");
  m.def("add_relu(Tensor qa, Tensor qb, float scale, int zero_point) -> Tensor qc");
  m.def("add_relu.out(Tensor qa, Tensor qb, Tensor(a!) out) -> Tensor(a!) out");
  m.def("add_relu.Scalar(Tensor qa, Scalar b) -> Tensor qc");
  m.def("add_relu.Scalar2(Scalar b, Tensor qa) -> Tensor qc");
  m.def("add_relu.Scalar_out(Tensor qa, Scalar b, Tensor(a!) out) -> Tensor(a!) out");
  m.def("mul(Tensor qa, Tensor qb, float scale, int zero_point) -> Tensor qc");
  m.def("mul.out(Tensor qa, Tensor qb, Tensor(a!) out) -> Tensor(a!) out");
  m.def("mul.Scalar(Tensor qa, Scalar b) -> Tensor qc");
  m.def("mul.Scalar2(Scalar b, Tensor qa) -> Tensor qc");
  m.def("mul.Scalar_out(Tensor qa, Scalar b, Tensor(a!) out) -> Tensor(a!) out");
  m.def("mul_relu(Tensor qa, Tensor qb, float scale, int zero_point) -> Tensor qc");
  m.def("mul_relu.out(Tensor qa, Tensor qb, Tensor(a!) out) -> Tensor(a!) out");
  m.def("mul_relu.Scalar(Tensor qa, Scalar b) -> Tensor qc");
  m.def("mul_relu.Scalar2(Scalar b, Tensor qa) -> Tensor qc");
  m.def("mul_relu.Scalar_out(Tensor qa, Scalar b, Tensor(a!) out) -> Tensor(a!) out");
  m.def("add_out(Tensor qa, Tensor qb, Tensor(a!) out) -> Tensor(a!) out");
  m.def("add_relu_out(Tensor qa, Tensor qb, Tensor(a!) out) -> Tensor(a!) out");
  m.def("mul_out(Tensor qa, Tensor qb, Tensor(a!) out) -> Tensor(a!) out");
  m.def("mul_relu_out(Tensor qa, Tensor qb, Tensor(a!) out) -> Tensor(a!) out");
  m.def("add_scalar(Tensor qa, Scalar b) -> Tensor qc");
  m.def("add_scalar.Tensor(Tensor qa, Tensor b) -> Tensor qc");
  m.def("add_scalar_relu(Tensor qa, Scalar b) -> Tensor qc");
  m.def("add_scalar_relu.Tensor(Tensor qa, Tensor b) -> Tensor qc");
  m.def("mul_scalar(Tensor qa, Scalar b) -> Tensor qc");
  m.def("mul_scalar.Tensor(Tensor qa, Tensor b) -> Tensor qc");
  m.def("mul_scalar_relu(Tensor qa, Scalar b) -> Tensor qc");
  m.def("mul_scalar_relu.Tensor(Tensor qa, Tensor b) -> Tensor qc");
  m.def("add_scalar_out(Tensor qa, Scalar b, Tensor(a!) out) -> Tensor(a!) out");
  m.def("add_scalar_out.Tensor(Tensor qa, Tensor b, Tensor(a!) out) -> Tensor(a!) out");
  m.def("add_scalar_relu_out(Tensor qa, Scalar b, Tensor(a!) out) -> Tensor(a!) out");
  m.def("add_scalar_relu_out.Tensor(Tensor qa, Tensor b, Tensor(a!) out) -> Tensor(a!) out");
  m.def("mul_scalar_out(Tensor qa, Scalar b, Tensor(a!) out) -> Tensor(a!) out");
  m.def("mul_scalar_out.Tensor(Tensor qa, Tensor b, Tensor(a!) out) -> Tensor(a!) out");
  m.def("mul_scalar_relu_out(Tensor qa, Scalar b, Tensor(a!) out) -> Tensor(a!) out");
  m.def("mul_scalar_relu_out.Tensor(Tensor qa, Tensor b, Tensor(a!) out) -> Tensor(a!) out");
  m.def(
      "max_pool1d(Tensor qx, int[] kernel_size, int[] stride, int[] padding, int[] dilation, bool ceil_mode) "
      "-> Tensor");
  m.def(
      "max_pool2d(Tensor qx, int[] kernel_size, int[] stride, int[] padding, int[] dilation, bool ceil_mode) "
      "-> Tensor");
  m.def("cat(Tensor[] qx, int dim, float? scale, int? zero_point) -> Tensor");
  m.def("cat_relu(Tensor[] qx, int dim, float? scale, int? zero_point) -> Tensor");
  m.def("cat_out(Tensor[] qx, int dim, Tensor(a!) out) -> Tensor(a!)");
  m.def("cat_relu_out(Tensor[] qx, int dim, Tensor(a!) out) -> Tensor(a!)");
  // the eight batch norms share one signature
  for (const char* name : {"batch_norm", "batch_norm_relu", "batch_norm1d", "batch_norm1d_relu", "batch_norm2d",
                           "batch_norm2d_relu", "batch_norm3d", "batch_norm3d_relu"}) {
    m.def(std::string(name) + "(Tensor qx, Tensor? weight, Tensor? bias, Tensor mean, Tensor var, float eps, "
                              "float output_scale, int output_zero_point) -> Tensor");
  }
  m.def("embedding_bag_byte_prepack(Tensor weight) -> Tensor");
  m.def("embedding_bag_byte_unpack(Tensor weight) -> Tensor");
  for (const char* bits : {"4bit", "2bit"}) {
    m.def(std::string("embedding_bag_") + bits +
          "_prepack(Tensor weight, bool optimized_qparams=False, int nbins=200, float ratio=0.16) -> Tensor");
    m.def(std::string("embedding_bag_") + bits + "_unpack(Tensor weight) -> Tensor");
  }
  for (const char* bits : {"byte", "4bit", "2bit"}) {
    m.def(std::string("embedding_bag_") + bits +
          "_rowwise_offsets(Tensor weight, Tensor indices, Tensor? offsets=None, bool scale_grad_by_freq=False, "
          "int mode=0, bool pruned_weights=False, Tensor? per_sample_weights=None, Tensor? "
          "compressed_indices_mapping=None, bool include_last_offset=False) -> Tensor");
  }
  m.def("layer_norm(Tensor input, int[] normalized_shape, Tensor? weight, Tensor? bias, float eps, "
        "float output_scale, int output_zero_point) -> Tensor");
  m.def("group_norm(Tensor input, int num_groups, Tensor? weight, Tensor? bias, float eps, float output_scale, "
        "int output_zero_point) -> Tensor");
  m.def("instance_norm(Tensor input, Tensor? weight, Tensor? bias, float eps, float output_scale, "
        "int output_zero_point) -> Tensor");
  m.def("relu6(Tensor qx, bool inplace=False) -> Tensor");
  m.def("hardswish(Tensor input, float output_scale, int output_zero_point) -> Tensor");
  m.def("sigmoid(Tensor qx, float output_scale, int output_zero_point) -> Tensor");
  m.def(
      "elu(Tensor self, float output_scale, int output_zero_point, Scalar alpha=1, Scalar scale=1, "
      "Scalar input_scale=1) -> Tensor");
  m.def("celu(Tensor self, float output_scale, int output_zero_point, Scalar alpha=1) -> Tensor");
  m.def(
      "leaky_relu(Tensor qx, Scalar negative_slope, bool inplace, float output_scale, int output_zero_point) "
      "-> Tensor");
  m.def("clamp(Tensor qx, Scalar? min=None, Scalar? max=None) -> Tensor qy");
  m.def("threshold(Tensor qx, Scalar threshold, Scalar value) -> Tensor qy");
  constexpr const char* packed = "__torch__.torch.classes.quantized.LinearPackedParamsBase";
  m.def(std::string("linear_prepack(Tensor W, Tensor? B=None) -> ") + packed + " W_prepack");
  m.def(std::string("linear_unpack(") + packed + " W_prepack) -> (Tensor W_origin, Tensor? B_origin)");
  for (const char* name : {"linear", "linear_relu"}) {
    m.def(std::string(name) + "(Tensor X, " + packed + " W_prepack, float Y_scale_i, int Y_zero_point_i) -> Tensor Y");
  }
  for (const char* name : {"linear_dynamic", "linear_relu_dynamic"}) {
    m.def(std::string(name) + "(Tensor X, " + packed + " W_prepack, bool reduce_range=False) -> Tensor Y");
  }
  for (const char* dims : {"1", "2", "3"}) {
    const std::string cls = std::string("__torch__.torch.classes.quantized.Conv") + (dims[0] == '3' ? "3" : "2") +
                            "dPackedParamsBase";
    const std::string conv = std::string("conv") + dims + "d";
    m.def(conv + "_prepack(Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int groups) -> " +
          cls);
    m.def(conv + "_unpack(" + cls + " packed_weights) -> (Tensor unpacked_weights, Tensor? B_origin)");
    const std::string overload = dims[0] == '1' ? "" : ".new";  // conv1d has no legacy overload
    for (const std::string& name : {conv, conv + "_relu"}) {
      m.def(name + overload + "(Tensor qx, " + cls +
            " packed_weight, float output_scale, int output_zero_point) -> Tensor");
    }
    if (dims[0] != '1') {
      for (const char* getter : {"stride", "padding", "dilation", "output_padding"}) {
        m.def(conv + "_" + getter + "(" + cls + " packed_weights) -> int[]");
      }
      m.def(conv + "_groups(" + cls + " packed_weights) -> int");
      m.def(conv + "_transpose(" + cls + " packed_weights) -> int");
    }
  }
}
