"""The Python snippets of the READMEs run as written: python/README.md's, and those of the Python
section of the repository's README.md (each README's snippets in order, in one namespace, as a
reader would paste them). A snippet on GPU arrays runs where PyTorch sees a GPU."""
import re
import textwrap
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SNIPPET = re.compile(r"^( *)```python\n(.*?)^\1```", re.MULTILINE | re.DOTALL)


def snippets(path, section=None):
    if not path.is_file():
        pytest.skip(f"{path} is not here (tests run outside the source tree)")
    text = path.read_text()
    if section is not None:
        start = text.index(section)
        end = text.find("\n## ", start + len(section))
        text = text[start:end if end >= 0 else None]
    return [textwrap.dedent(code) for _, code in SNIPPET.findall(text)]


def gpu_torch():
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


@pytest.mark.parametrize("readme, section", [(HERE.parent / "README.md", None),
                                             (HERE.parent.parent / "README.md", "\n## Python\n")],
                         ids=["python/README.md", "README.md"])
def test_readme_snippets_run(readme, section):
    pytest.importorskip("scipy")
    found = snippets(readme, section)
    assert found, f"no Python snippet in {readme}"
    namespace = {}
    for code in found:
        if "torch" in code and not gpu_torch():
            continue
        exec(compile(code, str(readme), "exec"), namespace)
