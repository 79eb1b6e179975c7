"""Writes PyTorch 1.13 state_dicts of a small CNN (Conv2d, BatchNorm2d, ReLU,
MaxPool2d, Flatten, Linear) and a 2-layer LSTM as safetensors, and their
eval-mode outputs on fixed inputs as torch_outputs.json.

torch 1.13 has no safetensors package, so the format is written by hand:
an 8-byte little-endian header length, a JSON header of
{name: {dtype, shape, data_offsets}}, then the raw little-endian data.
The BatchNorm's num_batches_tracked is int64, as PyTorch stores it.

Run with /usr/bin/python3 from this directory.
"""
import json
import struct

import torch

DT = {torch.float32: "F32", torch.float64: "F64", torch.int64: "I64"}


def write_safetensors(path, sd):
    header, blobs, off = {}, [], 0
    for name in sorted(sd):
        t = sd[name].detach().contiguous().cpu()
        b = t.numpy().astype(t.numpy().dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": DT[t.dtype], "shape": list(t.shape),
                        "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    header["__metadata__"] = {"format": "pt", "source": "torch " + torch.__version__}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


torch.manual_seed(0)
cnn = torch.nn.Sequential(
    torch.nn.Conv2d(2, 4, 3, padding=1),
    torch.nn.BatchNorm2d(4),
    torch.nn.ReLU(),
    torch.nn.MaxPool2d(2),
    torch.nn.Flatten(),
    torch.nn.Linear(4 * 3 * 3, 3),
)
# A few training steps give the BatchNorm non-trivial running statistics
# and num_batches_tracked = 3.
opt = torch.optim.SGD(cnn.parameters(), lr=0.1)
for _ in range(3):
    xb = torch.randn(8, 2, 6, 6)
    loss = cnn(xb).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
cnn.eval()
x_cnn = torch.randn(2, 2, 6, 6)
with torch.no_grad():
    y_cnn = cnn(x_cnn)
write_safetensors("torch_cnn.safetensors", cnn.state_dict())

lstm = torch.nn.LSTM(3, 4, num_layers=2, batch_first=True)
x_lstm = torch.randn(2, 5, 3)
with torch.no_grad():
    out, (hn, cn) = lstm(x_lstm)
write_safetensors("torch_lstm.safetensors", lstm.state_dict())


def flat(t):
    return [float(v) for v in t.reshape(-1).tolist()]


with open("torch_outputs.json", "w") as f:
    json.dump({
        "torch": torch.__version__,
        "cnn": {"x_shape": list(x_cnn.shape), "x": flat(x_cnn), "y_shape": list(y_cnn.shape), "y": flat(y_cnn)},
        "lstm": {"x_shape": list(x_lstm.shape), "x": flat(x_lstm), "out": flat(out), "h": flat(hn), "c": flat(cn)},
    }, f, indent=1)
