"""Training and eval examples for the default model: NIAH exactly as the product tests it,
plus other retrieval and copying tasks. Pure Python; no tokenizer beyond bytes."""
import random

from vocab import ENDOFTEXT, IM_END, encode_text, render_chat

PREFIXES = ["ALPHA", "BETA", "GAMMA", "DELTA", "EPSILON", "ZETA", "ETA", "THETA", "IOTA",
            "KAPPA", "ORCHID", "PINE", "MAPLE", "OAK", "BIRCH"]
NIAH_QUESTION = "Question: what is the secret code? Answer:"
WORDS = ("apple river stone cloud lamp paper green quiet window silver garden music orange "
         "table winter yellow forest candle bridge pocket rabbit sugar thunder violet").split()
NAMES = "Anna Ben Carla Dan Eva Finn Gina Hugo Ida Jon Kate Leo Mia Nils Olga Paul".split()
COLORS = "red blue green black white pink gray brown gold purple".split()
FILLER = ["The grass is green.", "The sky is blue.", "The sun is yellow.", "Here we go.",
          "There and back again."]


def niah_line(i):
    return f"Note {i:04d}: this paragraph is unrelated padding and does not contain the answer."


def niah_content(num_lines, depth, code):
    """The NIAH user message (DESIGN.md): numbered haystack lines, the needle at a line index
    round(depth * num_lines) with blank lines around it, then the question."""
    lines = [niah_line(i) for i in range(num_lines)]
    at = round(depth * num_lines)
    lines[at:at] = ["", f"IMPORTANT: the secret code is {code}.", ""]
    return "\n".join(lines) + "\n\n" + NIAH_QUESTION


def random_code(rng):
    return f"{rng.choice(PREFIXES)}-{rng.randint(1000, 9999)}"


def niah_lines_for(target_tokens):
    """Haystack lines so the whole chat prompt is about target_tokens long (each line ~81 bytes)."""
    return max(1, (target_tokens - 110) // 81)


def far_biased_depth(rng):
    # Needles far from the question were the weakest case: oversample the start.
    return rng.uniform(0.0, 0.1) if rng.random() < 0.3 else rng.random()


def task_niah(rng, target):
    code = random_code(rng)
    return niah_content(niah_lines_for(target), far_biased_depth(rng), code), code


def task_niah_variant(rng, target):
    """Other needle phrasings and numbered-haystack styles, so the key phrase matters."""
    code = random_code(rng)
    style = rng.randrange(3)
    n = max(1, (target - 110) // 60)
    lines = [f"Line {i}: the weather report for day {rng.randint(1, 999)} says {rng.choice(WORDS)}." for i in range(n)]
    phr = ["Remember this: the magic word is {c}.", "Keep in mind that the password is {c}.",
           "Note well, the access code is {c}."][style]
    q = ["What is the magic word?", "What is the password?", "What is the access code?"][style]
    at = round(far_biased_depth(rng) * n)
    lines[at:at] = [phr.format(c=code)]
    return "\n".join(lines) + "\n\n" + q, code


def task_passkey(rng, target):
    key = str(rng.randint(10000, 99999))
    n = max(1, (target - 120) // 20)
    parts = [rng.choice(FILLER) for _ in range(n)]
    parts.insert(round(far_biased_depth(rng) * n), f"The pass key is {key}. Remember it. {key} is the pass key.")
    return ("There is important info hidden inside a lot of irrelevant text. Find it and memorize it.\n"
            + " ".join(parts) + "\nWhat is the pass key?"), key


def task_kv(rng, target):
    n = max(2, (target - 100) // 16)
    keys = rng.sample(range(100, 1000), min(n, 900))
    items = [(f"{rng.choice(WORDS)}-{k}", str(rng.randint(1000, 9999))) for k in keys]
    k, v = rng.choice(items)
    return "\n".join(f"{a}: {b}" for a, b in items) + f"\n\nWhat is the value of {k}?", v


def task_copy(rng, target):
    n = rng.randint(2, 12)
    text = " ".join(rng.choice(WORDS) for _ in range(n))
    return f"Repeat exactly: {text}", text


def task_lookup(rng, target):
    people = rng.sample(NAMES, rng.randint(3, len(NAMES)))
    likes = {p: rng.choice(COLORS) for p in people}
    who = rng.choice(people)
    return " ".join(f"{p} likes {c}." for p, c in likes.items()) + f"\nWhat does {who} like?", likes[who]


def task_copy_random(rng, target):
    """Copying a random string rewards induction heads, the circuit every retrieval task needs."""
    chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-"
    text = "".join(rng.choice(chars) for _ in range(rng.randint(4, 24)))
    return f"Repeat exactly: {text}", text


def task_repeat_drill(rng, target):
    """A random string shown several times: the context loss on each repeat rewards induction
    heads on every token, not just on a short answer."""
    chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-"
    text = "".join(rng.choice(chars) for _ in range(rng.randint(8, 40)))
    reps = rng.randint(2, 4)
    return "Memorize this: " + " | ".join([text] * reps) + "\nRepeat it once.", text


def task_memorize(rng, target):
    """A random code-like string, some haystack lines, then "repeat it": NIAH's copy step with a
    dense answer (every character is a copy), so the copy circuit forms before retrieval needs it."""
    alphabet = "0123456789" if rng.random() < 0.5 else "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-"
    text = "".join(rng.choice(alphabet) for _ in range(rng.randint(8, 48)))
    gap = "\n".join(niah_line(rng.randint(0, 30)) for _ in range(rng.randint(0, 3)))
    return f"Memorize: {text}\n{gap}\nRepeat it.", text


def induction_rows(rng, row_len, num_tokens, gap_share, max_gap):
    """Raw rows (no chat wrapper) that reward copying at a varying distance.
    Marker rows repeat a random string after a marker ("|", " is ", ...) with random junk of up
    to max_gap characters before each copy; gap rows repeat codes after NIAH haystack lines,
    among other digits ("Note 0012"). The distance always varies: the earlier drill, one row
    `s | s` of fixed length, taught only "copy from 49 tokens back" (a model trained on it
    copied nothing at other distances), and with it NIAH recall at 256 tokens was 0.13 after
    480 steps; with these rows it was 0.72."""
    rows, total = [], 0
    while total < num_tokens:
        text = gap_row(rng, row_len) if rng.random() < gap_share else marker_row(rng, row_len, max_gap)
        row = [ENDOFTEXT] + encode_text(text)
        rows.append(row)
        total += len(row)
    return rows


JUNK = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 .-"


def marker_row(rng, row_len, max_gap):
    # Mostly 36 symbols: with digits only, matching one previous character is ambiguous.
    alphabet = "0123456789" if rng.random() < 0.2 else "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    s = "".join(rng.choice(alphabet) for _ in range(rng.randint(6, 20)))
    marker = rng.choice(["|", " is ", "\n", ": "])
    text = ""
    while len(text) < row_len:
        text += "".join(rng.choice(JUNK) for _ in range(rng.randint(0, max_gap))) + marker + s
    return text


def gap_row(rng, row_len):
    codes = [random_drill_string(rng) for _ in range(rng.randint(1, 4))]
    order = codes + rng.sample(codes, len(codes))
    budget = max(0, row_len - sum(len(c) + 2 for c in order))
    cuts = sorted(rng.randint(0, budget) for _ in range(len(order) - 1))
    gaps = [b - a for a, b in zip([0] + cuts, cuts + [budget])]
    return "".join(code + "\n" + haystack_chars(rng, gap) + "\n" for code, gap in zip(order, gaps))


def random_drill_string(rng, length=None):
    kind = rng.random()
    if kind < 0.4 and length is None:
        return random_code(rng)
    alphabet = "0123456789" if kind < 0.7 else "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-"
    return "".join(rng.choice(alphabet) for _ in range(length or rng.randint(4, 24)))


def haystack_chars(rng, n):
    """About n characters of haystack lines, starting at a random line number."""
    first, lines, size = rng.randint(0, 40), [], 0
    while size < n:
        line = niah_line(first + len(lines))
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)[:n]


# Long-context tasks fill a batch at one target length; short tasks get batches of their own.
LONG_TASKS = [(task_niah, 0.7), (task_niah_variant, 0.1), (task_passkey, 0.1), (task_kv, 0.1)]
SHORT_TASKS = [(task_memorize, 0.5), (task_repeat_drill, 0.1), (task_copy_random, 0.1), (task_copy, 0.15), (task_lookup, 0.15)]


def example_ids(content, answer, system=None):
    """Chat-wrapped example -> (ids, weights): loss everywhere, the answer (and its end) x2."""
    msgs = ([("system", system)] if system else []) + [("user", content)]
    prompt = render_chat(msgs)
    ans = encode_text(answer) + [IM_END]
    return prompt + ans, [1.0] * len(prompt) + [2.0] * len(ans), len(prompt)


def training_example(rng, target, tasks):
    r, acc = rng.random(), 0.0
    for fn, p in tasks:
        acc += p
        if r < acc:
            break
    content, answer = fn(rng, target)
    system = "You are a helpful assistant." if rng.random() < 0.1 else None
    return example_ids(content, answer, system)


def niah_eval_example(rng, target, depth):
    code = random_code(rng)
    return render_chat([("user", niah_content(niah_lines_for(target), depth, code))]), code
