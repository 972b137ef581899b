"""Byte-level vocabulary of the default model: 256 byte tokens plus 3 chat specials.
Not a trained BPE: bytes keep NIAH digits one token each and make tokenization trivially exact."""
import json

NUM_BYTES = 256
ENDOFTEXT, IM_START, IM_END = 256, 257, 258
SPECIALS = {ENDOFTEXT: "<|endoftext|>", IM_START: "<|im_start|>", IM_END: "<|im_end|>"}
VOCAB_SIZE = 259

# The chat template, rendered by @huggingface/jinja in the app and mirrored by render_chat().
CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)


def encode_text(text):
    """Plain text -> byte ids (special-token strings stay plain bytes)."""
    return list(text.encode("utf-8"))


def render_chat(messages, add_generation_prompt=True):
    """messages [(role, content)] -> token ids, exactly what CHAT_TEMPLATE + tokenizer.json give."""
    ids = []
    for role, content in messages:
        ids += [IM_START] + encode_text(role + "\n" + content) + [IM_END] + encode_text("\n")
    if add_generation_prompt:
        ids += [IM_START] + encode_text("assistant\n")
    return ids


def byte_to_unicode():
    """GPT-2's reversible byte -> printable character map (what ByteLevel pre-tokenizers use)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


def token_strings():
    """Token id -> string as stored in tokenizer.json and the GGUF vocabulary."""
    b2u = byte_to_unicode()
    return [b2u[b] for b in range(NUM_BYTES)] + [SPECIALS[i] for i in sorted(SPECIALS)]


def tokenizer_json():
    added = [
        {"id": i, "content": s, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": True}
        for i, s in sorted(SPECIALS.items())
    ]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
        "model": {
            "type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
            "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
            "vocab": {s: i for i, s in enumerate(token_strings())},
            "merges": [],
        },
    }


def tokenizer_config_json(max_len):
    return {
        "add_bos_token": False,
        "add_eos_token": False,
        "bos_token": SPECIALS[ENDOFTEXT],
        "eos_token": SPECIALS[IM_END],
        "pad_token": SPECIALS[ENDOFTEXT],
        "unk_token": None,
        "model_max_length": max_len,
        "clean_up_tokenization_spaces": False,
        "tokenizer_class": "PreTrainedTokenizerFast",
        "chat_template": CHAT_TEMPLATE,
        "added_tokens_decoder": {
            str(i): {"content": s, "lstrip": False, "normalized": False, "rstrip": False, "single_word": False, "special": True}
            for i, s in sorted(SPECIALS.items())
        },
    }


def write_tokenizer_files(out_dir, max_len):
    with open(f"{out_dir}/tokenizer.json", "w") as f:
        json.dump(tokenizer_json(), f, ensure_ascii=False, indent=1)
    with open(f"{out_dir}/tokenizer_config.json", "w") as f:
        json.dump(tokenizer_config_json(max_len), f, ensure_ascii=False, indent=2)
