"""A small GPT trained on a character-level text and sampled, from Python:
nabla.nn.Gpt, AdamW with a warm-up cosine schedule, gradient clipping,
a checkpoint written with nabla.io.

Run: python nabla-py/examples/gpt.py [--steps N]
"""

import argparse
import os
import tempfile
import time

import numpy as np

import nabla

TEXT = (
    "the quick brown fox jumps over the lazy dog. "
    "a differentiable program is a program whose derivative is a program. "
    "nabla computes derivatives of rust and python functions. "
) * 8

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=300)
args = parser.parse_args()

chars = sorted(set(TEXT))
stoi = {c: i for i, c in enumerate(chars)}
data = np.array([stoi[c] for c in TEXT], dtype=np.int64)
vocab, context, batch = len(chars), 32, 16

model = nabla.nn.Gpt(vocab=vocab, context=context, layers=2, heads=4, embd=64, seed=0).requires_grad_()
opt = nabla.optim.AdamW(
    model.parameters(),
    lr=nabla.optim.schedules.warmup_cosine(0.0, 3e-3, 20, args.steps, 3e-4),
    betas=(0.9, 0.95),
    weight_decay=0.1,
)
rng = np.random.default_rng(0)
start = time.time()
first = None
for step in range(args.steps + 1):
    at = rng.integers(0, len(data) - context - 1, batch)
    idx = nabla.array(np.stack([data[i : i + context] for i in at]))
    tgt = nabla.array(np.stack([data[i + 1 : i + context + 1] for i in at]))
    loss = model.loss(model.params, idx, tgt)
    loss.backward()
    nabla.optim.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    opt.zero_grad()
    first = loss.item() if first is None else first
    if step % 50 == 0:
        print(f"step {step:4d}  loss {loss.item():.4f}  ({time.time() - start:.1f} s)")
print(f"loss fell from {first:.3f} to {loss.item():.3f}")

with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "gpt.safetensors")
    nabla.io.save(model, path)
    print(f"checkpoint: {len(nabla.io.load_file(path))} arrays")

prompt = nabla.array([[stoi[c] for c in "the "]])
out = model.generate(prompt, 60, temperature=0.0)
print("sample:", "".join(chars[i] for i in np.asarray(out)[0]))
assert loss.item() < 0.6 * first, "the GPT did not learn"
