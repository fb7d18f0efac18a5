"""The README's own-learner example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def _example(name: str) -> str:
    text = README.read_text()
    match = re.search(rf"<!-- example: {name} -->\n```python\n(.*?)```", text, re.S)
    assert match, f"README.md has no example marked {name!r}"
    return match.group(1)


def test_own_learner_example_runs(capsys):
    code = _example("own-learner")
    assert 20 <= len(code.strip().splitlines()) <= 50
    namespace: dict = {"__name__": "readme_example"}
    exec(compile(code, str(README), "exec"), namespace)  # noqa: S102 (the project's own README)
    result = namespace["result"]
    final = result.summary()
    assert final["regret"].notna().all() and final["pseudo_regret"].notna().all()
    assert result.metadata["settings"]["mlcb M=2"]["engine"] == "python"
    assert "best_deployed_share" in capsys.readouterr().out
