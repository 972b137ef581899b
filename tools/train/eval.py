"""Evaluates the exported default model on held-out NIAH prompts (recall by context length and
needle depth) and writes greedy reference answers that llama.cpp must reproduce token for token."""
import argparse, json, os, random, struct, sys

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from data import niah_content, niah_eval_example, niah_lines_for, random_code
from model import Llama
from train import greedy_recall
from vocab import IM_END, render_chat

LENGTHS = [500, 1000, 1250, 2000]
DEPTHS = [0.0, 0.25, 0.5, 0.75, 1.0]


def load(model_dir):
    cfg = json.load(open(f"{model_dir}/config.json"))
    model = Llama(cfg)
    raw = open(f"{model_dir}/model.safetensors", "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    state = {}
    for name, h in header.items():
        if name == "__metadata__":
            continue
        s, e = h["data_offsets"]
        state[name] = torch.frombuffer(bytearray(raw[8 + n + s:8 + n + e]), dtype=torch.float32).reshape(h["shape"])
    model.load_state_dict(state)
    model.eval()
    return model


@torch.no_grad()
def greedy_generate(model, prompt, max_new=24):
    """Plain greedy decoding (full recompute per token), stopping at <|im_end|>."""
    ids = list(prompt)
    out = []
    for _ in range(max_new):
        tok = int(model(torch.tensor([ids]))[0, -1].argmax())
        out.append(tok)
        ids.append(tok)
        if tok == IM_END:
            break
    return out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="public/models/cohort-tiny")
    p.add_argument("--per-length", type=int, default=200)
    p.add_argument("--reference", type=int, default=50)
    p.add_argument("--out", default="tools/train/eval")
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    model = load(a.model)
    os.makedirs(a.out, exist_ok=True)
    results = {"by_length": [], "at_1238": None}
    per_depth = a.per_length // len(DEPTHS)
    for length in LENGTHS:
        row = {"target_tokens": length, "depths": {}}
        toks, hits_all = [], []
        for d in DEPTHS:
            ex = [niah_eval_example(random.Random(f"eval:{length}:{d}:{i}"), length, d) for i in range(per_depth)]
            toks += [len(pr) for pr, _ in ex]
            r, hits = greedy_recall(model, ex)
            row["depths"][str(d)] = r
            hits_all += hits
        row["mean_prompt_tokens"] = sum(toks) / len(toks)
        row["recall"] = sum(hits_all) / len(hits_all)
        row["n"] = len(hits_all)
        results["by_length"].append(row)
        print(json.dumps(row), flush=True)
    ex = []
    for i in range(100):
        rng = random.Random(f"eval1238:{i}")
        ex.append(niah_eval_example(rng, 1238, rng.random()))
    r, _ = greedy_recall(model, ex)
    results["at_1238"] = {"n": 100, "recall": r, "mean_prompt_tokens": sum(len(p) for p, _ in ex) / len(ex)}
    print(json.dumps(results["at_1238"]), flush=True)
    refs = []
    for i in range(a.reference):
        rng = random.Random(f"reference:{i}")
        length = rng.randint(300, 2000)
        code = random_code(rng)
        content = niah_content(niah_lines_for(length), rng.random(), code)
        prompt = render_chat([("user", content)])
        refs.append({"content": content, "code": code, "prompt_ids": prompt, "output_ids": greedy_generate(model, prompt)})
    results["reference_recall"] = sum(
        bytes(t for t in r["output_ids"] if t < 256).decode("utf-8", "replace").find(r["code"]) >= 0 for r in refs) / len(refs)
    json.dump(results, open(f"{a.out}/results.json", "w"), indent=2)
    json.dump(refs, open(f"{a.out}/niah-reference.json", "w"))
    lines = ["| prompt tokens (mean) | " + " | ".join(f"depth {int(d * 100)}%" for d in DEPTHS) + " | recall | n |",
             "|---|" + "---|" * (len(DEPTHS) + 2)]
    for row in results["by_length"]:
        lines.append(f"| {row['mean_prompt_tokens']:.0f} | " + " | ".join(f"{row['depths'][str(d)]:.3f}" for d in DEPTHS)
                     + f" | {row['recall']:.3f} | {row['n']} |")
    lines.append(f"\nAt ~{results['at_1238']['mean_prompt_tokens']:.0f} tokens: recall {results['at_1238']['recall']:.3f} on 100 prompts. "
                 f"Greedy reference answers ({a.reference} prompts, 300-2,000 tokens): recall {results['reference_recall']:.3f}.")
    open(f"{a.out}/results.md", "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
