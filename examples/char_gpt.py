"""A character-level GPT: token and position embeddings, a causal nn.TransformerEncoder
(pre-norm, GELU) or the same blocks written out by hand, a tied output head, AdamW with
decay only on the weight matrices, a warm-up and cosine schedule (LambdaLR) and gradient
clipping. It learns the paragraph below and then writes some text of its own.

    PYTHONPATH=build/release/python /usr/bin/python3 examples/char_gpt.py [--steps 500]
    ... --backend torch      # the same code under real torch
    ... --attention manual   # hand-written attention instead of nn.TransformerEncoder

The model and the training loop take the library as an argument (`torch`), so the same
code runs on tessera and on torch; every random choice (which windows form a batch) comes
from a numpy generator, so both libraries see the same batches.
test/python/test_examples_vs_torch.py runs both from the same weights and compares the
losses step by step.
"""
import argparse
import importlib
import math
import sys
import time

import numpy as np

TEXT = (
    "The tensor library keeps its promises small and plain. A tensor is a view over a "
    "block of memory: a shape, a stride for every dimension and an offset. Adding two "
    "tensors walks both views at once and writes a third. The graph that autograd records "
    "remembers which function made each result, so that calling backward on a loss sends "
    "gradients from the end of the program back to every parameter that helped make it. "
    "An optimizer then nudges each parameter against its gradient, a little at a time, "
    "and the loss falls. Nothing here is magic; it is arithmetic done carefully, checked "
    "against a library that people already trust, one step after another.\n"
)


class CharData:
    """The text as integer codes, and random (input, next-character) windows from it."""

    def __init__(self, text=TEXT, block_size=32):
        self.chars = sorted(set(text))
        self.index = {c: i for i, c in enumerate(self.chars)}
        self.codes = np.array([self.index[c] for c in text], dtype=np.int64)
        self.block_size = block_size

    @property
    def vocab_size(self):
        return len(self.chars)

    def batch(self, rng, batch_size):
        """[B, T] inputs and the [B, T] characters that follow each position."""
        starts = rng.randint(0, len(self.codes) - self.block_size - 1, size=batch_size)
        rows = starts[:, None] + np.arange(self.block_size)[None, :]
        return self.codes[rows], self.codes[rows + 1]

    def decode(self, codes):
        return "".join(self.chars[int(c)] for c in codes)


def build_model(torch, vocab_size, block_size=32, d_model=48, nhead=4, num_layers=2, attention="encoder", seed=0):
    """A GPT with learned position embeddings and the output head tied to the token embedding.
    attention="encoder" stacks nn.TransformerEncoderLayer (pre-norm, GELU) under a causal
    mask; attention="manual" writes the blocks out by hand, nanoGPT style."""
    nn = torch.nn
    F = nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(d_model, 3 * d_model)
            self.proj = nn.Linear(d_model, d_model)
            # 1 where position i may look at position j (j <= i).
            self.register_buffer("allowed", torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size,
                                                                                                 block_size))

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(x).split(d_model, dim=2)
            q, k, v = (h.view(b, t, nhead, c // nhead).transpose(1, 2) for h in (q, k, v))  # [B, H, T, D]
            scores = (q @ k.transpose(-2, -1)) * (1.0 / (c // nhead) ** 0.5)
            scores = scores.masked_fill(self.allowed[:, :, :t, :t] == 0, float("-inf"))
            y = F.softmax(scores, dim=-1) @ v
            return self.proj(y.transpose(1, 2).contiguous().view(b, t, c))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(d_model)
            self.attn = CausalSelfAttention()
            self.ln2 = nn.LayerNorm(d_model)
            self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(approximate="tanh"),
                                     nn.Linear(4 * d_model, d_model))

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.block_size = block_size
            self.tok_emb = nn.Embedding(vocab_size, d_model)
            self.pos_emb = nn.Embedding(block_size, d_model)
            if attention == "encoder":
                layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=4 * d_model, dropout=0.0,
                                                   activation="gelu", batch_first=True, norm_first=True)
                self.blocks = nn.TransformerEncoder(layer, num_layers, norm=nn.LayerNorm(d_model),
                                                    enable_nested_tensor=False)
            elif attention == "manual":
                self.blocks = nn.Sequential(*[Block() for _ in range(num_layers)])
                self.ln_f = nn.LayerNorm(d_model)
            else:
                raise ValueError(f"attention must be 'encoder' or 'manual', not {attention!r}")
            self.head = nn.Linear(d_model, vocab_size, bias=False)
            self.head.weight = self.tok_emb.weight
            # GPT-2's scale: unit-variance embeddings would make the tied head's logits huge.
            nn.init.normal_(self.tok_emb.weight, std=0.02)
            nn.init.normal_(self.pos_emb.weight, std=0.02)

        def forward(self, idx):
            t = idx.shape[1]
            positions = torch.arange(t, device=idx.device)
            x = self.tok_emb(idx) + self.pos_emb(positions)[None]
            if attention == "encoder":
                # True above the diagonal: position i may not look at positions after it.
                causal = torch.triu(torch.ones(t, t, dtype=torch.bool, device=idx.device), diagonal=1)
                x = self.blocks(x, mask=causal)
            else:
                x = self.ln_f(self.blocks(x))
            return self.head(x)

    torch.manual_seed(seed)
    return GPT()


def make_optimizer(torch, model, lr=3e-3, weight_decay=0.1):
    """AdamW with two groups: weight matrices decay; biases, LayerNorm and embeddings do not."""
    embedding_weights = {id(m.weight) for m in model.modules() if isinstance(m, torch.nn.Embedding)}
    decay, no_decay = [], []
    for _, p in model.named_parameters():
        (no_decay if p.dim() < 2 or id(p) in embedding_weights else decay).append(p)
    groups = [{"params": decay, "weight_decay": weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95))


def warmup_cosine(steps, warmup):
    """The learning-rate factor at each step: linear warm-up, then a cosine decay to 10%."""
    def factor(step):
        if step < warmup:
            return (step + 1) / warmup
        progress = min(1.0, (step - warmup) / max(1, steps - warmup))
        return 0.1 + 0.45 * (1.0 + math.cos(math.pi * progress))
    return factor


def train(torch, model, data, steps, batch_size=16, seed=0, dtype="float32", lr=3e-3, clip=1.0, warmup=None,
          log=None):
    """Trains `model` for `steps` AdamW steps on batches drawn from a numpy generator seeded
    with `seed`, the learning rate following warmup_cosine; returns the loss of every step
    and the gradient norm (before clipping) of every step."""
    F = torch.nn.functional
    model.to(getattr(torch, dtype))
    optimizer = make_optimizer(torch, model, lr=lr)
    warmup = max(1, steps // 10) if warmup is None else warmup
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, warmup_cosine(steps, warmup))
    rng = np.random.RandomState(seed)
    losses, grad_norms = [], []
    model.train()
    for step in range(steps):
        x, y = data.batch(rng, batch_size)
        x, y = torch.from_numpy(x), torch.from_numpy(y)
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
        grad_norms.append(float(norm))
        if log is not None:
            log(step, losses[-1], grad_norms[-1])
    return losses, grad_norms


def generate(torch, model, data, prompt, length, seed=0):
    """Extends `prompt` by `length` characters, each sampled from the model's softmax."""
    F = torch.nn.functional
    gen = torch.Generator().manual_seed(seed)
    idx = torch.tensor([[data.index[c] for c in prompt]], dtype=torch.int64)
    model.eval()
    with torch.no_grad():
        for _ in range(length):
            logits = model(idx[:, -model.block_size:])[:, -1, :]
            nxt = torch.multinomial(F.softmax(logits, dim=-1), 1, generator=gen)
            idx = torch.cat([idx, nxt], dim=1)
    return data.decode(idx[0].tolist())


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--backend", choices=("tessera", "torch"), default="tessera")
    p.add_argument("--steps", type=int, default=500)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--attention", choices=("encoder", "manual"), default="encoder",
                   help="nn.TransformerEncoder or hand-written attention blocks")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    torch = importlib.import_module(args.backend)

    data = CharData()
    model = build_model(torch, data.vocab_size, attention=args.attention, seed=args.seed)
    print(f"{args.backend}: {sum(p.numel() for p in model.parameters())} parameters, "
          f"vocabulary of {data.vocab_size} characters")

    def log(step, loss, norm):
        if step % 25 == 0 or step == args.steps - 1:
            print(f"step {step:4d}: loss {loss:.4f} (gradient norm {norm:.3f})", flush=True)

    start = time.perf_counter()
    losses, _ = train(torch, model, data, args.steps, batch_size=args.batch_size, seed=args.seed, log=log)
    print(f"{args.steps} steps in {time.perf_counter() - start:.1f} s; final loss {losses[-1]:.4f}")
    print("sample:", repr(generate(torch, model, data, "The ", 120, seed=args.seed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
