#!/usr/bin/env python
"""A SqliteSaver file holding one DeltaChannel thread with N updates since its only seed,
written by real LangGraph; or the time LangGraph's get_state takes on it.

    .venv/new/bin/python scripts/make_long_delta_thread.py OUT.sqlite [--turns 2500]
    .venv/new/bin/python scripts/make_long_delta_thread.py OUT.sqlite --get-state

The thread `long` is a one-node chat whose `messages` is a
`DeltaChannel(_messages_delta_reducer, snapshot_frequency=10**9)`, run with
LANGGRAPH_DELTA_MAX_SUPERSTEPS_SINCE_SNAPSHOT=10**6: no checkpoint ever stores the list, so
every read replays every write since the first checkpoint (each turn is two updates and three
checkpoints: 2,500 turns = 5,000 updates, 7,500 checkpoints). Writing it is quadratic (each
turn LangGraph replays the whole thread): 2,500 turns take about 30 minutes here. Used to
check that memctl replays a DeltaChannel thread no more than it must (issue #16).
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import time
from typing import Annotated, TypedDict

os.environ["LANGGRAPH_DELTA_MAX_SUPERSTEPS_SINCE_SNAPSHOT"] = "1000000"

from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402
from langgraph.channels.delta import DeltaChannel  # noqa: E402
from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: E402
from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.graph.message import _messages_delta_reducer  # noqa: E402


class State(TypedDict):
    messages: Annotated[list, DeltaChannel(_messages_delta_reducer, snapshot_frequency=10**9)]


def build(saver):
    def model(state):
        n = len(state["messages"])
        return {"messages": [AIMessage(f"answer {n}", id=f"ai-{n}")]}

    g = StateGraph(State)
    g.add_node("model", model)
    g.add_edge(START, "model")
    g.add_edge("model", END)
    return g.compile(checkpointer=saver)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--turns", type=int, default=2500)
    ap.add_argument("--get-state", action="store_true", help="time get_state on OUT instead")
    a = ap.parse_args()
    cfg = {"configurable": {"thread_id": "long"}}
    if a.get_state:
        con = sqlite3.connect(a.out, check_same_thread=False)
        graph = build(SqliteSaver(con))
        times = []
        for _ in range(3):
            t = time.perf_counter()
            st = graph.get_state(cfg)
            times.append(time.perf_counter() - t)
        print(f"get_state: {len(st.values['messages'])} messages, "
              f"median {sorted(times)[1]:.3f} s of 3")
        return
    if os.path.exists(a.out):
        sys.exit(f"{a.out} exists")
    con = sqlite3.connect(a.out, check_same_thread=False)
    graph = build(SqliteSaver(con))
    for i in range(a.turns):
        text = f"question {i} " + "word " * 20
        graph.invoke({"messages": [HumanMessage(text, id=f"h-{i}")]}, cfg)
    con.commit()
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()


if __name__ == "__main__":
    main()
