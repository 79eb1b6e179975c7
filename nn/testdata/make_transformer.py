# Writes PyTorch's pre-norm TransformerEncoderLayer (GELU, no dropout) on
# fixed weights and inputs in float64, which nn's tests reproduce:
#   /usr/bin/python3 make_transformer.py
import json
import numpy as np
import torch

rng = np.random.default_rng(11)
layer = torch.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0,
                                         activation="gelu", batch_first=True, norm_first=True,
                                         dtype=torch.float64)
state = {k: rng.normal(0, 0.3, tuple(v.shape)) for k, v in layer.state_dict().items()}
layer.load_state_dict({k: torch.tensor(v) for k, v in state.items()})
layer.train()  # no dropout (p = 0); avoids the inference fast path
x = rng.normal(0, 1, (2, 5, 8))
causal = torch.triu(torch.full((5, 5), float("-inf"), dtype=torch.float64), diagonal=1)
with torch.no_grad():
    out = layer(torch.tensor(x), src_mask=causal)
res = {k: v.ravel().tolist() for k, v in state.items()}
res.update(x=x.ravel().tolist(), out=out.numpy().ravel().tolist())
json.dump(res, open("transformer.json", "w"))
