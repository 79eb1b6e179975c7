# Writes PyTorch's bidirectional two-layer tanh RNN (batch_first, float64)
# on fixed weights and inputs, for nn's tests: /usr/bin/python3 make_rnn.py
import json
import numpy as np
import torch

rng = np.random.default_rng(9)
m = torch.nn.RNN(3, 4, num_layers=2, bidirectional=True, batch_first=True, dtype=torch.float64)
state = {k: rng.normal(0, 0.4, tuple(v.shape)) for k, v in m.state_dict().items()}
m.load_state_dict({k: torch.tensor(v) for k, v in state.items()})
x = rng.normal(0, 1, (2, 5, 3))
h0 = rng.normal(0, 0.5, (4, 2, 4))
with torch.no_grad():
    out, hn = m(torch.tensor(x), torch.tensor(h0))
res = {k: v.ravel().tolist() for k, v in state.items()}
res.update(x=x.ravel().tolist(), h0=h0.ravel().tolist(), out=out.numpy().ravel().tolist(), hn=hn.numpy().ravel().tolist())
json.dump(res, open("rnn.json", "w"))

# The same for bidirectional two-layer LSTM and GRU stacks (float64,
# batch_first), with initial states: lstm.json and gru.json. These draws
# come after the RNN's, so rnn.json is unchanged.
for name, cls in (("lstm", torch.nn.LSTM), ("gru", torch.nn.GRU)):
    m = cls(3, 4, num_layers=2, bidirectional=True, batch_first=True, dtype=torch.float64)
    state = {k: rng.normal(0, 0.4, tuple(v.shape)) for k, v in m.state_dict().items()}
    m.load_state_dict({k: torch.tensor(v) for k, v in state.items()})
    x = rng.normal(0, 1, (2, 5, 3))
    h0 = rng.normal(0, 0.5, (4, 2, 4))
    res = {k: v.ravel().tolist() for k, v in state.items()}
    res.update(x=x.ravel().tolist(), h0=h0.ravel().tolist())
    with torch.no_grad():
        if name == "lstm":
            c0 = rng.normal(0, 0.5, (4, 2, 4))
            out, (hn, cn) = m(torch.tensor(x), (torch.tensor(h0), torch.tensor(c0)))
            res.update(c0=c0.ravel().tolist(), cn=cn.numpy().ravel().tolist())
        else:
            out, hn = m(torch.tensor(x), torch.tensor(h0))
    res.update(out=out.numpy().ravel().tolist(), hn=hn.numpy().ravel().tolist())
    json.dump(res, open(name + ".json", "w"))
