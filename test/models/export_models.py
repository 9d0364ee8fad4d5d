"""Build the model zoo from configs with random weights and export it to ONNX.

`python test/models/export_models.py [--out DIR] [--only NAME] [--scale small|full]`

Needs the `[models]` extra (torch, transformers, onnxscript); CI never runs this: the small
exports, their inputs and onnxruntime's outputs are committed under `test/models/fixtures/`, so
the zoo test needs neither torch nor transformers. Nothing is downloaded: every model is built
from a config (`from_config`, random init, seeded) and exported with

- the classic TorchScript exporter at opset 17 (`dynamo=False`), and
- the dynamo exporter at opsets 20 and 23 (`dynamo=True`).

The releases used are written to `<out>/versions.json`. Each export writes
`<name>.<exporter>.onnx`, `<name>.<exporter>.inputs.npz` (keyed by the ONNX
input names) and `<name>.<exporter>.expected.npz` (onnxruntime's outputs, keyed by output name).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from versions import record

EXPORTERS = {"classic17": (False, 17), "dynamo20": (True, 20), "dynamo23": (True, 23)}
SEQ = 32


@dataclass
class Spec:
    """One zoo entry: a module builder and its example inputs (name -> tensor)."""

    build: Callable[[str], object]
    inputs: Callable[[str], dict]


def _torch():
    import torch

    torch.manual_seed(0)
    return torch


class _Logits:
    """Wrap a transformers model so the export has one tensor output (the logits or hidden state)."""

    def __new__(cls, model, field: str):
        torch = _torch()

        class W(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.m = model

            def forward(self, *args):
                if field == "encoder":
                    out = self.m(*args)
                else:  # an explicit all-ones mask: without it the classic exporter meets aten::diff
                    out = self.m(*args, attention_mask=torch.ones_like(args[0]), use_cache=False)
                return getattr(out, field if field != "encoder" else "last_hidden_state")

        return W().eval()


def _ids(scale: str, vocab: int, seq: int | None = None):
    seq = seq or SEQ
    torch = _torch()
    g = torch.Generator().manual_seed(1)
    return torch.randint(0, vocab, (1, seq), generator=g, dtype=torch.int64)


def _hidden(scale: str, d: int, seq: int | None = None):
    seq = seq or SEQ
    torch = _torch()
    g = torch.Generator().manual_seed(2)
    return torch.randn(1, seq, d, generator=g)


LAYERS: int | None = None
"""Overrides the layer count (`--layers`): a full-width model at a depth one machine holds."""
WIDTH: int | None = None
"""Overrides the full-scale width (`--width D`): D // 64 heads of 64, a third of them KV heads
(as 12 and 4 at 768; the largest divisor of the heads below a third otherwise, 4 of 16 at 1024),
an FFN of 4 D; for the size search of `bench/llama_size.py` and GPT-2 medium (1024) or XL (1600)."""
VOCAB: int | None = None
"""Overrides the full-scale vocabulary (`--vocab`)."""


def _dims(scale: str) -> dict:
    if scale == "full":
        d = WIDTH or 768
        heads = d // 64
        kv = max(k for k in range(1, max(1, heads // 3) + 1) if heads % k == 0)  # a third, or the divisor below
        return dict(d=d, heads=heads, layers=LAYERS or 12, ffn=4 * d, vocab=VOCAB or 50257, kv=kv)
    return dict(d=64, heads=4, layers=LAYERS or 2, ffn=128, vocab=256, kv=2)


def gpt2_lm(scale: str):
    from transformers import GPT2Config, GPT2LMHeadModel

    k = _dims(scale)
    cfg = GPT2Config(
        n_embd=k["d"],
        n_head=k["heads"],
        n_layer=k["layers"],
        vocab_size=k["vocab"],
        n_positions=max(SEQ, 1024 if scale == "full" else SEQ),
        attn_implementation="eager",
    )
    return _Logits(GPT2LMHeadModel(cfg).eval(), "logits")


def gpt2_block(scale: str):
    torch = _torch()
    from transformers import GPT2Config
    from transformers.models.gpt2.modeling_gpt2 import GPT2Block

    k = _dims(scale)
    cfg = GPT2Config(n_embd=k["d"], n_head=k["heads"], n_layer=1, attn_implementation="eager")
    blk = GPT2Block(cfg).eval()

    class B(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.b = blk

        def forward(self, x):
            return self.b(x)[0]

    return B().eval()


def gpt2_blocks(scale: str):
    """A group of GPT-2 blocks (`--layers`, default all) without embedding or head: the layer
    group `bench/pipeline.py` splits tensor-parallel and pipelines."""
    torch = _torch()
    from transformers import GPT2Config
    from transformers.models.gpt2.modeling_gpt2 import GPT2Block

    k = _dims(scale)
    cfg = GPT2Config(n_embd=k["d"], n_head=k["heads"], n_layer=k["layers"], attn_implementation="eager")
    blocks = torch.nn.ModuleList([GPT2Block(cfg, layer_idx=i).eval() for i in range(k["layers"])])

    class G(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.h = blocks

        def forward(self, x):
            for b in self.h:
                out = b(x)
                x = out[0] if isinstance(out, tuple) else out  # a tuple before transformers 5
            return x

    return G().eval()


def _bert_vocab(scale: str) -> int:
    """BERT-base's WordPiece vocabulary at full scale."""
    return 30522 if scale == "full" else _dims(scale)["vocab"]


def bert(scale: str):
    from transformers import BertConfig, BertModel

    k = _dims(scale)
    cfg = BertConfig(
        hidden_size=k["d"],
        num_attention_heads=k["heads"],
        num_hidden_layers=k["layers"],
        intermediate_size=k["ffn"],
        vocab_size=_bert_vocab(scale),
        max_position_embeddings=max(SEQ, 512),
        attn_implementation="eager",
    )
    return _Logits(BertModel(cfg, add_pooling_layer=False).eval(), "last_hidden_state")


def _decoder_cfg(config_cls, scale: str, attention: str = "eager", **extra):
    """A Llama-family config (Llama, Qwen2, Mixtral with `extra` fields): grouped KV heads, SwiGLU,
    rotary positions; the
    attention spelled out op by op ("eager") or as transformers' default ("sdpa": torch's
    scaled_dot_product_attention, which the exporters decompose or emit as ONNX Attention)."""
    k = _dims(scale)
    fields = dict(
        hidden_size=k["d"],
        num_attention_heads=k["heads"],
        num_key_value_heads=k["kv"],
        num_hidden_layers=k["layers"],
        intermediate_size=k["ffn"],
        vocab_size=k["vocab"],
        max_position_embeddings=max(SEQ, 2048),
        attn_implementation=attention,
    )
    return config_cls(**(fields | extra))


def _llama_cfg(scale: str):
    from transformers import LlamaConfig

    return _decoder_cfg(LlamaConfig, scale)


def llama(scale: str):
    from transformers import LlamaForCausalLM

    return _Logits(LlamaForCausalLM(_llama_cfg(scale)).eval(), "logits")


def llama_sdpa(scale: str):
    """The Llama with transformers' default attention, as a new user exports it."""
    from transformers import LlamaConfig, LlamaForCausalLM

    return _Logits(LlamaForCausalLM(_decoder_cfg(LlamaConfig, scale, "sdpa")).eval(), "logits")


def mixtral(scale: str):
    """A Mixtral-style mixture-of-experts LM: 4 experts, 2 per token (softmax router, TopK),
    each token's expert weights gathered by its routed indices (`experts_implementation=
    "batched_mm"`: the eager loop over experts does not export)."""
    from transformers import MixtralConfig, MixtralForCausalLM

    cfg = _decoder_cfg(
        MixtralConfig,
        scale,
        "sdpa",
        intermediate_size=_dims(scale)["ffn"] // 2,
        num_local_experts=4,
        num_experts_per_tok=2,
        experts_implementation="batched_mm",
    )
    return _Logits(MixtralForCausalLM(cfg).eval(), "logits")


def llama_layer(scale: str):
    torch = _torch()
    from transformers.models.llama.modeling_llama import LlamaDecoderLayer, LlamaRotaryEmbedding

    cfg = _llama_cfg(scale)
    layer = LlamaDecoderLayer(cfg, 0).eval()
    rope = LlamaRotaryEmbedding(cfg)

    class L(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer, self.rope = layer, rope

        def forward(self, x):
            pos = torch.arange(x.shape[1]).unsqueeze(0)
            cos, sin = self.rope(x, pos)
            mask = torch.full((x.shape[1], x.shape[1]), float("-inf")).triu(1)[None, None]
            out = self.layer(x, attention_mask=mask, position_ids=pos, position_embeddings=(cos, sin))
            return out[0] if isinstance(out, tuple) else out

    return L().eval()


def qwen2(scale: str):
    from transformers import Qwen2Config, Qwen2ForCausalLM

    return _Logits(Qwen2ForCausalLM(_decoder_cfg(Qwen2Config, scale)).eval(), "logits")


def vit(scale: str):
    from transformers import ViTConfig, ViTModel

    k = _dims(scale)
    cfg = ViTConfig(
        hidden_size=k["d"],
        num_attention_heads=k["heads"],
        num_hidden_layers=k["layers"],
        intermediate_size=k["ffn"],
        image_size=32,
        patch_size=8,
        num_channels=3,
        attn_implementation="eager",
    )
    return _Logits(ViTModel(cfg, add_pooling_layer=False).eval(), "encoder")


def t5_encoder(scale: str):
    from transformers import T5Config, T5EncoderModel

    k = _dims(scale)
    cfg = T5Config(
        d_model=k["d"],
        num_heads=k["heads"],
        num_layers=k["layers"],
        d_ff=k["ffn"],
        d_kv=k["d"] // k["heads"],
        vocab_size=k["vocab"],
        attn_implementation="eager",
    )
    return _Logits(T5EncoderModel(cfg).eval(), "encoder")


def torch_encoder_layer(scale: str):
    torch = _torch()
    k = _dims(scale)
    torch.backends.mha.set_fastpath_enabled(False)  # the fused fast path has no ONNX export
    return torch.nn.TransformerEncoderLayer(k["d"], k["heads"], k["ffn"], dropout=0.0, batch_first=True).eval()


def _image(scale: str):
    torch = _torch()
    return torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(3))


def resnet_small(scale: str):
    """A ResNet from torchvision's own blocks: the 7x7/2 stem, max pool, a BasicBlock and a
    strided BasicBlock with its 1x1 projection, global average pool and the classifier (ResNet-18's
    layers at sim64 widths; `torchvision.models.resnet18()` itself at full scale)."""
    torch = _torch()
    import torchvision

    if scale == "full":
        return torchvision.models.resnet18(num_classes=1000).eval()
    from torchvision.models.resnet import BasicBlock, ResNet

    net = ResNet(BasicBlock, [1, 1, 1, 1], num_classes=10)
    w = 16  # the stem's channels; the stages double them as torchvision's do
    net.inplanes = w
    net.conv1 = torch.nn.Conv2d(3, w, 7, 2, 3, bias=False)
    net.bn1 = torch.nn.BatchNorm2d(w)
    net.layer1 = net._make_layer(BasicBlock, w, 1)
    net.layer2 = net._make_layer(BasicBlock, 2 * w, 1, stride=2)
    net.layer3 = torch.nn.Identity()
    net.layer4 = torch.nn.Identity()
    net.fc = torch.nn.Linear(2 * w, 10)
    _randomize_norms(net)
    return net.eval()


def mobilenet_v2_small(scale: str):
    """torchvision's MobileNetV2 from its config: width 0.25 and its first three inverted-residual
    stages at sim64 size (depthwise 3x3 convolutions, ReLU6, linear bottlenecks)."""
    import torchvision

    if scale == "full":
        return torchvision.models.mobilenet_v2(num_classes=1000).eval()
    setting = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 1, 2]]
    net = torchvision.models.MobileNetV2(num_classes=10, width_mult=0.25, inverted_residual_setting=setting)
    _randomize_norms(net)
    return net.eval()


def _randomize_norms(net) -> None:
    """Random running statistics and affine parameters: a fresh norm is the identity, which
    would let a folding bug pass."""
    torch = _torch()
    g = torch.Generator().manual_seed(4)
    for m in net.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            c = m.num_features
            m.running_mean.copy_(torch.randn(c, generator=g) * 0.1)
            m.running_var.copy_(torch.rand(c, generator=g) + 0.5)
            _random_affine(m, g)


def _torchvision(name: str):
    """A torchvision classification model from its builder: random weights, norm statistics
    measured on random images (`_calibrate_norms`) and random norm affine parameters."""
    import torchvision

    torch = _torch()
    net = getattr(torchvision.models, name)(weights=None, num_classes=1000)
    _calibrate_norms(net, torch.Generator().manual_seed(5))
    return net.eval()


def _calibrate_norms(net, g) -> None:
    """Each BatchNorm's running statistics set to those of its input over random images (a
    train-mode pass, cumulative averages), then random affine parameters, so each norm keeps its
    activations at the scale a trained network's do. With default or random statistics a deep
    random network is not normalized at all: ResNet-50's activations grow block by block (its
    logits reach 1.6e3) and amplify every rounding, so two fp16 computations of it (the device's
    and the reference's) drift apart by several percent while each layer agrees to fp16 rounding."""
    torch = _torch()
    norms = [m for m in net.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # cumulative average over the calibration batches
    net.train()
    with torch.no_grad():
        for _ in range(2):
            net(torch.randn(4, 3, 224, 224, generator=g))
    for m in norms:
        _random_affine(m, g)
    net.eval()


def _random_affine(m, g) -> None:
    """A norm's scale in [0.5, 1.5) and shift about 0.1: not the identity a fresh norm is."""
    torch = _torch()
    m.weight.data.copy_(torch.rand(m.num_features, generator=g) + 0.5)
    m.bias.data.copy_(torch.randn(m.num_features, generator=g) * 0.1)


def conv1d_frontend(scale: str):
    """An audio encoder's front end (Whisper's): two Conv1d with GELU, the second of stride 2."""
    torch = _torch()
    mels, d = (80, 384) if scale == "full" else (16, 32)

    class F(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c1 = torch.nn.Conv1d(mels, d, 3, padding=1)
            self.c2 = torch.nn.Conv1d(d, d, 3, stride=2, padding=1)

        def forward(self, x):
            y = torch.nn.functional.gelu(self.c2(torch.nn.functional.gelu(self.c1(x))))
            return y.permute(0, 2, 1)

    return F().eval()


def lstm(scale: str):
    """A two-layer batch-first LSTM (`nn.LSTM`), its output sequence."""
    torch = _torch()
    d = 256 if scale == "full" else 32

    class L(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.rnn = torch.nn.LSTM(16, d, num_layers=2, batch_first=True)

        def forward(self, x):
            return self.rnn(x)[0]

    return L().eval()


def gru(scale: str):
    """A bidirectional batch-first GRU (`nn.GRU`), its output sequence."""
    torch = _torch()
    d = 256 if scale == "full" else 24

    class G(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.rnn = torch.nn.GRU(16, d, batch_first=True, bidirectional=True)

        def forward(self, x):
            return self.rnn(x)[0]

    return G().eval()


def _sequence(scale: str):
    torch = _torch()
    return torch.randn(2, 12, 16, generator=torch.Generator().manual_seed(7))


def _mels(scale: str):
    torch = _torch()
    mels, frames = (80, 3000) if scale == "full" else (16, 64)
    return torch.randn(1, mels, frames, generator=torch.Generator().manual_seed(5))


BATCH: int | None = None
"""Overrides an image model's batch (`--batch`; default 2 small, 1 full)."""


def _images(scale: str):
    """A batch of images, SEQ pixels a side (`--seq`: 224 for ImageNet models at full scale)."""
    torch = _torch()
    batch = BATCH or (1 if scale == "full" else 2)
    return torch.randn(batch, 3, SEQ, SEQ, generator=torch.Generator().manual_seed(6))


ZOO: dict[str, Spec] = {
    "resnet_small": Spec(resnet_small, lambda s: {"images": _images(s)}),
    "mobilenet_v2_small": Spec(mobilenet_v2_small, lambda s: {"images": _images(s)}),
    "conv1d_frontend": Spec(conv1d_frontend, lambda s: {"mels": _mels(s)}),
    "lstm": Spec(lstm, lambda s: {"x": _sequence(s)}),
    "gru": Spec(gru, lambda s: {"x": _sequence(s)}),
    # full scale only (bench/models.py): torchvision's own ImageNet models, random weights
    "resnet50": Spec(lambda s: _torchvision("resnet50"), lambda s: {"images": _images(s)}),
    "mobilenet_v2": Spec(lambda s: _torchvision("mobilenet_v2"), lambda s: {"images": _images(s)}),
    "gpt2_lm": Spec(gpt2_lm, lambda s: {"input_ids": _ids(s, _dims(s)["vocab"])}),
    "gpt2_block": Spec(gpt2_block, lambda s: {"hidden": _hidden(s, _dims(s)["d"])}),
    "gpt2_blocks": Spec(gpt2_blocks, lambda s: {"hidden": _hidden(s, _dims(s)["d"])}),
    "bert": Spec(bert, lambda s: {"input_ids": _ids(s, _bert_vocab(s))}),
    "llama": Spec(llama, lambda s: {"input_ids": _ids(s, _dims(s)["vocab"])}),
    "mixtral": Spec(mixtral, lambda s: {"input_ids": _ids(s, _dims(s)["vocab"])}),
    "llama_sdpa": Spec(llama_sdpa, lambda s: {"input_ids": _ids(s, _dims(s)["vocab"])}),
    "llama_layer": Spec(llama_layer, lambda s: {"hidden": _hidden(s, _dims(s)["d"])}),
    "qwen2": Spec(qwen2, lambda s: {"input_ids": _ids(s, _dims(s)["vocab"])}),
    "vit": Spec(vit, lambda s: {"pixel_values": _image(s)}),
    "t5_encoder": Spec(t5_encoder, lambda s: {"input_ids": _ids(s, _dims(s)["vocab"])}),
    "torch_encoder_layer": Spec(torch_encoder_layer, lambda s: {"src": _hidden(s, _dims(s)["d"])}),
}


FULL_ONLY = ("resnet50", "mobilenet_v2", "gpt2_blocks")  # no small form (the zoo has resnet_small,
# mobilenet_v2_small; gpt2_blocks is bench/pipeline.py's layer group)


def set_sequence(seq: int) -> None:
    """The sequence length of every token model's example input."""
    global SEQ
    SEQ = seq


def export(name: str, exporter: str, out: Path, scale: str = "small") -> Path:
    """Export one zoo model with one exporter; returns the .onnx path."""
    import onnx
    import onnxruntime as ort

    torch = _torch()
    spec = ZOO[name]
    model = spec.build(scale)
    inputs = spec.inputs(scale)
    dynamo, opset = EXPORTERS[exporter]
    path = out / f"{name}.{exporter}.onnx"
    out.mkdir(parents=True, exist_ok=True)
    args = tuple(inputs.values())
    with torch.no_grad():
        if dynamo:
            prog = torch.onnx.export(
                model,
                args,
                input_names=list(inputs),
                output_names=["out"],
                dynamo=True,
                opset_version=opset,
                external_data=False,
                optimize=True,
            )
            prog.save(str(path), external_data=False)
        else:
            torch.onnx.export(
                model,
                args,
                str(path),
                input_names=list(inputs),
                output_names=["out"],
                dynamo=False,
                opset_version=opset,
                do_constant_folding=True,
            )
        ref = model(*args)
    m = onnx.load(str(path))
    names = [i.name for i in m.graph.input]
    feeds = {n: v.numpy() for n, v in zip(names, args, strict=False)}
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    outs = sess.run(None, feeds)
    torch_out = (ref[0] if isinstance(ref, tuple) else ref).numpy()
    err = float(np.max(np.abs(outs[0] - torch_out)))
    np.savez(out / f"{name}.{exporter}.inputs.npz", **feeds)
    np.savez(out / f"{name}.{exporter}.expected.npz", **{o.name: v for o, v in zip(m.graph.output, outs, strict=True)})
    print(f"{name:20} {exporter:10} {path.stat().st_size / 1024:8.0f} KiB  ort-vs-torch max|d|={err:.2e}", flush=True)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "fixtures")
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--exporter", action="append", default=[])
    ap.add_argument("--scale", choices=("small", "full"), default="small")
    ap.add_argument("--seq", type=int, default=SEQ, help="sequence length (default %(default)s)")
    ap.add_argument("--layers", type=int, default=None, help="layer count (default: the config's)")
    ap.add_argument("--width", type=int, default=None, help="full-scale model width, a multiple of 64")
    ap.add_argument("--vocab", type=int, default=None, help="full-scale vocabulary size")
    ap.add_argument("--batch", type=int, default=None, help="image models' batch (default 2 small, 1 full)")
    a = ap.parse_args()
    if a.width is not None and (a.width <= 0 or a.width % 64):
        ap.error(f"--width {a.width}: a positive multiple of 64 (64-wide heads)")
    set_sequence(a.seq)
    global LAYERS, WIDTH, VOCAB, BATCH
    LAYERS, WIDTH, VOCAB, BATCH = a.layers, a.width, a.vocab, a.batch
    failed = 0
    a.out.mkdir(parents=True, exist_ok=True)
    record(a.out, ("torch", "torchvision", "transformers", "onnx", "onnxscript", "onnxruntime", "numpy"))
    for name in a.only or [n for n in ZOO if n not in FULL_ONLY or a.scale == "full"]:
        for ex in a.exporter or EXPORTERS:
            try:
                export(name, ex, a.out, a.scale)
            except Exception as e:  # noqa: BLE001 -- report every export, go on with the next
                failed += 1
                print(f"{name:20} {ex:10} FAILED {type(e).__name__}: {str(e).splitlines()[0][:200]}", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
