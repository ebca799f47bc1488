"""Reference embeddings of all-MiniLM-L6-v2, computed independently of candle.

A plain numpy BERT forward pass (the sentence-transformers recipe: BERT encoder, mean
pooling over the attention mask, L2 normalisation) over the same model files, tokenised by
the Hugging Face `tokenizers` package. It prints the components pinned in
`crates/embed/tests/minilm.rs`.

    python3 -m venv /tmp/ref && /tmp/ref/bin/pip install numpy tokenizers safetensors
    /tmp/ref/bin/python crates/embed/tests/reference/minilm_reference.py <model dir>
"""

import json
import math
import sys

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

SENTENCES = [
    "The cat sits on the mat.",
    "A kitten is resting on a rug.",
    "Quarterly revenue grew by twelve percent.",
]
COMPONENTS = [0, 1, 2, 100, 383]


def layer_norm(x, w, b, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def gelu(x):
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def embed(model_dir, text):
    config = json.load(open(f"{model_dir}/config.json"))
    w = load_file(f"{model_dir}/model.safetensors")
    p = "" if "embeddings.word_embeddings.weight" in w else "bert."
    tok = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
    tok.no_padding()
    tok.enable_truncation(256)
    ids = np.array(tok.encode(text).ids)
    eps = config["layer_norm_eps"]
    heads = config["num_attention_heads"]
    h = (
        w[p + "embeddings.word_embeddings.weight"][ids]
        + w[p + "embeddings.position_embeddings.weight"][: len(ids)]
        + w[p + "embeddings.token_type_embeddings.weight"][0]
    )
    h = layer_norm(h, w[p + "embeddings.LayerNorm.weight"], w[p + "embeddings.LayerNorm.bias"], eps)
    n, d = h.shape
    hd = d // heads
    for i in range(config["num_hidden_layers"]):
        q = f"{p}encoder.layer.{i}."
        lin = lambda x, name: x @ w[q + name + ".weight"].T + w[q + name + ".bias"]
        split = lambda x: x.reshape(n, heads, hd).transpose(1, 0, 2)
        Q, K, V = (split(lin(h, f"attention.self.{m}")) for m in ("query", "key", "value"))
        scores = Q @ K.transpose(0, 2, 1) / math.sqrt(hd)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        scores /= scores.sum(-1, keepdims=True)
        ctx = (scores @ V).transpose(1, 0, 2).reshape(n, d)
        h = layer_norm(lin(ctx, "attention.output.dense") + h,
                       w[q + "attention.output.LayerNorm.weight"],
                       w[q + "attention.output.LayerNorm.bias"], eps)
        inter = gelu(lin(h, "intermediate.dense"))
        h = layer_norm(lin(inter, "output.dense") + h,
                       w[q + "output.LayerNorm.weight"], w[q + "output.LayerNorm.bias"], eps)
    v = h.mean(0)
    return v / np.linalg.norm(v)


if __name__ == "__main__":
    vectors = [embed(sys.argv[1], s) for s in SENTENCES]
    for s, v in zip(SENTENCES, vectors):
        print(repr(s), [round(float(v[c]), 6) for c in COMPONENTS])
    print("cos(0,1)", float(vectors[0] @ vectors[1]), "cos(0,2)", float(vectors[0] @ vectors[2]))
