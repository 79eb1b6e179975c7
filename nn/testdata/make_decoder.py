# Writes PyTorch's pre-norm TransformerDecoderLayer (GELU, no dropout) on
# fixed weights and inputs in float64: the output, with a causal target mask
# and a key-padding mask on the memory, and the gradients of sum(out * r)
# (r fixed) with respect to every parameter, the target and the memory,
# which nn's tests reproduce:
#   /usr/bin/python3 make_decoder.py
import json
import numpy as np
import torch

rng = np.random.default_rng(17)
B, L, M, E, H, F = 2, 5, 4, 8, 2, 16
layer = torch.nn.TransformerDecoderLayer(d_model=E, nhead=H, dim_feedforward=F, dropout=0.0,
                                         activation="gelu", batch_first=True, norm_first=True,
                                         dtype=torch.float64)
state = {k: rng.normal(0, 0.3, tuple(v.shape)) for k, v in layer.state_dict().items()}
for k in state:
    if k.startswith("norm") and k.endswith("weight"):
        state[k] += 1.0
layer.load_state_dict({k: torch.tensor(v) for k, v in state.items()})
layer.train()  # no dropout (p = 0)
x = rng.normal(0, 1, (B, L, E))
mem = rng.normal(0, 1, (B, M, E))
pad = np.array([[False, False, False, False], [False, False, False, True]])
r = rng.normal(0, 1, (B, L, E))
causal = torch.triu(torch.full((L, L), float("-inf"), dtype=torch.float64), diagonal=1)
tx = torch.tensor(x, requires_grad=True)
tm = torch.tensor(mem, requires_grad=True)
out = layer(tx, tm, tgt_mask=causal, memory_key_padding_mask=torch.tensor(pad))
(out * torch.tensor(r)).sum().backward()
res = {k: v.ravel().tolist() for k, v in state.items()}
res.update({"grad." + k: p.grad.numpy().ravel().tolist() for k, p in layer.named_parameters()})
res.update(x=x.ravel().tolist(), memory=mem.ravel().tolist(), pad=pad.ravel().astype(float).tolist(),
           r=r.ravel().tolist(), out=out.detach().numpy().ravel().tolist(),
           **{"grad.x": tx.grad.numpy().ravel().tolist(), "grad.memory": tm.grad.numpy().ravel().tolist()})
json.dump(res, open("decoder.json", "w"))
