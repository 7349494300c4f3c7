// einsum as a composite: each operand becomes a strided view with one dim per subscript of
// the whole equation (ellipsis dims first, then the letters; a letter an operand lacks is a
// size-1 dim, a letter it repeats is its diagonal, both without copies), operands are
// contracted two at a time with bmm, and letters no later operand or the output needs are
// summed as soon as their last operand has been contracted. Left to right unless a `path`
// (pairs of operand indices, as opt_einsum gives) says otherwise.
#include <aten/native/NativeFunctions.h>
#include <aten/native/shape/TensorShape.h>
#include <aten/ops/Functions.h>

#include <algorithm>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

namespace at::inline tessera::native {

namespace {

constexpr int kLetters = 52;  // A-Z then a-z, torch's order for the implicit output

int letter_id(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
  return -1;
}
char letter_of(int id) { return static_cast<char>(id < 26 ? 'A' + id : 'a' + (id - 26)); }

constexpr int kEllipsis = -1;

// One side of the equation: subscripts as letter ids, kEllipsis for "...".
struct Term {
  std::vector<int> subs;
  bool has_ellipsis = false;
};

// Parses `text` (starting at offset `base` of the equation, for error positions).
Term parse_term(const std::string& text, size_t base, const std::string& who) {
  Term t;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.') {
      TORCH_CHECK(!t.has_ellipsis, "einsum(): found '.' for ", who, " for which an ellipsis was already found");
      TORCH_CHECK(i + 2 < text.size() && text[i + 1] == '.' && text[i + 2] == '.', "einsum(): found '.' for ", who,
                  " that is not part of any ellipsis");
      t.has_ellipsis = true;
      t.subs.push_back(kEllipsis);
      i += 2;
      continue;
    }
    if (c == ' ') continue;
    const int id = letter_id(c);
    TORCH_CHECK(id >= 0, "einsum(): invalid subscript given at index ", base + i,
                " in the equation string, subscripts must be in [a-zA-Z]");
    t.subs.push_back(id);
  }
  return t;
}

// An operand in the equation's dims: [E ellipsis dims][one per letter used], and which of them
// it really has (others are size 1 there).
struct Operand {
  Tensor t;
  std::vector<bool> has;
};

}  // namespace

Tensor einsum(std::string_view equation_sv, ArrayRef<Tensor> tensors, std::optional<IntArrayRef> path) {
  const std::string eq(equation_sv);
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<Term> terms;
  size_t start = 0;
  for (size_t k = 0;; ++k) {
    const size_t comma = lhs.find(',', start);
    const std::string piece = lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    terms.push_back(parse_term(piece, start, "operand " + std::to_string(k)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  TORCH_CHECK(!tensors.empty(), "einsum(): must provide at least one operand");
  TORCH_CHECK(terms.size() <= tensors.size(), "einsum(): fewer operands were provided than specified in the equation");
  TORCH_CHECK(terms.size() >= tensors.size(), "einsum(): more operands were provided than specified in the equation");

  // Dims each operand's ellipsis covers; the ellipsis dims of all operands broadcast
  // right-aligned into E dims.
  int64_t E = 0;
  for (size_t k = 0; k < terms.size(); ++k) {
    const int64_t named = static_cast<int64_t>(terms[k].subs.size()) - (terms[k].has_ellipsis ? 1 : 0);
    const int64_t ndim = tensors[k].dim();
    if (terms[k].has_ellipsis) {
      TORCH_CHECK(named <= ndim, "einsum(): the number of subscripts in the equation (", named,
                  ") is more than the number of dimensions (", ndim, ") for operand ", k);
      E = std::max(E, ndim - named);
    } else {
      TORCH_CHECK(named == ndim, "einsum(): the number of subscripts in the equation (", named,
                  ") does not match the number of dimensions (", ndim, ") for operand ", k,
                  " and no ellipsis was given");
    }
  }
  // Only the letters the equation uses get dims, in A-Z, a-z order.
  std::vector<int64_t> pos(kLetters, -1);
  int64_t R = E;
  {
    std::vector<bool> used(kLetters, false);
    for (const Term& t : terms) {
      for (int sub : t.subs) {
        if (sub != kEllipsis) used[static_cast<size_t>(sub)] = true;
      }
    }
    for (int sub = 0; sub < kLetters; ++sub) {
      if (used[static_cast<size_t>(sub)]) pos[static_cast<size_t>(sub)] = R++;
    }
  }
  std::vector<int64_t> size_of(static_cast<size_t>(R), 1);
  std::vector<int> count(kLetters, 0);

  std::vector<Operand> ops;
  for (size_t k = 0; k < terms.size(); ++k) {
    const Tensor& x = tensors[k];
    std::vector<int64_t> sizes(static_cast<size_t>(R), 1), strides(static_cast<size_t>(R), 0);
    std::vector<bool> has(static_cast<size_t>(R), false);
    const int64_t covered = x.dim() - (static_cast<int64_t>(terms[k].subs.size()) - (terms[k].has_ellipsis ? 1 : 0));
    int64_t d = 0;
    for (int sub : terms[k].subs) {
      if (sub == kEllipsis) {
        for (int64_t j = 0; j < covered; ++j, ++d) {
          const auto e = static_cast<size_t>(E - covered + j);
          const int64_t s = x.size(d);
          TORCH_CHECK(s == 1 || size_of[e] == 1 || size_of[e] == s, "einsum(): dimension ", j,
                      " covered by ellipsis in operand ", k, "has size ", s,
                      " which does not broadcast with previously seen ellipsis with size ", size_of[e],
                      " for the respective dimension");
          if (s != 1) size_of[e] = s;
          sizes[e] = s;
          strides[e] = x.stride(d);
          has[e] = true;
        }
        continue;
      }
      const auto p = static_cast<size_t>(pos[static_cast<size_t>(sub)]);
      const int64_t s = x.size(d);
      if (has[p]) {
        // A letter repeated in one operand: its diagonal (strides add up).
        TORCH_CHECK(sizes[p] == s, "einsum(): subscript ", letter_of(sub), " is repeated for operand ", k,
                    " but the sizes don't match, ", sizes[p], " != ", s);
        strides[p] += x.stride(d);
        ++count[static_cast<size_t>(sub)];  // used twice: not in the implicit output
      } else {
        TORCH_CHECK(s == 1 || size_of[p] == 1 || size_of[p] == s, "einsum(): subscript ", letter_of(sub),
                    " has size ", s, " for operand ", k, " which does not broadcast with previously seen size ",
                    size_of[p]);
        if (s != 1) size_of[p] = s;
        sizes[p] = s;
        strides[p] = x.stride(d);
        has[p] = true;
        ++count[static_cast<size_t>(sub)];
      }
      ++d;
    }
    ops.push_back({at::as_strided(x, sizes, strides, x.storage_offset()), has});
  }

  // The output's dims, in order.
  std::vector<int64_t> out_dims;
  if (arrow != std::string::npos) {
    const Term out = parse_term(eq.substr(arrow + 2), arrow + 2, "output");
    std::vector<bool> seen(kLetters, false);
    for (int sub : out.subs) {
      if (sub == kEllipsis) {
        for (int64_t e = 0; e < E; ++e) out_dims.push_back(e);
        continue;
      }
      TORCH_CHECK(!seen[static_cast<size_t>(sub)], "einsum(): output subscript ", letter_of(sub),
                  " appears more than once in the output");
      TORCH_CHECK(count[static_cast<size_t>(sub)] > 0, "einsum(): output subscript ", letter_of(sub),
                  " does not appear in the equation for any input operand");
      seen[static_cast<size_t>(sub)] = true;
      out_dims.push_back(pos[static_cast<size_t>(sub)]);
    }
  } else {
    // Implicit output: the ellipsis dims, then letters used exactly once, A-Z before a-z.
    for (int64_t e = 0; e < E; ++e) out_dims.push_back(e);
    for (int sub = 0; sub < kLetters; ++sub) {
      if (count[static_cast<size_t>(sub)] == 1) out_dims.push_back(pos[static_cast<size_t>(sub)]);
    }
  }
  std::vector<bool> in_output(static_cast<size_t>(R), false);
  for (int64_t d : out_dims) in_output[static_cast<size_t>(d)] = true;

  // Contract pairs: by `path`, else left to right.
  std::vector<int64_t> order;
  if (path && !path->empty()) {
    TORCH_CHECK(path->size() == 2 * (ops.size() - 1), "einsum(): path must hold ", ops.size() - 1,
                " pairs of operand indices, got ", path->size(), " values");
    order.assign(path->begin(), path->end());
  } else {
    for (size_t k = 1; k < ops.size(); ++k) order.insert(order.end(), {0, 1});
  }
  for (size_t p = 0; p < order.size(); p += 2) {
    int64_t i = order[p], j = order[p + 1];
    TORCH_CHECK(i != j && i >= 0 && j >= 0 && i < static_cast<int64_t>(ops.size()) &&
                    j < static_cast<int64_t>(ops.size()), "einsum(): invalid contraction path entry (", i, ", ", j, ")");
    if (i > j) std::swap(i, j);
    Operand right = ops[static_cast<size_t>(j)], left = ops[static_cast<size_t>(i)];
    ops.erase(ops.begin() + j);
    ops.erase(ops.begin() + i);
    // Dims summed now: in neither the output nor any operand still waiting.
    std::vector<int64_t> batch, lo, ro, sum, rest;
    std::vector<bool> has(static_cast<size_t>(R), false);
    for (int64_t d = 0; d < R; ++d) {
      const auto u = static_cast<size_t>(d);
      bool needed = in_output[u];
      for (const Operand& o : ops) needed = needed || o.has[u];
      const int64_t ls = left.t.size(d), rs = right.t.size(d);
      has[u] = needed && (left.has[u] || right.has[u]);
      if (!needed && ls != 1 && rs != 1) {
        sum.push_back(d);
        continue;
      }
      // Summed on the one side that has it, the dim is size 1 on both from here.
      if (!needed) {
        if (ls != 1) left.t = left.t.sum(IntArrayRef(&d, 1), true);
        if (rs != 1) right.t = right.t.sum(IntArrayRef(&d, 1), true);
        rest.push_back(d);
      } else if (ls != 1 && rs != 1) {
        batch.push_back(d);
      } else if (ls != 1) {
        lo.push_back(d);
      } else if (rs != 1) {
        ro.push_back(d);
      } else {
        rest.push_back(d);
      }
    }
    auto extent = [](const Tensor& t, const std::vector<int64_t>& dims) {
      int64_t n = 1;
      for (int64_t d : dims) n *= t.size(d);
      return n;
    };
    auto cat = [](std::initializer_list<const std::vector<int64_t>*> parts) {
      std::vector<int64_t> v;
      for (const auto* part : parts) v.insert(v.end(), part->begin(), part->end());
      return v;
    };
    const int64_t B = extent(left.t, batch), M = extent(left.t, lo), K = extent(left.t, sum), N = extent(right.t, ro);
    Tensor a, b;
    if (!sum.empty()) {
      a = left.t.permute(cat({&batch, &lo, &sum, &ro, &rest})).reshape({B, M, K});
      b = right.t.permute(cat({&batch, &sum, &ro, &lo, &rest})).reshape({B, K, N});
    }
    // The product's dims are batch, lo, ro; put them back in equation order, others size 1.
    std::vector<int64_t> kept = cat({&batch, &lo, &ro}), sizes;
    for (int64_t d : batch) sizes.push_back(left.t.size(d));
    for (int64_t d : lo) sizes.push_back(left.t.size(d));
    for (int64_t d : ro) sizes.push_back(right.t.size(d));
    std::vector<int64_t> back(kept.size());
    std::iota(back.begin(), back.end(), 0);
    std::sort(back.begin(), back.end(), [&](int64_t x, int64_t y) { return kept[static_cast<size_t>(x)] < kept[static_cast<size_t>(y)]; });
    std::vector<int64_t> full(static_cast<size_t>(R), 1);
    for (size_t q = 0; q < kept.size(); ++q) full[static_cast<size_t>(kept[q])] = sizes[q];
    // Nothing to sum (an outer or elementwise product): a broadcasting multiply, which
    // also serves dtypes bmm lacks (bool), as torch's einsum does.
    Tensor product = sum.empty() ? at::mul(left.t, right.t)
                                 : at::bmm(a, b).reshape(sizes).permute(back).reshape(full);
    ops.push_back({product, has});
  }

  // The last operand: sum what the output lacks, then order the output's dims.
  Tensor result = ops[0].t;
  std::vector<int64_t> summed;
  for (int64_t d = 0; d < R; ++d) {
    if (!in_output[static_cast<size_t>(d)] && result.size(d) != 1) summed.push_back(d);
  }
  if (!summed.empty()) result = result.sum(IntArrayRef(summed), true);
  std::vector<int64_t> perm = out_dims, out_sizes;
  for (int64_t d = 0; d < R; ++d) {
    if (!in_output[static_cast<size_t>(d)]) perm.push_back(d);
  }
  for (int64_t d : out_dims) out_sizes.push_back(result.size(d));
  return result.permute(perm).reshape(out_sizes);
}

}  // namespace at::inline tessera::native
