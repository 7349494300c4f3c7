// torchvision::nms: greedy non-maximum suppression. Boxes (x1, y1, x2, y2) are visited by
// descending score; a box is kept unless it overlaps an already kept one with an IoU
// above the threshold. Returns the kept indices (int64) in score order. Not
// differentiable (an index set); the Meta kernel refuses, as the output's length depends
// on the values.
#include <aten/core/Dispatch.h>

#include "VisionOps.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace tessera_vision {
namespace {

void check_nms_inputs(const at::Tensor& dets, const at::Tensor& scores) {
  TORCH_CHECK(dets.dim() == 2, "boxes should be a 2d tensor, got ", dets.dim(), "D");
  TORCH_CHECK(dets.size(1) == 4, "boxes should have 4 elements in dimension 1, got ", dets.size(1));
  TORCH_CHECK(scores.dim() == 1, "scores should be a 1d tensor, got ", scores.dim(), "D");
  TORCH_CHECK(dets.size(0) == scores.size(0), "boxes and scores should have same number of elements in dimension 0, got ",
              dets.size(0), " and ", scores.size(0));
  TORCH_CHECK(dets.scalar_type() == scores.scalar_type(), "dets should have the same type as scores");
}

at::Tensor nms_cpu(const at::Tensor& dets_, const at::Tensor& scores_, double iou_threshold) {
  check_nms_inputs(dets_, scores_);
  const int64_t n = dets_.size(0);
  if (n == 0) return at::empty({0}, dets_.options().dtype(at::kLong));
  const at::Tensor dets = dets_.contiguous(), scores = scores_.contiguous();
  std::vector<int64_t> kept;
  at::dispatch_types<at::kFloating>(dets.scalar_type(), "nms_kernel", [&]<typename T>() {
    const T* b = dets.data_ptr<T>();
    const T* s = scores.data_ptr<T>();
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), int64_t{0});
    // descending score, NaN first (as torch's descending sort puts it); ties keep index
    // order (a stable sort, as torch's CPU sort is)
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t c) {
      const bool a_nan = std::isnan(s[a]), c_nan = std::isnan(s[c]);
      return a_nan != c_nan ? a_nan : s[a] > s[c];
    });
    std::vector<T> area(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) area[i] = (b[i * 4 + 2] - b[i * 4]) * (b[i * 4 + 3] - b[i * 4 + 1]);
    std::vector<char> suppressed(static_cast<size_t>(n), 0);
    for (int64_t oi = 0; oi < n; ++oi) {
      const int64_t i = order[oi];
      if (suppressed[i]) continue;
      kept.push_back(i);
      const T ix1 = b[i * 4], iy1 = b[i * 4 + 1], ix2 = b[i * 4 + 2], iy2 = b[i * 4 + 3];
      for (int64_t oj = oi + 1; oj < n; ++oj) {
        const int64_t j = order[oj];
        if (suppressed[j]) continue;
        const T w = std::max(T(0), std::min(ix2, b[j * 4 + 2]) - std::max(ix1, b[j * 4]));
        const T h = std::max(T(0), std::min(iy2, b[j * 4 + 3]) - std::max(iy1, b[j * 4 + 1]));
        const T inter = w * h;
        const T iou = inter / (area[i] + area[j] - inter);
        if (iou > iou_threshold) suppressed[j] = 1;
      }
    }
  });
  at::Tensor out = at::empty({static_cast<int64_t>(kept.size())}, dets.options().dtype(at::kLong));
  std::copy(kept.begin(), kept.end(), out.data_ptr<int64_t>());
  return out;
}

at::Tensor nms_meta(const at::Tensor& dets, const at::Tensor& scores, double) {
  check_nms_inputs(dets, scores);
  TORCH_CHECK_NOT_IMPLEMENTED(false, "torchvision::nms cannot run on the Meta device: how many boxes it keeps depends "
                                     "on their values");
}

}  // namespace
}  // namespace tessera_vision

TORCH_LIBRARY_IMPL(torchvision, CPU, m) { m.impl("nms", TORCH_FN(tessera_vision::nms_cpu)); }
TORCH_LIBRARY_IMPL(torchvision, Meta, m) { m.impl("nms", TORCH_FN(tessera_vision::nms_meta)); }
