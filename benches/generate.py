"""Build a large LangGraph SqliteSaver database for memctl's benchmarks.

Run with a venv that has the "new" LangGraph stack (.venv/new or .venv/bench):

    .venv/bench/bin/python benches/generate.py --out target/bench/r.sqlite                 # realistic, ~1 GB
    .venv/bench/bin/python benches/generate.py --scale 4 --out target/bench/r4.sqlite      # realistic, 4x
    .venv/bench/bin/python benches/generate.py --preset legacy --out target/bench/l.sqlite # the first data set
    .venv/bench/bin/python benches/generate.py --preset small --out target/bench/s.sqlite  # legacy, ~47 MiB
    .venv/bench/bin/python benches/generate.py --preset long-thread --messages 100000 --out t.sqlite
    .venv/bench/bin/python benches/generate.py --preset mixed --scale 0.3 --out m.sqlite  # mixed scripts (#30)

Presets: `realistic` (the default; realistic.py and textgen.py: production-like threads, see
there), `legacy` (the first data set, described below, kept as a second case), `small` (legacy,
120 threads), `realistic-small` (60 realistic threads), `long-thread` (one realistic thread of
--messages messages), `mixed` (issue #30: realistic threads whose prose is Chinese/English
code-switching, with CSV tool outputs of random numbers, code and emoji; 340 threads per 1x,
~1 GB; 37 % of the message text is CJK). --scale multiplies the thread count; thread i's contents depend only on
(--seed, i), so 4x holds the threads of 1x and more.

Everything goes through the real stack: `langchain.agents.create_agent` (tools node,
ToolMessages, add_messages) checkpointed by `langgraph.checkpoint.sqlite.SqliteSaver`. Only the
chat model is fake: it answers from a per-thread seeded RNG, so the conversation contents
(messages, their ids, tool calls, tool results) are the same on every run with the same
--seed/--threads/--turns/--scale. Checkpoint ids, `ts` and ToolMessage ids (uuid4, given by
add_messages) change on every run, as in real LangGraph.

What a legacy thread looks like:
  * 1..--turns user turns (uniform); ~30% of the threads start with a SystemMessage in the state;
  * per turn the model calls tools with p=0.6 (1-3 parallel calls), and after tool results calls
    tools again with p=0.3, then answers; tools: get_weather, add, search_docs (long results),
    translate (Chinese / emoji output);
  * reply lengths are log-normal (median ~680 chars, up to ~8k); user messages are shorter;
  * text mixes English (a ~150-word list), Chinese and emoji; AI messages carry usage_metadata
    and response_metadata like a real provider's.

Threads are played round-robin turn by turn inside each worker (so a thread's rows are
interleaved with other threads' rows, as in a live app). Workers (--jobs, default nproc) write
separate files that are merged at the end with ATTACH + INSERT INTO ... SELECT; the merged file is
left in WAL mode (as SqliteSaver leaves it) after PRAGMA wal_checkpoint(TRUNCATE). A `.json`
summary beside the file records sizes, counts and the generation time.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import multiprocessing as mp
import os
import random
import sqlite3
import sys
import time
import uuid
from pathlib import Path
from typing import Any

# Legacy defaults, calibrated to a real-world file's size (640 threads x up to 20 turns ~ 910 MiB,
# ~30k checkpoints). small: ~47 MiB.
DEFAULT = {"threads": 640, "turns": 20}
SMALL = {"threads": 120, "turns": 10}
# The realistic presets (realistic.py): turns per thread are drawn from 5..40 there.
REALISTIC_1X = {"threads": 340, "turns": 40}  # ~1 GB (~3 MB per realistic thread)
REALISTIC_SMALL = {"threads": 60, "turns": 40}
MIXED_1X = {"threads": 340, "turns": 40}  # the mixed preset (realistic.py, issue #30)
REALISTIC = ("realistic", "realistic-small", "mixed")
PRESETS = ["realistic", "legacy", "small", "realistic-small", "long-thread", "default", "mixed"]
SYSTEM_RATE = 0.3
P_TOOL_AFTER_HUMAN = 0.6
P_TOOL_AFTER_TOOL = 0.3

WORDS = (
    "the a of to and in is for on with as by at from that this it be are or an was we can will "
    "checkpoint thread graph state memory agent model token message tool call result answer "
    "question context window summary latency database index query cache vector embedding "
    "weather city temperature forecast rain sunny cloudy wind humidity travel flight hotel "
    "budget schedule meeting report invoice customer order shipping refund policy account "
    "password security update release version feature bug fix deploy server client request "
    "response error timeout retry limit quota price plan upgrade support ticket priority "
    "please thanks sure okay great let me check here is what I found also note that however "
    "first second finally because therefore which would could should might really quickly"
).split()
ZH = (
    "你好 谢谢 天气 北京 上海 明天 今天 会议 报告 数据库 检查点 线程 模型 工具 结果 问题 "
    "回答 总结 记忆 上下文 请 帮我 查一下 可以 没问题 温度 下雨 晴天 航班 酒店 预算 订单 退款"
).split()
EMOJI = ["🙂", "🚀", "✅", "❌", "🌧️", "☀️", "🏯", "🎉", "🤔", "📈", "🔥", "👍", "🐍", "🦀", "💡", "⏰"]
CITIES = ["Paris", "Berlin", "Tokyo", "北京", "上海", "São Paulo", "Zürich", "Kraków",
          "New York", "Lagos", "Mumbai", "東京 🗼", "Reykjavík", "Cairo", "Sydney"]


# ------------------------------------------------------------------------------------------
# Deterministic text
# ------------------------------------------------------------------------------------------


def text(rng: random.Random, n_chars: int) -> str:
    """About n_chars characters of mixed English / Chinese / emoji prose."""
    out: list[str] = []
    size = 0
    zh_mode = rng.random() < 0.15  # some messages are mostly Chinese
    while size < n_chars:
        r = rng.random()
        if zh_mode and r < 0.7 or (not zh_mode and r < 0.06):
            w = rng.choice(ZH)
        elif r < 0.1 if not zh_mode else r < 0.75:
            w = rng.choice(EMOJI)
        else:
            w = rng.choice(WORDS)
        if size and rng.random() < 0.08:
            w = w + rng.choice([".", ",", "!", "?", ":", ";"])
        if size and rng.random() < 0.02:
            w = "\n\n" + w
        out.append(w)
        size += len(w) + 1
    return " ".join(out)


def lognormal_len(rng: random.Random, median: float, sigma: float, lo: int, hi: int) -> int:
    return max(lo, min(hi, int(rng.lognormvariate(math.log(median), sigma))))


def det_uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def sub_rng(*parts: Any) -> random.Random:
    h = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return random.Random(int.from_bytes(h[:8], "big"))


# ------------------------------------------------------------------------------------------
# The LangGraph side (imported lazily so `--help` is fast and workers import once)
# ------------------------------------------------------------------------------------------


def build_stack():
    from langchain.agents import create_agent
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.tools import tool

    @tool
    def get_weather(city: str) -> str:
        """Return the current weather for a city."""
        r = sub_rng("weather", city)
        return (f"{city}: {r.choice(['sunny ☀️', 'rain 🌧️', 'cloudy', '多云', 'windy'])}, "
                f"{r.randint(-10, 35)}°C, humidity {r.randint(20, 95)}%")

    @tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @tool
    def search_docs(query: str, top_k: int = 3) -> str:
        """Search the knowledge base and return the best passages."""
        r = sub_rng("search", query, top_k)
        parts = [f"[{i + 1}] " + text(r, lognormal_len(r, 500, 0.8, 60, 4000)) for i in range(top_k)]
        return "\n".join(parts)

    @tool
    def translate(text_: str, target: str = "zh") -> str:
        """Translate a short text."""
        r = sub_rng("translate", text_, target)
        return "".join(r.choice(ZH) for _ in range(max(2, len(text_) // 6))) + " " + r.choice(EMOJI)

    tools = [get_weather, add, search_docs, translate]

    class BenchChatModel(BaseChatModel):
        """Deterministic fake chat model: the reply depends only on (seed, thread, call number)."""

        seed: int = 0

        @property
        def _llm_type(self) -> str:
            return "memctl-bench-fake"

        def bind_tools(self, tools: Any, **kwargs: Any) -> "BenchChatModel":  # type: ignore[override]
            return self

        def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
            n = sum(1 for m in messages if m.type == "ai")  # stable across runs and resumes
            # the thread's first message has a deterministic id: it keys the thread
            r = sub_rng("model", self.seed, messages[0].id, n, len(messages))
            last = messages[-1]
            p_tool = P_TOOL_AFTER_TOOL if last.type == "tool" else P_TOOL_AFTER_HUMAN
            mid = f"lc_run--{det_uuid(r)}"
            in_tok = sum(len(str(m.content)) for m in messages) // 4
            if r.random() < p_tool:
                calls = []
                for k in range(r.choice([1, 1, 1, 2, 2, 3])):
                    name = r.choice(["get_weather", "add", "search_docs", "search_docs", "translate"])
                    if name == "get_weather":
                        args = {"city": r.choice(CITIES)}
                    elif name == "add":
                        args = {"a": r.randint(-1000, 10**6), "b": r.randint(0, 999)}
                    elif name == "search_docs":
                        args = {"query": text(r, r.randint(10, 80)), "top_k": r.randint(1, 4)}
                    else:
                        args = {"text_": text(r, r.randint(10, 120)), "target": r.choice(["zh", "ja", "fr"])}
                    calls.append({"name": name, "args": args, "id": f"call_{det_uuid(r).replace('-', '')[:24]}",
                                  "type": "tool_call"})
                content = text(r, r.randint(0, 200)) if r.random() < 0.4 else ""
                out_tok = len(content) // 4 + 20 * len(calls)
                msg = AIMessage(content=content, tool_calls=calls, id=mid)
            else:
                content = text(r, lognormal_len(r, 680, 0.9, 5, 8000))
                out_tok = len(content) // 4
                msg = AIMessage(content=content, id=mid)
            msg.usage_metadata = {"input_tokens": in_tok, "output_tokens": out_tok,
                                  "total_tokens": in_tok + out_tok}
            msg.response_metadata = {"model_provider": "openai", "model_name": "gpt-4o-2024-08-06",
                                     "finish_reason": "tool_calls" if msg.tool_calls else "stop"}
            return ChatResult(generations=[ChatGeneration(message=msg)])

    return create_agent, BenchChatModel, tools, HumanMessage, SystemMessage


def thread_plan(seed: int, index: int, max_turns: int) -> dict:
    r = sub_rng("plan", seed, index)
    return {
        "thread_id": det_uuid(r),
        "turns": r.randint(1, max_turns),
        "system": r.random() < SYSTEM_RATE,
    }


def human_text(seed: int, index: int, turn: int) -> tuple[str, str]:
    r = sub_rng("human", seed, index, turn)
    return det_uuid(r), text(r, lognormal_len(r, 160, 0.9, 3, 3000))


def system_text(seed: int, index: int) -> str:
    r = sub_rng("system", seed, index)
    return "You are a helpful assistant for ACME Corp. 请用用户的语言回答。 " + text(r, r.randint(100, 1500))


def worker(args: tuple) -> dict:
    part, indices, seed, max_turns, preset = args
    if preset in REALISTIC:
        return worker_realistic(part, indices, seed, preset)
    from langgraph.checkpoint.sqlite import SqliteSaver

    create_agent, BenchChatModel, tools, HumanMessage, SystemMessage = build_stack()
    for suffix in ("", "-wal", "-shm"):
        Path(str(part) + suffix).unlink(missing_ok=True)
    conn = sqlite3.connect(part, check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    conn.execute("PRAGMA synchronous=OFF")  # scratch file: no fsync per checkpoint
    plans = [(i, thread_plan(seed, i, max_turns)) for i in indices]
    agent = create_agent(BenchChatModel(seed=seed), tools=tools, checkpointer=saver)
    t0 = time.time()
    for turn in range(max_turns):  # round-robin: rows of different threads interleave
        for i, plan in plans:
            if turn >= plan["turns"]:
                continue
            hid, htext = human_text(seed, i, turn)
            msgs = [HumanMessage(htext, id=hid)]
            if turn == 0 and plan["system"]:
                msgs.insert(0, SystemMessage(system_text(seed, i), id=f"system-{i}"))
            agent.invoke({"messages": msgs}, {"configurable": {"thread_id": plan["thread_id"]}})
    conn.commit()
    conn.close()
    return {"part": str(part), "threads": len(plans), "seconds": time.time() - t0}


def open_saver(part: Path):
    from langgraph.checkpoint.sqlite import SqliteSaver

    for suffix in ("", "-wal", "-shm"):
        Path(str(part) + suffix).unlink(missing_ok=True)
    conn = sqlite3.connect(part, check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    conn.execute("PRAGMA synchronous=OFF")  # scratch file: no fsync per checkpoint
    return conn, saver


def worker_realistic(part: Path, indices: list[int], seed: int, preset: str = "realistic") -> dict:
    """The realistic and mixed presets (see realistic.py): same round-robin, realistic model and tools."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import realistic as RL

    RL.PRESET = "mixed" if preset == "mixed" else "realistic"
    from langchain.agents import create_agent
    from langchain_core.messages import HumanMessage, SystemMessage

    conn, saver = open_saver(part)
    model = RL.build_model()(seed=seed)
    plans = [RL.thread_plan(seed, i) for i in indices]
    agent = create_agent(model, tools=RL.build_tools(), checkpointer=saver)
    n_msgs = {p["index"]: 0 for p in plans}
    t0 = time.time()
    turn = 0
    active = plans
    while active:  # round-robin: rows of different threads interleave
        nxt = []
        for plan in active:
            i = plan["index"]
            hid, htext = RL.human_message(seed, plan, turn)
            msgs = [HumanMessage(htext, id=hid)]
            if turn == 0:
                if plan["system"]:
                    msgs.insert(0, SystemMessage(RL.system_message(seed, plan), id=f"system-{i}"))
                model.plans[msgs[0].id] = plan
            cfg = {"configurable": {"thread_id": plan["thread_id"]}, "recursion_limit": 200}
            # long agent sessions checkpoint once per run (see realistic.py)
            out = agent.invoke({"messages": msgs}, cfg, durability="exit" if plan["long"] else "sync")
            n_msgs[i] = len(out["messages"])
            done = n_msgs[i] >= plan["target_messages"] if plan["long"] else turn + 1 >= plan["turns"]
            if not done:
                nxt.append(plan)
        active = nxt
        turn += 1
    conn.commit()
    conn.close()
    return {"part": str(part), "threads": len(plans), "seconds": time.time() - t0,
            "messages": sum(n_msgs.values()), "long_threads": {p["thread_id"]: n_msgs[p["index"]]
                                                                for p in plans if p["long"]}}


def build_long_thread(out: Path, seed: int, messages: int, chunk: int) -> dict:
    """One thread of about `messages` messages (--preset long-thread): a first turn through the
    agent, then the history in chunks with graph.update_state(as_node="model") (a checkpoint per
    chunk), then a last turn through the agent (durability="exit")."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import realistic as RL
    from langchain.agents import create_agent
    from langchain_core.messages import HumanMessage

    conn, saver = open_saver(out)
    model = RL.build_model()(seed=seed)
    agent = create_agent(model, tools=RL.build_tools(), checkpointer=saver)
    cfg = {"configurable": {"thread_id": "long"}, "recursion_limit": 200}
    plan = {"index": "long-first", "lang": "en", "emoji": 0.005, "long": True}
    model.plans["long-first"] = plan
    t0 = time.time()
    agent.invoke({"messages": [HumanMessage("Let's start the migration project.", id="long-first")]}, cfg)
    n = 0
    for chunk_msgs in RL.long_thread_messages(seed, messages, chunk):
        agent.update_state(cfg, {"messages": chunk_msgs}, as_node="model")
        n += len(chunk_msgs)
        print(f"generate: long thread {n} messages, {time.time() - t0:.0f} s", file=sys.stderr)
    res = agent.invoke({"messages": [HumanMessage("Summarize where we are.", id="long-last")]}, cfg,
                       durability="exit")
    conn.commit()
    conn.close()
    return {"part": str(out), "threads": 1, "seconds": time.time() - t0, "messages": len(res["messages"])}


def merge(out: Path, parts: list[Path]) -> None:
    """Copy the parts' rows into `out` and delete each part once copied. The copy runs with a
    rollback journal (pages appended to the file are not journaled), not through the WAL, which
    would hold a whole part (5 GB at 10x) beside the file; the result is switched to WAL mode."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    conn = sqlite3.connect(out, check_same_thread=False, isolation_level=None)
    SqliteSaver(conn).setup()  # the exact schema (and WAL mode) of the pinned saver
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.execute("PRAGMA synchronous=OFF")
    for part in parts:
        conn.execute("ATTACH DATABASE ? AS p", (str(part),))
        conn.execute("BEGIN")
        conn.execute("INSERT INTO checkpoints SELECT * FROM p.checkpoints")
        cols = ", ".join(r[1] for r in conn.execute("PRAGMA main.table_info(writes)"))
        conn.execute(f"INSERT INTO writes ({cols}) SELECT {cols} FROM p.writes")
        conn.execute("COMMIT")
        conn.execute("DETACH DATABASE p")
        for suffix in ("", "-wal", "-shm"):
            Path(str(part) + suffix).unlink(missing_ok=True)
    conn.execute("PRAGMA journal_mode=WAL")  # as SqliteSaver leaves a file
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--preset", choices=PRESETS, default="realistic",
                    help="realistic: production-like (realistic.py; ~1 GB, 340 threads at --scale 1); legacy: the "
                         f"first data set ({DEFAULT}, ~970 MiB); small: legacy {SMALL} (~47 MiB); "
                         f"realistic-small: {REALISTIC_SMALL} realistic threads; long-thread: one "
                         "realistic thread of --messages messages; mixed: realistic threads of mixed "
                         "Chinese/English prose (~37 %% of the text CJK), CSV of random numbers, code, emoji (realistic.py)")
    ap.add_argument("--small", action="store_true", help="same as --preset small")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="multiply the preset's thread count (realistic: 340 per 1x, ~1 GB; 10x: 3,400 threads, ~10 GB)")
    ap.add_argument("--threads", type=int, help="number of threads (overrides the preset and --scale)")
    ap.add_argument("--turns", type=int, help=f"legacy presets: max user turns per thread (default {DEFAULT['turns']})")
    ap.add_argument("--target-mb", type=float,
                    help="legacy presets: scale --threads so the file is about this many MiB (at the given --turns)")
    ap.add_argument("--messages", type=int, default=100_000, help="long-thread: messages in the thread")
    ap.add_argument("--chunk", type=int, default=20_000,
                    help="long-thread: messages per update_state (one checkpoint each)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    a = ap.parse_args()
    name = "small" if a.small else a.preset
    preset = {"legacy": DEFAULT, "default": DEFAULT, "small": SMALL, "realistic": REALISTIC_1X,
              "realistic-small": REALISTIC_SMALL, "mixed": MIXED_1X, "long-thread": {"threads": 1, "turns": 0}}[name]
    threads = a.threads or max(1, round(preset["threads"] * a.scale))
    turns = a.turns or preset["turns"]
    if a.target_mb and name in ("legacy", "default", "small"):
        # size grows with turns^2 per thread (every checkpoint holds the whole message list)
        mib_per_thread = 910 / 640 * ((turns + 1) * (2 * turns + 1)) / (21 * 41)
        threads = max(1, round(a.target_mb / mib_per_thread))
    out = a.out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        Path(str(out) + suffix).unlink(missing_ok=True)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    t0 = time.time()
    if name == "long-thread":
        jobs = 1
        results = [build_long_thread(out, a.seed, a.messages, a.chunk)]
        t_gen = time.time() - t0
        conn = sqlite3.connect(out)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
    else:
        jobs = max(1, min(a.jobs, threads))
        parts = [out.with_name(f"{out.name}.part{k}") for k in range(jobs)]
        if name in REALISTIC:
            # the long agent sessions are the costly ones: spread them over the jobs
            sys.path.insert(0, str(Path(__file__).resolve().parent))
            import realistic as RL
            RL.PRESET = "mixed" if name == "mixed" else "realistic"
            long_ = [i for i in range(threads) if RL.is_long(i)]
            rest = [i for i in range(threads) if not RL.is_long(i)]
            split = [rest[k::jobs] + long_[(k + jobs - 1) % jobs::jobs] for k in range(jobs)]
        else:
            split = [list(range(k, threads, jobs)) for k in range(jobs)]
        work = [(parts[k], split[k], a.seed, turns, name) for k in range(jobs)]
        if jobs == 1:
            results = [worker(work[0])]
        else:
            with mp.get_context("spawn").Pool(jobs) as pool:
                results = pool.map(worker, work)
        t_gen = time.time() - t0
        merge(out, parts)
    t_all = time.time() - t0
    conn = sqlite3.connect(out)
    n_cp = conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0]
    n_th = conn.execute("SELECT COUNT(DISTINCT thread_id) FROM checkpoints").fetchone()[0]
    n_wr = conn.execute("SELECT COUNT(*) FROM writes").fetchone()[0]
    conn.close()
    size = out.stat().st_size
    summary = {
        "out": str(out), "preset": name, "scale": a.scale, "bytes": size, "mib": round(size / 2**20, 1),
        "threads": n_th, "checkpoints": n_cp, "writes": n_wr, "seed": a.seed, "max_turns": turns,
        "jobs": jobs, "generate_seconds": round(t_gen, 1), "merge_seconds": round(t_all - t_gen, 1),
        "total_seconds": round(t_all, 1),
        "worker_seconds": [round(r["seconds"], 1) for r in results],
        "mib_per_worker_second": round(size / 2**20 / max(1e-9, sum(r["seconds"] for r in results)), 2),
    }
    if name in REALISTIC or name == "long-thread":
        import realistic as RL
        summary["data_version"] = RL.DATA_VERSION
        summary["messages_in_latest_states"] = sum(r["messages"] for r in results)
        summary["long_threads"] = {k: v for r in results for k, v in r.get("long_threads", {}).items()}
    Path(str(out) + ".json").write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps(summary), file=sys.stderr)


if __name__ == "__main__":
    main()
