"""The README's marked blocks: the fenced block right after `<!-- readme-snippet: NAME -->`,
so a test runs exactly the text a reader copies (the Rust twin: `mindgate_testkit::readme`)."""

from __future__ import annotations

import pathlib

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"
MARKER = "<!-- readme-snippet: "


def block(name: str, markdown: str | None = None) -> str:
    """The body of the block marked `name` (between its fences, final newline kept)."""
    lines = (README.read_text(encoding="utf-8") if markdown is None else markdown).splitlines()
    marker = f"{MARKER}{name} -->"
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == marker)
    except StopIteration:
        raise AssertionError(f"README.md has no block marked {marker!r}") from None
    if start + 1 >= len(lines) or not lines[start + 1].lstrip().startswith("```"):
        raise AssertionError(f"no fenced block right after {marker!r}")
    body: list[str] = []
    for line in lines[start + 2 :]:
        if line.lstrip().startswith("```"):
            return "".join(f"{text}\n" for text in body)
        body.append(line)
    raise AssertionError(f"the block after {marker!r} is never closed")
