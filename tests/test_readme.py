"""The Python example in the README runs as written."""

from __future__ import annotations

import re

from .helpers import README


def test_readme_python_blocks_run(capsys) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})
    assert capsys.readouterr().out.strip()
