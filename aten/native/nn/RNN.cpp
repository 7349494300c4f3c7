// The recurrent cells (rnn_tanh_cell, rnn_relu_cell, lstm_cell, gru_cell) and the sequence
// packing operators behind nn.utils.rnn (pad_sequence, _pack_padded_sequence,
// _pad_packed_sequence), written over other operators so that autograd and the Meta
// backend come from the decomposition. Gate order is torch's: LSTM (i, f, g, o), GRU
// (r, z, n) with n = tanh(x_n + r * (W_hn h + b_hn)).
#include <aten/core/TensorOperators.h>
#include <aten/native/NativeFunctions.h>
#include <aten/ops/Functions.h>

#include <algorithm>
#include <vector>

namespace at::inline tessera::native {

namespace {

Tensor linear_or_none(const Tensor& x, const Tensor& w, const std::optional<Tensor>& b) {
  return at::linear(x, w, b && b->defined() ? b : std::nullopt);
}

// torch's checks of one step's (batched) input and hidden states, with its words; a
// 1-D input fails at size(1) with the index error torch's gives (the nn modules add the
// batch dim of unbatched input).
void check_cell(const Tensor& input, const Tensor& w_ih, const Tensor& w_hh, std::initializer_list<Tensor> hidden) {
  TORCH_CHECK(input.size(1) == w_ih.size(1), "input has inconsistent input_size: got ", input.size(1), " expected ",
              w_ih.size(1));
  int64_t k = 0;
  for (const Tensor& h : hidden) {
    TORCH_CHECK(input.size(0) == h.size(0), "Input batch size ", input.size(0), " doesn't match hidden", k,
                " batch size ", h.size(0));
    TORCH_CHECK(h.size(1) == w_hh.size(1), "hidden", k, " has inconsistent hidden_size: got ", h.size(1),
                ", expected ", w_hh.size(1));
    ++k;
  }
}

Tensor elman_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                  const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh, bool relu) {
  check_cell(input, w_ih, w_hh, {hx});
  Tensor pre = linear_or_none(input, w_ih, b_ih) + linear_or_none(hx, w_hh, b_hh);
  return relu ? at::relu(pre) : at::tanh(pre);
}

}  // namespace

Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  return elman_cell(input, hx, w_ih, w_hh, b_ih, b_hh, false);
}

Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  return elman_cell(input, hx, w_ih, w_hh, b_ih, b_hh, true);
}

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, TensorList hx, const Tensor& w_ih, const Tensor& w_hh,
                                     const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  TORCH_CHECK(hx.size() == 2, "lstm_cell expects two hidden states");
  check_cell(input, w_ih, w_hh, {hx[0], hx[1]});
  std::vector<Tensor> gates = (linear_or_none(input, w_ih, b_ih) + linear_or_none(hx[0], w_hh, b_hh)).chunk(4, 1);
  Tensor cy = at::sigmoid(gates[1]) * hx[1] + at::sigmoid(gates[0]) * at::tanh(gates[2]);
  Tensor hy = at::sigmoid(gates[3]) * at::tanh(cy);
  return {hy, cy};
}

Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  check_cell(input, w_ih, w_hh, {hx});
  std::vector<Tensor> x = linear_or_none(input, w_ih, b_ih).chunk(3, 1);
  std::vector<Tensor> h = linear_or_none(hx, w_hh, b_hh).chunk(3, 1);
  Tensor r = at::sigmoid(x[0] + h[0]);
  Tensor z = at::sigmoid(x[1] + h[1]);
  Tensor n = at::tanh(x[2] + r * h[2]);
  return n + z * (hx - n);
}

// ---------------------------------------------------------------- padding and packing

Tensor pad_sequence(TensorList sequences, bool batch_first, double padding_value) {
  TORCH_CHECK(!sequences.empty(), "received an empty list of sequences");
  const Tensor& first = sequences[0];
  TORCH_CHECK(first.dim() >= 1, "pad_sequence: expected each sequence to have at least one dim");
  int64_t max_len = 0;
  for (const Tensor& s : sequences) max_len = std::max(max_len, s.size(0));
  std::vector<int64_t> shape = {max_len, static_cast<int64_t>(sequences.size())};
  shape.insert(shape.end(), first.sizes().begin() + 1, first.sizes().end());
  if (batch_first) std::swap(shape[0], shape[1]);
  Tensor out = at::full(shape, padding_value, first.options());
  for (size_t b = 0; b < sequences.size(); ++b) {
    // a copy into the filled result (broadcasting trailing dims, as torch's copy does)
    out.select(batch_first ? 0 : 1, static_cast<int64_t>(b)).narrow(0, 0, sequences[b].size(0)).copy_(sequences[b]);
  }
  return out;
}

static std::vector<int64_t> cpu_lengths(const Tensor& t, const char* name) {
  TORCH_CHECK(t.device().is_cpu() && t.scalar_type() == c10::kLong && t.dim() == 1, "'", name,
              "' argument should be a 1D CPU int64 tensor, but got ", t.dim(), "D ", t.device().str(), " ",
              c10::toString(t.scalar_type()), " tensor");
  std::vector<int64_t> v(static_cast<size_t>(t.numel()));
  const Tensor c = t.contiguous();
  std::copy_n(c.data_ptr<int64_t>(), v.size(), v.begin());
  return v;
}

std::tuple<Tensor, Tensor> _pack_padded_sequence(const Tensor& input, const Tensor& lengths, bool batch_first) {
  const std::vector<int64_t> lens = cpu_lengths(lengths, "lengths");
  const Tensor x = batch_first ? input.transpose(0, 1) : input;
  TORCH_CHECK(x.numel() > 0, "Cannot pack empty tensors.");
  const int64_t batch = x.size(1);
  TORCH_CHECK(static_cast<int64_t>(lens.size()) == batch, "Expected `len(lengths)` to be equal to batch_size, but got ",
              lens.size(), " (batch_size=", batch, ")");
  TORCH_CHECK(lens.back() > 0, "Length of all samples has to be greater than 0, but found an element in 'lengths' "
              "that is <= 0");
  for (int64_t b = 0; b + 1 < batch; ++b) {
    TORCH_CHECK(lens[b + 1] <= lens[b], "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep "
                "this requirement if you do not need ONNX exportability.");
  }
  // torch does not check this one, and returns data shorter than batch_sizes promises
  TORCH_CHECK(lens[0] <= x.size(0), "pack_padded_sequence: a length of ", lens[0], " exceeds the padded input's ",
              x.size(0), " time steps");
  std::vector<int64_t> step_shape = {-1};
  step_shape.insert(step_shape.end(), x.sizes().begin() + 2, x.sizes().end());
  // One block per distinct length, shortest first: steps done..l-1 of the `count` sequences
  // at least that long (a prefix of the batch, which is sorted).
  std::vector<Tensor> blocks;
  std::vector<int64_t> batch_sizes;
  int64_t done = 0;
  for (int64_t count = batch; count > 0; --count) {
    const int64_t l = lens[static_cast<size_t>(count - 1)];
    if (l <= done) continue;
    blocks.push_back(x.narrow(0, done, l - done).narrow(1, 0, count).reshape(step_shape));
    batch_sizes.insert(batch_sizes.end(), static_cast<size_t>(l - done), count);
    done = l;
  }
  Tensor data = blocks.size() == 1 ? blocks[0] : at::cat(blocks, 0);
  Tensor sizes = at::empty({static_cast<int64_t>(batch_sizes.size())}, TensorOptions().dtype(c10::kLong));
  std::copy(batch_sizes.begin(), batch_sizes.end(), sizes.data_ptr<int64_t>());
  return {data, sizes};
}

std::tuple<Tensor, Tensor> _pad_packed_sequence(const Tensor& data, const Tensor& batch_sizes, bool batch_first,
                                                const Scalar& padding_value, int64_t total_length) {
  const std::vector<int64_t> sizes = cpu_lengths(batch_sizes, "batch_sizes");
  const int64_t max_len = static_cast<int64_t>(sizes.size());
  TORCH_CHECK(max_len > 0, "_pad_packed_sequence: batch_sizes is empty");
  TORCH_CHECK(total_length >= max_len, "Expected total_length to be at least the length of the longest sequence in "
              "input, but got total_length=", total_length, " and max sequence length being ", max_len);
  const int64_t batch = sizes[0];
  std::vector<int64_t> trailing(data.sizes().begin() + 1, data.sizes().end());
  auto block_shape = [&](int64_t steps, int64_t rows) {
    std::vector<int64_t> s = {steps, rows};
    s.insert(s.end(), trailing.begin(), trailing.end());
    return s;
  };
  std::vector<Tensor> blocks;
  int64_t offset = 0;
  for (int64_t t = 0; t < max_len;) {
    // a run of steps with one batch size is one reshape of a contiguous slice of data
    int64_t end = t;
    while (end < max_len && sizes[static_cast<size_t>(end)] == sizes[static_cast<size_t>(t)]) ++end;
    const int64_t rows = sizes[static_cast<size_t>(t)];
    Tensor block = data.narrow(0, offset, (end - t) * rows).reshape(block_shape(end - t, rows));
    if (rows < batch) {
      block = at::cat({block, at::full(block_shape(end - t, batch - rows), padding_value, data.options())}, 1);
    }
    blocks.push_back(block);
    offset += (end - t) * rows;
    t = end;
  }
  if (total_length > max_len) {
    blocks.push_back(at::full(block_shape(total_length - max_len, batch), padding_value, data.options()));
  }
  Tensor padded = blocks.size() == 1 ? blocks[0] : at::cat(blocks, 0);
  if (batch_first) padded = padded.transpose(0, 1);
  // sizes never increase: sequence b lasts while sizes[t] > b
  Tensor lengths = at::empty({batch}, TensorOptions().dtype(c10::kLong));
  int64_t* out = lengths.data_ptr<int64_t>();
  int64_t t = max_len;
  for (int64_t b = 0; b < batch; ++b) {
    while (t > 0 && sizes[static_cast<size_t>(t - 1)] <= b) --t;
    out[b] = t;
  }
  return {padded, lengths};
}

}  // namespace at::inline tessera::native
