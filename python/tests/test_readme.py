"""The Python snippets of the documentation run as written: python/README.md's, the repository's
README.md's and docs/user-guide.md's (each file's snippets in order, in one namespace, as a reader
would paste them). scripts/check-snippets.py (CTest's docs.snippets) runs the other languages'
blocks and leaves these to this test. A block marked `<!-- snippet: needs-gpu -->` (or one on
torch arrays) runs where PyTorch sees a GPU; one marked `output` or `skip ...` is not run."""
import re
import textwrap
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SNIPPET = re.compile(r"(?:^[ \t]*<!--\s*snippet:\s*(.*?)\s*-->\s*\n(?:[ \t]*\n)*)?^( *)```python\n(.*?)^\2```",
                     re.MULTILINE | re.DOTALL)


def snippets(path):
    """(directives, code) for each Python block of a Markdown file."""
    if not path.is_file():
        pytest.skip(f"{path} is not here (tests run outside the source tree)")
    return [([d.strip().split(" ")[0] for d in (marker or "").split(";") if d.strip()], textwrap.dedent(code))
            for marker, _, code in SNIPPET.findall(path.read_text())]


def gpu_torch():
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


@pytest.mark.parametrize("readme", [HERE.parent / "README.md", ROOT / "README.md", ROOT / "docs" / "user-guide.md"],
                         ids=["python/README.md", "README.md", "docs/user-guide.md"])
def test_readme_snippets_run(readme):
    pytest.importorskip("scipy")
    found = snippets(readme)
    assert found, f"no Python snippet in {readme}"
    namespace = {}
    for directives, code in found:
        if {"output", "skip", "needs-mpi"} & set(directives):
            continue
        if ("needs-gpu" in directives or "torch" in code) and not gpu_torch():
            continue
        exec(compile(code, str(readme), "exec"), namespace)
