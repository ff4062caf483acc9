#!/usr/bin/env python
"""A SqliteSaver file holding one thread with N messages, written by real LangGraph.

    .venv/new/bin/python scripts/make_long_thread.py OUT.sqlite [--messages 100000]

The thread `long` alternates human questions, AI answers that call a tool, tool results and
AI replies (varied text, tool-call arguments as JSON), as a long-running agent's history
looks; it is written with graph.update_state, so the file is exactly what LangGraph writes.
Used to check that every memctl command stays linear on very long threads (issue #12).
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "fixtures"))

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402
from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402
from langgraph.graph import START, MessagesState, StateGraph  # noqa: E402

WORDS = ("invoice order shipment refund customer account password region latency cache "
         "deploy rollback kubernetes postgres index query budget forecast contract renewal "
         "meeting agenda summary draft review approve reject escalate ticket").split()


def text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def messages(count: int, seed: int = 7):
    rng = random.Random(seed)
    out = []
    i = 0
    while len(out) < count:
        out.append(HumanMessage(text(rng, rng.randint(5, 40)), id=f"h{i}"))
        if i % 3 == 0:
            call = {"name": "lookup", "args": {"query": text(rng, 3), "limit": rng.randint(1, 9)},
                    "id": f"call{i}", "type": "tool_call"}
            out.append(AIMessage("", id=f"a{i}", tool_calls=[call]))
            out.append(ToolMessage(text(rng, rng.randint(10, 80)), tool_call_id=f"call{i}",
                                   name="lookup", id=f"t{i}"))
        out.append(AIMessage(text(rng, rng.randint(10, 60)), id=f"r{i}"))
        i += 1
    return out[:count] if out[count - 1].type != "ai" or not out[count - 1].tool_calls else out[:count - 1]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--messages", type=int, default=100_000)
    a = ap.parse_args()
    con = sqlite3.connect(a.out, check_same_thread=False)
    saver = SqliteSaver(con)
    g = StateGraph(MessagesState)
    g.add_node("model", lambda s: {"messages": []})
    g.add_edge(START, "model")
    graph = g.compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": "long"}}
    graph.invoke({"messages": [HumanMessage("start", id="start")]}, cfg)
    graph.update_state(cfg, {"messages": messages(a.messages)}, as_node="model")
    con.close()
    print(f"{a.out}: thread 'long' with {a.messages + 1} messages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
