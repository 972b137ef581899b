"""Trains Cohort's embedded default model (a ~0.85M-parameter Llama) on NIAH and other
retrieval tasks, then exports it in Hugging Face layout. Deterministic from --seed, resumable."""
import argparse, json, math, os, random, struct, sys, time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from data import LONG_TASKS, SHORT_TASKS, induction_rows, niah_eval_example, training_example
from model import Llama
from vocab import ENDOFTEXT, IM_END, IM_START, VOCAB_SIZE, encode_text, write_tokenizer_files

CONFIG = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "vocab_size": VOCAB_SIZE,
    "hidden_size": 128, "intermediate_size": 384, "num_hidden_layers": 4,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32,
    "max_position_embeddings": 4096, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
    "hidden_act": "silu", "attention_bias": False, "mlp_bias": False, "tie_word_embeddings": False,
    "bos_token_id": ENDOFTEXT, "eos_token_id": IM_END, "pad_token_id": ENDOFTEXT, "torch_dtype": "float32",
}


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--steps", type=int, default=3400)
    p.add_argument("--tokens-per-step", type=int, default=4096)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--drill-steps", type=int, default=300, help="phase 0: raw induction rows only")
    p.add_argument("--drill-frac", type=float, default=0.15, help="share of later batches that are induction rows")
    p.add_argument("--short-frac", type=float, default=0.3, help="share of the other batches that are short tasks")
    p.add_argument("--start-len", type=int, default=256)
    p.add_argument("--max-len", type=int, default=2200)
    p.add_argument("--floor-start", type=float, default=0.6, help="fraction of steps after which the length floor starts rising")
    p.add_argument("--floor-frac", type=float, default=0.9, help="fraction of steps by which the length floor reaches --max-len")
    p.add_argument("--eval-every", type=int, default=40)
    p.add_argument("--stop-at", type=int, default=None, help="export a snapshot after this many steps (schedule unchanged)")
    p.add_argument("--export-only", action="store_true", help="export the latest checkpoint and stop")
    p.add_argument("--from-ckpt", default=None, help="resume or export from this checkpoint instead of the run's latest")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--run-dir", default="tools/train/runs/cohort-tiny")
    p.add_argument("--out", default="public/models/cohort-tiny")
    return p.parse_args()


def pad_batch(seqs):
    T = max(len(s) for s, _ in seqs)
    ids = torch.full((len(seqs), T), ENDOFTEXT, dtype=torch.long)
    wts = torch.zeros((len(seqs), T))
    for i, (s, w) in enumerate(seqs):
        ids[i, :len(s)] = torch.tensor(s)
        wts[i, :len(w)] = torch.tensor(w)
    return ids, wts


def batch_for(rng, target, tokens_per_step, short_frac):
    """One batch, one task family: long-context tasks near `target` tokens, or short tasks."""
    short = rng.random() < short_frac
    tasks, target = (SHORT_TASKS, 96) if short else (LONG_TASKS, target)
    seqs, total = [], 0
    while total < tokens_per_step:
        ids, w, _ = training_example(rng, target, tasks)
        seqs.append((ids, w))
        total += len(ids)
    return pad_batch(seqs)


def drill_batch(rng, max_row_len, tokens_per_step, gap_share, max_gap):
    rows = induction_rows(rng, rng.randint(64, max(64, max_row_len)), tokens_per_step, gap_share, max_gap)
    return pad_batch([(row, [1.0] * len(row)) for row in rows])


def drill_gap(step):
    """Junk before each copy in marker drills: none for 150 steps, then growing, so that a copy
    cannot rely on distance."""
    return min(80, max(0, (step - 150) // 5))


def loss_fn(model, ids, wts):
    logits = model(ids[:, :-1])
    nll = F.cross_entropy(logits.reshape(-1, VOCAB_SIZE), ids[:, 1:].reshape(-1), reduction="none")
    w = wts[:, 1:].reshape(-1)
    # Answers are ~1% of the tokens: averaged alone they carry as much gradient as the whole
    # context, or retrieval never gets enough signal to form (weights: 1 context, 2 answer).
    ctx, ans = (w == 1.0).float(), (w == 2.0).float()
    if ans.sum() == 0:  # induction rows: every token counts alike
        return (nll * ctx).sum() / ctx.sum()
    return (nll * ctx).sum() / ctx.sum() + (nll * ans).sum() / ans.sum()


@torch.no_grad()
def greedy_recall(model, examples):
    """Greedy answers by teacher forcing: greedy decoding emits the code exactly when every code
    token is the argmax given the code's own prefix, so one forward per prompt suffices."""
    model.eval()
    hits = []
    for prompt, code in examples:
        ans = encode_text(code)
        ids = torch.tensor([prompt + ans])
        pred = model(ids)[0, len(prompt) - 1:-1].argmax(-1).tolist()
        hits.append(pred == ans)
    model.train()
    return sum(hits) / len(hits), hits


def lr_at(step, a):
    if step < a.warmup:
        return a.lr * (step + 1) / a.warmup
    t = (step - a.warmup) / max(1, a.steps - a.warmup)
    return a.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t)))


def write_safetensors(path, tensors):
    header, offset, blobs = {}, 0, []
    for name, t in tensors.items():
        b = t.detach().contiguous().float().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + len(b)]}
        offset += len(b)
        blobs.append(b)
    header["__metadata__"] = {"format": "pt"}
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for b in blobs:
            f.write(b)


def export(model, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    write_safetensors(f"{out_dir}/model.safetensors", dict(sorted(model.state_dict().items())))
    with open(f"{out_dir}/config.json", "w") as f:
        json.dump(CONFIG, f, indent=2)
    with open(f"{out_dir}/generation_config.json", "w") as f:
        json.dump({"bos_token_id": ENDOFTEXT, "eos_token_id": [IM_END, ENDOFTEXT], "do_sample": False}, f, indent=2)
    write_tokenizer_files(out_dir, CONFIG["max_position_embeddings"])


def main():
    a = parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    os.makedirs(a.run_dir, exist_ok=True)
    log = open(f"{a.run_dir}/train.log", "a")

    def say(msg):
        line = f"{time.strftime('%H:%M:%S')} {msg}"
        print(line, flush=True)
        log.write(line + "\n")
        log.flush()

    model = Llama(CONFIG)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.95))
    state = {"step": 0, "limit": a.start_len, "elapsed": 0.0}
    ckpt = f"{a.run_dir}/ckpt.pt"
    start_from = a.from_ckpt or ckpt
    if os.path.exists(start_from):
        c = torch.load(start_from)
        model.load_state_dict(c["model"])
        opt.load_state_dict(c["opt"])
        state = c["state"]
        say(f"resumed at step {state['step']} limit {state['limit']}")
    else:
        say(f"params {sum(p.numel() for p in model.parameters())} args {vars(a)}")

    if a.export_only:
        export(model, a.out)
        say(f"exported step {state['step']} to {a.out}")
        return

    t0 = time.time() - state["elapsed"]
    last = min(a.steps, a.stop_at or a.steps)
    while state["step"] < last:
        step = state["step"]
        rng = random.Random(f"train:{a.seed}:{step}")
        # The adaptive length curriculum, with a floor that rises from floor_start to max_len.
        t = (step / a.steps - a.floor_start) / (a.floor_frac - a.floor_start)
        floor = a.start_len * (a.max_len / a.start_len) ** min(1.0, max(0.0, t))
        limit = int(min(a.max_len, max(state["limit"], floor)))
        if step < a.drill_steps:
            # Phase 0: copying only: raw rows until the copy forms (~200 steps), then raw rows
            # and chat-wrapped "memorize" drills alternately.
            raw = step < 0.5 * a.drill_steps or step % 2 == 0
            gap_share = 0.0 if step < 0.5 * a.drill_steps else 0.3
            ids, wts = drill_batch(rng, 256, a.tokens_per_step, gap_share, drill_gap(step)) if raw else batch_for(rng, 96, a.tokens_per_step // 2, short_frac=1.0)
        elif rng.random() < a.drill_frac:
            ids, wts = drill_batch(rng, limit, a.tokens_per_step, 0.3, drill_gap(step))
        else:
            target = limit if rng.random() < 0.5 else rng.randint(96, limit)
            ids, wts = batch_for(rng, target, a.tokens_per_step, a.short_frac)
        for g in opt.param_groups:
            g["lr"] = lr_at(step, a)
        loss = loss_fn(model, ids, wts)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        state["step"] = step + 1
        state["limit"] = limit
        if step % 10 == 0:
            say(f"step {step} len {ids.shape[1]}x{ids.shape[0]} limit {limit} loss {loss.item():.4f} lr {lr_at(step, a):.2e} t {time.time() - t0:.0f}s")
        if (step + 1) % a.eval_every == 0 and step >= a.drill_steps:
            erng = random.Random(f"curriculum:{a.seed}:{step}")
            ex = [niah_eval_example(erng, max(limit, 200), erng.random()) for _ in range(32)]
            recall, _ = greedy_recall(model, ex)
            say(f"eval step {step + 1} limit {limit} recall {recall:.3f}")
            if recall >= 0.9 and limit < a.max_len:
                state["limit"] = int(min(a.max_len, limit * 1.5))
                say(f"curriculum: limit -> {state['limit']}")
        if (step + 1) % 50 == 0 or state["step"] == last:
            state["elapsed"] = time.time() - t0
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "state": state}, ckpt + ".tmp")
            os.replace(ckpt + ".tmp", ckpt)
        if (step + 1) % 200 == 0:  # milestones, so a later regression can be rolled back
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "state": state}, f"{a.run_dir}/ckpt-{step + 1}.pt")
    say(f"done: {last} of {a.steps} steps in {(time.time() - t0) / 60:.1f} min")
    export(model, a.out)
    say(f"exported to {a.out}")


if __name__ == "__main__":
    main()
