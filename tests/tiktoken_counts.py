"""tiktoken's counts of the texts in a JSON file, for tests/tokens.rs (run with .venv/new).

    python tests/tiktoken_counts.py TEXTS.json

Prints {"o200k_base": [len(encode_ordinary(text)), ...], "cl100k_base": [...], "tiktoken": version}.
tiktoken runs offline on the tables memctl compiles in (data/tiktoken/, rebuilt as
`.tiktoken` files and checked against tiktoken's sha256 by fixtures/bpe_files.py).
"""

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "fixtures"))

from bpe_files import copy_bpe, find_bpe_files  # noqa: E402

URLS = {
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
}


def main() -> None:
    files = find_bpe_files(URLS)
    if files is None:
        sys.exit("tiktoken_counts: BPE files not found")
    with tempfile.TemporaryDirectory(prefix="memctl-tiktoken-") as cache:
        for name, url in URLS.items():
            copy_bpe(files[name], Path(cache) / hashlib.sha1(url.encode()).hexdigest())
        os.environ["TIKTOKEN_CACHE_DIR"] = cache
        import tiktoken

        texts = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
        out = {"tiktoken": tiktoken.__version__}
        for name in URLS:
            enc = tiktoken.get_encoding(name)
            out[name] = [len(enc.encode_ordinary(t)) for t in texts]
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
