# Writes PyTorch's nn.MultiheadAttention outputs on fixed weights and
# inputs (float64), which nn's attention tests reproduce. Run with Debian's
# python3-torch: /usr/bin/python3 make_attention.py
import json
import numpy as np
import torch

rng = np.random.default_rng(7)
E, H = 8, 2
m = torch.nn.MultiheadAttention(E, H, batch_first=True, dtype=torch.float64)
w = {
    "in_proj_weight": rng.normal(0, 0.4, (3 * E, E)),
    "in_proj_bias": rng.normal(0, 0.1, 3 * E),
    "out_proj.weight": rng.normal(0, 0.4, (E, E)),
    "out_proj.bias": rng.normal(0, 0.1, E),
}
m.load_state_dict({k: torch.tensor(v) for k, v in w.items()})
q = rng.normal(0, 1, (2, 3, E))
kv = rng.normal(0, 1, (2, 4, E))
x = rng.normal(0, 1, (2, 4, E))
pad = np.array([[False, False, False, False], [False, False, True, True]])
causal = torch.triu(torch.full((4, 4), float("-inf"), dtype=torch.float64), diagonal=1)
T = lambda a: torch.tensor(a)
with torch.no_grad():
    plain = m(T(q), T(kv), T(kv), need_weights=False)[0]
    padded = m(T(q), T(kv), T(kv), key_padding_mask=torch.tensor(pad), need_weights=False)[0]
    selfc = m(T(x), T(x), T(x), attn_mask=causal, need_weights=False)[0]
out = {k: v.ravel().tolist() for k, v in w.items()}
out.update(q=q.ravel().tolist(), kv=kv.ravel().tolist(), x=x.ravel().tolist(), pad=pad.tolist(),
           plain=plain.numpy().ravel().tolist(), padded=padded.numpy().ravel().tolist(), causal=selfc.numpy().ravel().tolist())
json.dump(out, open("attention.json", "w"))
