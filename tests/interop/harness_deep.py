#!/usr/bin/env python
"""tests/interop/harness.py for fixtures/deep.sqlite, in .venv/deep (deepagents installed).

Every command of harness.py, where a graph named "deep:<thread>" is the `create_deep_agent`
that wrote that thread (fixtures/deep_graphs.py), plus

    harness_deep.py deep-states --db DEEP.sqlite

which is harness.py's delta-states with each thread's deep agent: every checkpoint of every
thread (and of its subagent namespaces) as `get_state_history` shows it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402  (puts fixtures/ on sys.path)
import deep_graphs  # noqa: E402
import graphs  # noqa: E402

_build = graphs.build


def build(name: str, checkpointer, *, model=None, summarizer=None):
    """graphs.build, with "deep:<thread>" built by deep_graphs."""
    if name.startswith("deep:"):
        return deep_graphs.build(name, checkpointer, model=model)
    return _build(name, checkpointer, model=model, summarizer=summarizer)


def deep_states(db: str) -> dict:
    """harness.cmd_delta_states with every thread's graph its deep agent."""
    graphs.build = lambda name, cp, **kw: deep_graphs.build(name.split(":", 1)[1], cp, **kw)
    try:
        return harness.cmd_delta_states(db)
    finally:
        graphs.build = build


def main() -> int:
    graphs.build = build
    if sys.argv[1:2] == ["deep-states"]:
        if sys.argv[2:3] != ["--db"] or len(sys.argv) != 4:
            sys.exit("usage: harness_deep.py deep-states --db DEEP.sqlite")
        print(json.dumps(deep_states(sys.argv[3]), ensure_ascii=False, indent=1))
        return 0
    return harness.main()


if __name__ == "__main__":
    harness.ensure_hashseed_0(os.path.abspath(__file__))
    sys.exit(main())
