// The recurrent cells (rnn_tanh_cell, rnn_relu_cell, lstm_cell, gru_cell) and the sequence
// packing operators behind nn.utils.rnn (pad_sequence, _pack_padded_sequence,
// _pad_packed_sequence), written over other operators so that autograd and the Meta
// backend come from the decomposition; and the whole-sequence layers over them (lstm, gru,
// rnn_tanh, rnn_relu: multi-layer, bidirectional, padded `.input` or packed `.data`), one
// step function serving cells and layers. Gate order is torch's: LSTM (i, f, g, o), GRU
// (r, z, n) with n = tanh(x_n + r * (W_hn h + b_hn)).
#include <aten/core/TensorOperators.h>
#include <aten/native/HostVector.h>
#include <aten/native/NativeFunctions.h>
#include <aten/ops/Functions.h>

#include <algorithm>
#include <vector>

namespace at::inline tessera::native {

namespace {

Tensor linear_or_none(const Tensor& x, const Tensor& w, const std::optional<Tensor>& b) {
  return at::linear(x, w, b && b->defined() ? b : std::nullopt);
}

enum class Mode { Tanh, Relu, Lstm, Gru };

// One layer-direction's parameters; the biases and the LSTM projection may be absent.
struct CellParams {
  Tensor w_ih, w_hh;
  std::optional<Tensor> b_ih, b_hh;
  Tensor w_hr;
};

// One time step from the input's share of the gates, gi = x W_ih^T + b_ih (computed for
// every step of a sequence in one matmul). Returns (h, c); c is undefined but for LSTM.
std::pair<Tensor, Tensor> step(Mode mode, const Tensor& gi, const Tensor& h, const Tensor& c, const CellParams& p) {
  const Tensor gh = linear_or_none(h, p.w_hh, p.b_hh);
  if (mode == Mode::Tanh) return {at::tanh(gi + gh), Tensor()};
  if (mode == Mode::Relu) return {at::relu(gi + gh), Tensor()};
  if (mode == Mode::Lstm) {
    std::vector<Tensor> gates = (gi + gh).chunk(4, 1);
    Tensor cy = at::sigmoid(gates[1]) * c + at::sigmoid(gates[0]) * at::tanh(gates[2]);
    Tensor hy = at::sigmoid(gates[3]) * at::tanh(cy);
    if (p.w_hr.defined()) hy = at::linear(hy, p.w_hr);
    return {hy, cy};
  }
  // Mode::Gru
  std::vector<Tensor> x = gi.chunk(3, 1);
  std::vector<Tensor> hh = gh.chunk(3, 1);
  Tensor r = at::sigmoid(x[0] + hh[0]);
  Tensor z = at::sigmoid(x[1] + hh[1]);
  Tensor n = at::tanh(x[2] + r * hh[2]);
  return {n + z * (h - n), Tensor()};
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

Tensor cell(Mode mode, const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
            const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  check_cell(input, w_ih, w_hh, {hx});
  return step(mode, linear_or_none(input, w_ih, b_ih), hx, Tensor(), {w_ih, w_hh, b_ih, b_hh, Tensor()}).first;
}

}  // namespace

Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  return cell(Mode::Tanh, input, hx, w_ih, w_hh, b_ih, b_hh);
}

Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  return cell(Mode::Relu, input, hx, w_ih, w_hh, b_ih, b_hh);
}

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, TensorList hx, const Tensor& w_ih, const Tensor& w_hh,
                                     const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  TORCH_CHECK(hx.size() == 2, "lstm_cell expects two hidden states");
  check_cell(input, w_ih, w_hh, {hx[0], hx[1]});
  auto [h, c] = step(Mode::Lstm, linear_or_none(input, w_ih, b_ih), hx[0], hx[1], {w_ih, w_hh, b_ih, b_hh, Tensor()});
  return {h, c};
}

Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const std::optional<Tensor>& b_ih, const std::optional<Tensor>& b_hh) {
  return cell(Mode::Gru, input, hx, w_ih, w_hh, b_ih, b_hh);
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
  return host_int64_values(t);
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


// ---------------------------------------------------------------- whole-sequence layers

namespace {

// The parameters of each layer-direction (layer * directions + direction), from torch's
// flat list: w_ih, w_hh, [b_ih, b_hh], [w_hr].
std::vector<CellParams> gather_params(TensorList params, bool has_biases, bool has_projections, int64_t stacks) {
  const size_t stride = 2 + (has_biases ? 2 : 0) + (has_projections ? 1 : 0);
  TORCH_CHECK(params.size() % stride == 0 && static_cast<int64_t>(params.size() / stride) == stacks,
              "got an incorrect number of RNN parameters");
  std::vector<CellParams> out;
  for (size_t i = 0; i < params.size(); i += stride) {
    CellParams p{params[i], params[i + 1], std::nullopt, std::nullopt, Tensor()};
    if (has_biases) p.b_ih = params[i + 2], p.b_hh = params[i + 3];
    if (has_projections) p.w_hr = params[i + stride - 1];
    out.push_back(std::move(p));
  }
  return out;
}

struct DirectionResult {
  Tensor output, h, c;
};

// One layer-direction over time-major x (T, N, I): the input's share of every step's gates
// in one matmul, then the recurrence. unbind's single backward node stacks the steps' grads.
DirectionResult run_padded(Mode mode, const Tensor& x, Tensor h, Tensor c, const CellParams& p, bool reverse) {
  const std::vector<Tensor> gates = linear_or_none(x, p.w_ih, p.b_ih).unbind(0);
  const int64_t steps = static_cast<int64_t>(gates.size());
  std::vector<Tensor> outputs(gates.size());
  for (int64_t i = 0; i < steps; ++i) {
    const size_t t = static_cast<size_t>(reverse ? steps - 1 - i : i);
    std::tie(h, c) = step(mode, gates[t], h, c, p);
    outputs[t] = h;
  }
  return {at::stack(outputs, 0), h, c};
}

// One layer-direction over a packed sequence: x (sum(batch_sizes), I), h/c the (N, *)
// initial states of the batch sorted by decreasing length. At step t only the first
// batch_sizes[t] sequences advance, so each sequence's final state is taken at its own
// last step, and the reverse direction starts each sequence at its own end from its own
// initial state.
DirectionResult run_packed(Mode mode, const Tensor& x, const std::vector<int64_t>& batch_sizes, Tensor h, Tensor c,
                           const CellParams& p, bool reverse) {
  const std::vector<Tensor> gates = linear_or_none(x, p.w_ih, p.b_ih).split_with_sizes(batch_sizes, 0);
  const int64_t steps = static_cast<int64_t>(batch_sizes.size());
  std::vector<Tensor> outputs(batch_sizes.size());
  if (!reverse) {
    std::vector<Tensor> done_h, done_c;  // states of ended sequences, from the batch's tail inwards
    for (int64_t t = 0; t < steps; ++t) {
      const int64_t n = batch_sizes[static_cast<size_t>(t)];
      if (n < h.size(0)) {
        done_h.push_back(h.narrow(0, n, h.size(0) - n));
        h = h.narrow(0, 0, n);
        if (c.defined()) {
          done_c.push_back(c.narrow(0, n, c.size(0) - n));
          c = c.narrow(0, 0, n);
        }
      }
      std::tie(h, c) = step(mode, gates[static_cast<size_t>(t)], h, c, p);
      outputs[static_cast<size_t>(t)] = h;
    }
    auto join = [](Tensor last, std::vector<Tensor> done) {
      if (done.empty()) return last;
      done.push_back(std::move(last));
      std::reverse(done.begin(), done.end());
      return at::cat(done, 0);
    };
    h = join(h, std::move(done_h));
    if (c.defined()) c = join(c, std::move(done_c));
  } else {
    const Tensor h0 = h, c0 = c;
    h = h0.narrow(0, 0, batch_sizes.back());
    if (c0.defined()) c = c0.narrow(0, 0, batch_sizes.back());
    for (int64_t t = steps - 1; t >= 0; --t) {
      const int64_t n = batch_sizes[static_cast<size_t>(t)], have = h.size(0);
      if (n > have) {  // sequences whose last step is t join from their initial state
        h = at::cat({h, h0.narrow(0, have, n - have)}, 0);
        if (c0.defined()) c = at::cat({c, c0.narrow(0, have, n - have)}, 0);
      }
      std::tie(h, c) = step(mode, gates[static_cast<size_t>(t)], h, c, p);
      outputs[static_cast<size_t>(t)] = h;
    }
  }
  return {at::cat(outputs, 0), h, c};
}

struct StackSpec {
  Mode mode;
  int64_t num_layers;
  double dropout;
  bool train;
  bool bidirectional;
  int64_t batch;  // the sequences' count (padded) or the first step's (packed)
};

// Each initial state must be (layers * directions, batch, *): a batch of one would
// otherwise broadcast against the steps silently.
void check_state(const StackSpec& spec, const Tensor& state, const char* name) {
  const int64_t stacks = spec.num_layers * (spec.bidirectional ? 2 : 1);
  TORCH_CHECK(state.dim() == 3 && state.size(0) == stacks && state.size(1) == spec.batch, "Expected ", name,
              " of size (", stacks, ", ", spec.batch, ", *) for ", spec.num_layers, " layer(s)",
              spec.bidirectional ? " in two directions" : "", " and a batch of ", spec.batch, ", got ",
              state.sizes());
}

// The layers: each runs its directions over the previous layer's output (their outputs
// joined on the feature dim), with dropout between layers in training. h0/c0 are
// (layers * directions, N, *); c0 is undefined but for LSTM. Returns (output, h_n, c_n).
template <class Direction>
std::tuple<Tensor, Tensor, Tensor> run_stack(const StackSpec& spec, Tensor x, const Tensor& h0, const Tensor& c0,
                                             const std::vector<CellParams>& params, Direction&& direction) {
  const int64_t dirs = spec.bidirectional ? 2 : 1;
  check_state(spec, h0, "hx");
  if (c0.defined()) check_state(spec, c0, "cx");
  std::vector<Tensor> h_last, c_last;
  for (int64_t layer = 0; layer < spec.num_layers; ++layer) {
    std::vector<Tensor> outs;
    for (int64_t d = 0; d < dirs; ++d) {
      const int64_t k = layer * dirs + d;
      DirectionResult r = direction(x, h0.select(0, k), c0.defined() ? c0.select(0, k) : Tensor(),
                                    params[static_cast<size_t>(k)], d == 1);
      outs.push_back(std::move(r.output));
      h_last.push_back(std::move(r.h));
      c_last.push_back(std::move(r.c));
    }
    x = outs.size() == 1 ? outs[0] : at::cat(outs, -1);
    if (spec.dropout != 0 && spec.train && layer + 1 < spec.num_layers) x = at::dropout(x, spec.dropout, true);
  }
  return {x, at::stack(h_last, 0), c0.defined() ? at::stack(c_last, 0) : Tensor()};
}

void check_dropout(double p) {
  TORCH_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
}

std::tuple<Tensor, Tensor, Tensor> padded_layers(Mode mode, const Tensor& input, const Tensor& h0, const Tensor& c0,
                                                 TensorList params, bool has_biases, int64_t num_layers,
                                                 double dropout, bool train, bool bidirectional, bool batch_first) {
  check_dropout(dropout);
  TORCH_CHECK(input.dim() == 3, "input must have 3 dimensions, got ", input.dim());
  const Tensor x = batch_first ? input.transpose(0, 1) : input;
  TORCH_CHECK(x.size(0) > 0, "Expected sequence length to be larger than 0 in RNN");
  const bool projections = c0.defined() && h0.size(-1) != c0.size(-1);
  const int64_t stacks = num_layers * (bidirectional ? 2 : 1);
  auto cells = gather_params(params, has_biases, projections, stacks);
  auto [out, h, c] = run_stack({mode, num_layers, dropout, train, bidirectional, x.size(1)}, x, h0, c0, cells,
                               [mode](const Tensor& in, const Tensor& h, const Tensor& c, const CellParams& p, bool rev) {
                                 return run_padded(mode, in, h, c, p, rev);
                               });
  return {batch_first ? out.transpose(0, 1) : out, h, c};
}

std::tuple<Tensor, Tensor, Tensor> packed_layers(Mode mode, const Tensor& data, const Tensor& batch_sizes,
                                                 const Tensor& h0, const Tensor& c0, TensorList params,
                                                 bool has_biases, int64_t num_layers, double dropout, bool train,
                                                 bool bidirectional) {
  check_dropout(dropout);
  const std::vector<int64_t> sizes = cpu_lengths(batch_sizes, "batch_sizes");
  TORCH_CHECK(!sizes.empty(), "Expected sequence length to be larger than 0 in RNN");
  TORCH_CHECK(data.dim() == 2, "input must have 2 dimensions, got ", data.dim());
  int64_t total = 0;
  for (size_t t = 0; t < sizes.size(); ++t) {
    TORCH_CHECK(sizes[t] > 0 && (t == 0 || sizes[t] <= sizes[t - 1]),
                "batch_sizes must be positive and non-increasing, got ", batch_sizes);
    total += sizes[t];
  }
  TORCH_CHECK(total == data.size(0), "batch_sizes add up to ", total, " rows, but the packed data has ",
              data.size(0));
  const bool projections = c0.defined() && h0.size(-1) != c0.size(-1);
  const int64_t stacks = num_layers * (bidirectional ? 2 : 1);
  auto cells = gather_params(params, has_biases, projections, stacks);
  return run_stack({mode, num_layers, dropout, train, bidirectional, sizes[0]}, data, h0, c0, cells,
                   [mode, &sizes](const Tensor& in, const Tensor& h, const Tensor& c, const CellParams& p, bool rev) {
                     return run_packed(mode, in, sizes, h, c, p, rev);
                   });
}

const Tensor& lstm_state(TensorList hx, size_t i) {
  TORCH_CHECK(hx.size() == 2, "lstm expects two hidden states");
  return hx[i];
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> lstm_input(const Tensor& input, TensorList hx, TensorList params, bool has_biases,
                                              int64_t num_layers, double dropout, bool train, bool bidirectional,
                                              bool batch_first) {
  return padded_layers(Mode::Lstm, input, lstm_state(hx, 0), lstm_state(hx, 1), params, has_biases, num_layers,
                       dropout, train, bidirectional, batch_first);
}

std::tuple<Tensor, Tensor, Tensor> lstm_data(const Tensor& data, const Tensor& batch_sizes, TensorList hx,
                                             TensorList params, bool has_biases, int64_t num_layers, double dropout,
                                             bool train, bool bidirectional) {
  return packed_layers(Mode::Lstm, data, batch_sizes, lstm_state(hx, 0), lstm_state(hx, 1), params, has_biases,
                       num_layers, dropout, train, bidirectional);
}

#define TESSERA_SINGLE_STATE_LAYER(name, mode)                                                                       \
  std::tuple<Tensor, Tensor> name##_input(const Tensor& input, const Tensor& hx, TensorList params, bool has_biases, \
                                          int64_t num_layers, double dropout, bool train, bool bidirectional,        \
                                          bool batch_first) {                                                        \
    auto [out, h, c] = padded_layers(mode, input, hx, Tensor(), params, has_biases, num_layers, dropout, train,      \
                                     bidirectional, batch_first);                                                    \
    return {out, h};                                                                                                 \
  }                                                                                                                  \
  std::tuple<Tensor, Tensor> name##_data(const Tensor& data, const Tensor& batch_sizes, const Tensor& hx,            \
                                         TensorList params, bool has_biases, int64_t num_layers, double dropout,     \
                                         bool train, bool bidirectional) {                                           \
    auto [out, h, c] = packed_layers(mode, data, batch_sizes, hx, Tensor(), params, has_biases, num_layers, dropout, \
                                     train, bidirectional);                                                          \
    return {out, h};                                                                                                 \
  }

TESSERA_SINGLE_STATE_LAYER(gru, Mode::Gru)
TESSERA_SINGLE_STATE_LAYER(rnn_tanh, Mode::Tanh)
TESSERA_SINGLE_STATE_LAYER(rnn_relu, Mode::Relu)
#undef TESSERA_SINGLE_STATE_LAYER

}  // namespace at::inline tessera::native
