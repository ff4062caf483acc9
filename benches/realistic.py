"""The realistic preset of benches/generate.py: production-like threads through the real stack.

Same machinery as the legacy preset (`langchain.agents.create_agent` + `SqliteSaver`, a fake chat
model answering from a per-thread seeded RNG), with content from `textgen.py`:

  * per thread: a language (English 66 %, Chinese 12 %, English/Chinese code-switching 8 %,
    Japanese 6 %, Korean 3 %, English with many emoji 5 %), 5-40 user turns (skewed to short:
    median 9, mean ~14), a SystemMessage in the state for 35 % (markdown instructions, 0.8-6 kB);
  * user messages: log-normal lengths (around ~60 chars); 2 % are pastes of 0.8-50 kB
    (documents, code, logs, JSON, CSV, stack traces, SQL output, Chinese documents), ~5 % of
    those above 20 kB;
  * the model calls tools after a user message with p=0.4 (1-4 parallel calls), chains further
    rounds with p=0.35; answers are markdown (headings, lists, code blocks, tables, links;
    log-normal around ~220 chars, 0.7 % long drafts of 10-40 kB); usage_metadata, response_metadata and
    additional_kwargs shaped like langchain-openai's;
  * ten tools with JSON arguments (nested objects and lists): search_docs, run_sql, read_file,
    http_request, web_fetch, get_weather, calculator, translate, create_ticket, python_exec;
    their outputs are JSON documents, psql tables, source files, markdown pages, stdout or
    tracebacks, sized by their arguments (LIMIT, line ranges, max_chars), long-tailed (capped
    at 50 kB, but at 1x the largest is ~20 kB: the 20-50 kB messages are pastes and drafts);
  * thread index i with i % 150 == 17 (3 threads at 1x, 23 at 10x) is a long-running agent
    session: 1,000-4,000 messages, 8-40 tool rounds per turn with shorter outputs, invoked with
    durability="exit" (one checkpoint per turn, as LangGraph writes when asked to checkpoint
    only at the end of a run: a per-step checkpoint of thousands of messages would make each
    such thread several GB).

The mixed preset (`--preset mixed`, issue #30) is the same machinery with content the realistic one
rarely has: every thread's prose is Chinese/English code-switching (`textgen.zh_en`, about 40 % CJK
characters over all the data, tool outputs included), emoji in every thread, code blocks in 12 %
of the user messages and in fewer answers, tools that answer with CSV full of random numbers
(`textgen.csv_numbers`) more often, and no long agent sessions (little repetition between
threads). generate.py sets `PRESET` in each worker.

`long_thread_messages()` builds the same kind of messages without the agent loop, for the
single-thread file (`--preset long-thread`: 100,000 messages written with `update_state`).
"""

from __future__ import annotations

import json
import random
from typing import Any, Optional

import textgen as T

# Bump when a change alters the generated data (contents, sizes, counts): benches/run.sh
# regenerates cached files whose summary records another version.
DATA_VERSION = 1
# "realistic" or "mixed" (set by generate.py in each worker before the first thread).
PRESET = "realistic"
MIXED_TOOL_NAMES = ["python_exec", "python_exec", "python_exec", "run_sql", "run_sql", "search_docs",
                    "read_file", "http_request", "web_fetch", "get_weather", "calculator", "translate"]
THREADS_1X = 340  # generate.py REALISTIC_1X
LONG_EVERY, LONG_AT = 150, 17
LANGS = [("en", 66), ("zh", 12), ("mixed", 8), ("ja", 6), ("ko", 3), ("en-emoji", 5)]
SYSTEM_RATE = 0.35
PASTE_RATE = 0.02
TURNS_EXP = 3.0  # turns = 5 + 36 * u**3: median 9, mean 14
P_TOOLS = 0.4  # the model calls tools after a user message
P_CHAIN = 0.35  # ... and again after tool results
ANSWER_MEDIAN = 220
TOOL_NAMES = ["search_docs", "search_docs", "run_sql", "read_file", "http_request", "web_fetch",
              "get_weather", "calculator", "translate", "create_ticket", "python_exec"]
CITIES = ["Paris", "Berlin", "Tokyo", "北京", "上海", "São Paulo", "Zürich", "Kraków", "New York",
          "Lagos", "Mumbai", "東京", "Reykjavík", "Cairo", "Sydney", "서울", "Ho Chi Minh City"]


def sub_rng(*parts: Any) -> random.Random:
    import hashlib

    h = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return random.Random(int.from_bytes(h[:8], "big"))


def det_uuid(r: random.Random) -> str:
    import uuid

    return str(uuid.UUID(int=r.getrandbits(128), version=4))


# ------------------------------------------------------------------------------------- plans


def is_long(index: int) -> bool:
    if PRESET == "mixed":
        return False
    return index % LONG_EVERY == LONG_AT


def thread_plan(seed: int, index: int) -> dict:
    r = sub_rng("rplan", seed, index)
    lang = r.choices([l for l, _ in LANGS], [w for _, w in LANGS])[0]
    plan = {
        "index": index,
        "thread_id": det_uuid(r),
        "lang": lang,
        "emoji": 0.08 if lang == "en-emoji" else r.choice([0.0, 0.0, 0.005, 0.01, 0.02]),
        "turns": 5 + int(36 * r.random() ** TURNS_EXP),  # 5..40
        "system": r.random() < SYSTEM_RATE,
        "long": is_long(index),
    }
    if PRESET == "mixed":
        plan["lang"] = "zh-en"
        plan["emoji"] = r.choice([0.01, 0.03, 0.06])
    if plan["long"]:
        plan["target_messages"] = int(1000 * 4 ** r.random())  # log-uniform 1,000..4,000
        plan["turns"] = 10_000  # played until target_messages
        plan["system"] = True
    return plan


def _lang(plan: dict) -> str:
    return "en" if plan["lang"] == "en-emoji" else plan["lang"]


def _sprinkle(r: random.Random, s: str, rate: float) -> str:
    if rate <= 0:
        return s
    parts = s.split(" ")
    for k in range(len(parts)):
        if r.random() < rate:
            parts[k] += " " + T.emoji(r)
    return " ".join(parts)


INSTRUCTIONS = ["Can you review this?", "Summarize this for me:", "What's wrong here?",
                "Please translate the key points:", "Here is the output, any idea?",
                "Turn this into a table:", "这个是什么意思？", "以下の内容を確認してください。", "이거 확인해 주세요:",
                "Find the bug:", "Explain this in simple terms.", "Rewrite this more concisely:"]


def human_message(seed: int, plan: dict, turn: int) -> tuple[str, str]:
    r = sub_rng("rhuman", seed, plan["index"], turn)
    mid = det_uuid(r)
    lang = _lang(plan)
    paste_rate = PASTE_RATE / 4 if plan["long"] else PASTE_RATE
    if r.random() < paste_rate:
        size = T.lognormal(r, 4000, 1.0, 800, 50_000)
        _, body = T.paste(r, size, lang)
        head = r.choice(INSTRUCTIONS)
        return mid, (f"{head}\n\n{body}" if r.random() < 0.8 else f"{body}\n\n{head}")
    n = T.lognormal(r, 50 if plan["long"] else 60, 1.0, 2, 3000)
    if n < 12:
        return mid, r.choice(["ok", "thanks!", "yes", "no", "继续", "go on", "はい", "👍", "why?", "谢谢",
                              "sure", "do it", "more detail please", "?"])
    text = T.lang_text(r, lang, n, style=0.15)
    if r.random() < (0.12 if PRESET == "mixed" else 0.08):
        text += f"\n\n```{T.code(r, T.lognormal(r, 300, 0.8, 40, 3000))[1]}\n```"
    return mid, _sprinkle(r, text, plan["emoji"])


def system_message(seed: int, plan: dict) -> str:
    r = sub_rng("rsystem", seed, plan["index"])
    head = r.choice(["You are a helpful assistant for ACME Corp.", "You are Atlas, an internal support agent.",
                     "You are a senior software engineer helping with code review.",
                     "你是一个专业的客服助手。请用用户的语言回答。", "You are a data analyst. Use SQL tools when needed."])
    lang = "zh-en" if PRESET == "mixed" else "en"
    return head + "\n\n" + T.markdown(r, T.lognormal(r, 2000, 0.6, 800, 6000), lang, code_rate=0.05)


# ------------------------------------------------------------------------------------- tools


def _out_rng(tool: str, args: dict) -> random.Random:
    return sub_rng("tool", tool, json.dumps(args, sort_keys=True, ensure_ascii=False, default=str))


def build_tools():
    from langchain_core.tools import tool

    @tool
    def search_docs(query: str, top_k: int = 5, filters: Optional[dict] = None) -> str:
        """Search the knowledge base; returns the best passages as JSON."""
        r = _out_rng("search_docs", {"q": query, "k": top_k, "f": filters})
        snip = T.lognormal(r, 120, 0.5, 40, 1500)
        hits = [{"id": T.uuid_str(r), "title": T.sentence(r)[:-1][:80], "url": T.url(r),
                 "score": round(r.uniform(0.3, 0.99), 4),
                 "snippet": T.lang_text(r, "zh-en" if PRESET == "mixed" else r.choice(["en", "en", "en", "zh"]),
                                        snip, 0.3),
                 "updated_at": T.timestamp(r)} for _ in range(top_k)]
        return json.dumps({"query": query, "results": hits}, ensure_ascii=False, indent=r.choice([None, 2]))

    @tool
    def run_sql(query: str, database: str = "analytics", timeout_s: int = 30) -> str:
        """Run a read-only SQL query; returns psql-style output."""
        r = _out_rng("run_sql", {"q": query, "d": database, "t": timeout_s})
        if r.random() < 0.06:
            return f'ERROR:  column "{T.ident(r)}" does not exist\nLINE 1: {query[:60]}\n        ^'
        limit = 10
        for tok in query.split():
            if tok.rstrip(";").isdigit():
                limit = int(tok.rstrip(";"))
        if PRESET == "mixed" and r.random() < 0.5:
            return T.csv_numbers(r, min(50_000, limit * r.randint(40, 120)))
        return T.sql_table(r, min(50_000, limit * r.randint(40, 120)))

    @tool
    def read_file(path: str, start_line: int = 1, end_line: int = 200) -> str:
        """Read lines of a file from the repository."""
        r = _out_rng("read_file", {"p": path, "s": start_line, "e": end_line})
        n = max(1, end_line - start_line) * r.randint(25, 45)
        ext = path.rsplit(".", 1)[-1]
        lang = {"py": "python", "ts": "typescript", "tsx": "typescript", "rs": "rust", "go": "go",
                "sql": "sql", "yaml": "yaml", "json": "json"}.get(ext)
        if lang is None:
            return T.markdown(r, min(n, 50_000), "zh-en" if PRESET == "mixed" else "en", code_rate=0.2)
        return T.code(r, min(n, 50_000), lang)[1]

    @tool
    def http_request(method: str, url: str, headers: Optional[dict] = None, body: Optional[dict] = None,
                     params: Optional[dict] = None) -> str:
        """Call an HTTP API; returns status, headers and the JSON body."""
        r = _out_rng("http_request", {"m": method, "u": url, "h": headers, "b": body, "p": params})
        status = r.choices([200, 201, 204, 400, 404, 429, 500], [70, 8, 4, 6, 6, 3, 3])[0]
        limit = (params or {}).get("limit", 20)
        payload = T.json_doc(r, min(50_000, int(limit) * r.randint(60, 200)), indent=r.choice([None, 2])) \
            if status < 300 else json.dumps({"error": {"code": status, "message": T.sentence(r)}})
        return (f"HTTP {status}\ncontent-type: application/json\nx-request-id: {T.hexid(r, 24)}\n"
                f"date: {T.timestamp(r)}\n\n{payload}")

    @tool
    def web_fetch(url: str, max_chars: int = 8000) -> str:
        """Fetch a web page and return it as markdown."""
        r = _out_rng("web_fetch", {"u": url, "m": max_chars})
        langs = ["zh-en"] if PRESET == "mixed" else ["en", "en", "en", "zh", "ja"]
        return f"# {T.sentence(r)[:-1]}\n\n" + T.markdown(r, min(max_chars, 50_000), r.choice(langs))

    @tool
    def get_weather(city: str, units: str = "metric") -> str:
        """Current weather and a short forecast for a city."""
        r = _out_rng("get_weather", {"c": city, "u": units})
        days = [{"date": f"2025-06-{d:02d}", "min": r.randint(-5, 20), "max": r.randint(15, 38),
                 "summary": r.choice(["sunny ☀️", "rain 🌧️", "cloudy", "多云", "晴れ", "thunderstorms ⛈️"])}
                for d in range(1, r.randint(2, 8))]
        return json.dumps({"city": city, "units": units, "now": {"temp": r.randint(-10, 35),
                           "humidity": r.randint(20, 95), "wind_kph": r.randint(0, 60)}, "forecast": days},
                          ensure_ascii=False)

    @tool
    def calculator(expression: str) -> str:
        """Evaluate an arithmetic expression."""
        r = _out_rng("calculator", {"e": expression})
        return str(round(r.uniform(-1e6, 1e6), r.randint(0, 6)))

    @tool
    def translate(text: str, target_lang: str = "zh") -> str:
        """Translate a text into the target language."""
        r = _out_rng("translate", {"t": text, "l": target_lang})
        n = max(4, len(text) // (3 if target_lang in ("zh", "ja", "ko") else 1))
        return T.lang_text(r, target_lang if target_lang in ("zh", "ja", "ko") else "en", n)

    @tool
    def create_ticket(title: str, description: str, labels: list[str], priority: str = "P2",
                      assignee: Optional[str] = None) -> str:
        """Create a ticket in the issue tracker."""
        r = _out_rng("create_ticket", {"t": title, "d": description, "l": labels, "p": priority, "a": assignee})
        return json.dumps({"id": f"{T.name(r).upper()[:4]}-{r.randint(100, 99999)}", "url": T.url(r),
                           "status": "open", "created_at": T.timestamp(r), "labels": labels,
                           "priority": priority, "assignee": assignee})

    @tool
    def python_exec(code: str, timeout_s: int = 10) -> str:
        """Run Python code in a sandbox; returns stdout/stderr."""
        r = _out_rng("python_exec", {"c": code, "t": timeout_s})
        if r.random() < 0.12:
            return T.stack_trace(r, T.lognormal(r, 900, 0.6, 200, 6000))
        k = r.random()
        n = T.lognormal(r, 150, 1.2, 5, 30_000)
        if PRESET == "mixed" and k < 0.6:
            return T.csv_numbers(r, n)
        if k < 0.4:
            return T.csv_text(r, n)
        if k < 0.7:
            return T.log_lines(r, n)
        return T.json_doc(r, n)

    return [search_docs, run_sql, read_file, http_request, web_fetch, get_weather, calculator,
            translate, create_ticket, python_exec]


# ------------------------------------------------------------------------------------- model


def tool_args(r: random.Random, name: str, long: bool) -> dict:
    """JSON arguments for a tool call; sizes of the outputs follow from them."""
    small = 0.25 if long else 1.0
    if name == "search_docs":
        a: dict = {"query": " ".join(T.picks(r, T.WORDS, T.WORDS_CUM, r.randint(2, 9))),
                   "top_k": r.randint(1, 3 if long else 5)}
        if r.random() < 0.4:
            a["filters"] = {"source": r.choice(["confluence", "gdrive", "notion", "github"]),
                            "updated_after": T.timestamp(r)[:10],
                            "tags": [T.word(r) for _ in range(r.randint(0, 3))]}
        return a
    if name == "run_sql":
        q = T.code_sql(r, 100).split("\n\n")[-1]
        limit = max(1, int(T.lognormal(r, 4, 1.2, 1, 500) * small))
        return {"query": q.rsplit("LIMIT", 1)[0] + f"LIMIT {limit};", "database": r.choice(["analytics", "prod_replica", "billing"])}
    if name == "read_file":
        s = r.randint(1, 400)
        return {"path": T.path(r), "start_line": s, "end_line": s + max(3, int(T.lognormal(r, 15, 1.1, 3, 1500) * small))}
    if name == "http_request":
        m = r.choice(["GET", "GET", "GET", "POST", "PATCH", "DELETE"])
        a = {"method": m, "url": T.url(r), "headers": {"Accept": "application/json",
             "Authorization": f"Bearer <redacted:{T.hexid(r, 6)}>"},
             "params": {"limit": max(1, int(T.lognormal(r, 3, 1.2, 1, 300) * small)), "page": r.randint(1, 5)}}
        if m in ("POST", "PATCH"):
            a["body"] = T.json_record(r, [T.ident(r, "camel") for _ in range(r.randint(2, 6))])
        return a
    if name == "web_fetch":
        return {"url": T.url(r), "max_chars": int(T.lognormal(r, 700, 1.1, 200, 50_000) * small)}
    if name == "get_weather":
        return {"city": r.choice(CITIES), "units": r.choice(["metric", "metric", "imperial"])}
    if name == "calculator":
        return {"expression": f"({r.randint(1, 9999)} * {r.uniform(0, 100):.2f}) / {r.randint(1, 99)} + {r.randint(0, 999)}"}
    if name == "translate":
        return {"text": T.sentence(r) if r.random() < 0.8 else T.paragraph(r, r.randint(100, 600)),
                "target_lang": r.choice(["zh", "ja", "ko", "fr", "de"])}
    if name == "create_ticket":
        return {"title": T.sentence(r)[:70], "description": T.markdown(r, T.lognormal(r, 250, 0.7, 50, 3000)),
                "labels": [T.word(r) for _ in range(r.randint(1, 4))], "priority": r.choice(["P0", "P1", "P2", "P3"]),
                "assignee": T.person(r) if r.random() < 0.6 else None}
    lg, body = "python", T.code_python(r, T.lognormal(r, 200, 0.8, 40, 3000))
    return {"code": body, "timeout_s": r.choice([10, 30, 60])}


def build_model():
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    class RealisticChatModel(BaseChatModel):
        """Deterministic fake chat model; the reply depends on (seed, thread, call number)."""

        seed: int = 0
        plans: dict = {}  # first message id of a thread -> its plan

        @property
        def _llm_type(self) -> str:
            return "memctl-bench-realistic-fake"

        def bind_tools(self, tools: Any, **kwargs: Any) -> "RealisticChatModel":  # type: ignore[override]
            return self

        def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
            plan = self.plans.get(messages[0].id) or {"index": messages[0].id, "lang": "en", "emoji": 0,
                                                      "long": False}
            n_ai = n_human = rounds = 0
            for m in messages:
                if m.type == "ai":
                    n_ai += 1
                    rounds += 1
                elif m.type == "human":
                    n_human += 1
                    rounds = 0
            r = sub_rng("rmodel", self.seed, plan["index"], n_ai, len(messages))
            turn_r = sub_rng("rrounds", self.seed, plan["index"], n_human)
            if plan["long"]:
                want_rounds = turn_r.randint(8, 40)
            else:
                want_rounds = 0
                if turn_r.random() < P_TOOLS:
                    want_rounds = 1
                    while want_rounds < 8 and turn_r.random() < P_CHAIN:
                        want_rounds += 1
            mid = f"lc_run--{det_uuid(r)}"
            lang = _lang(plan)
            if rounds < want_rounds:
                calls = []
                for _ in range(r.choices([1, 2, 3, 4], [60, 25, 10, 5])[0]):
                    name = r.choice(MIXED_TOOL_NAMES if PRESET == "mixed" else TOOL_NAMES)
                    calls.append({"name": name, "args": tool_args(r, name, plan["long"]),
                                  "id": f"call_{det_uuid(r).replace('-', '')[:24]}", "type": "tool_call"})
                content = T.lang_text(r, lang, r.randint(20, 200)) if r.random() < 0.3 else ""
                msg = AIMessage(content=content, tool_calls=calls, id=mid)
            else:
                if not plan["long"] and r.random() < 0.007:
                    n = T.lognormal(r, 18_000, 0.4, 10_000, 40_000)
                else:
                    n = T.lognormal(r, 250 if plan["long"] else ANSWER_MEDIAN, 0.9, 20, 12_000)
                md = T.markdown(r, n, lang, code_rate=0.1) if PRESET == "mixed" else T.markdown(r, n, lang)
                content = _sprinkle(r, md, plan["emoji"] / 2)
                msg = AIMessage(content=content, id=mid)
            in_tok = sum(len(m.content) if isinstance(m.content, str) else 100 for m in messages) // 4
            out_tok = len(msg.content) // 4 + 25 * len(msg.tool_calls)
            cached = (in_tok // 128) * 128 if r.random() < 0.6 else 0
            msg.additional_kwargs = {"refusal": None}
            msg.usage_metadata = {"input_tokens": in_tok, "output_tokens": out_tok, "total_tokens": in_tok + out_tok,
                                  "input_token_details": {"audio": 0, "cache_read": cached},
                                  "output_token_details": {"audio": 0, "reasoning": 0}}
            msg.response_metadata = {
                "token_usage": {"completion_tokens": out_tok, "prompt_tokens": in_tok,
                                "total_tokens": in_tok + out_tok,
                                "completion_tokens_details": {"accepted_prediction_tokens": 0, "audio_tokens": 0,
                                                              "reasoning_tokens": 0, "rejected_prediction_tokens": 0},
                                "prompt_tokens_details": {"audio_tokens": 0, "cached_tokens": cached}},
                "model_provider": "openai", "model_name": "gpt-4o-2024-08-06",
                "system_fingerprint": f"fp_{T.hexid(r, 10)}", "id": f"chatcmpl-{T.hexid(r, 29)}",
                "service_tier": "default",
                "finish_reason": "tool_calls" if msg.tool_calls else "stop", "logprobs": None}
            return ChatResult(generations=[ChatGeneration(message=msg)])

    return RealisticChatModel


# ------------------------------------------------------------------------------------- one long thread


def long_thread_messages(seed: int, count: int, chunk: int):
    """Yield lists of about `chunk` messages, `count` in all: the turns of a long agent session
    (user message, tool rounds with their ToolMessages, answer), made by the same functions as the
    agent's, without running the agent (100,000 messages through the loop would be quadratic)."""
    from langchain_core.messages import HumanMessage, ToolMessage

    Model = build_model()
    tools = {t.name: t for t in build_tools()}
    plan = {"index": "long", "lang": "en", "emoji": 0.005, "long": True, "system": False}
    model = Model(seed=seed)
    turn = 0
    buf: list = []
    total = 0
    while total < count:
        # the model sees [a per-turn head, this turn's messages]: enough for its decisions (it
        # counts AI messages and tool rounds), and linear instead of quadratic in the thread
        head = HumanMessage("start", id=f"long-head-{turn}")
        model.plans = {head.id: {**plan, "index": f"long:{turn}"}}
        hid, text = human_message(seed, plan, turn)
        turn_msgs = [HumanMessage(text, id=hid)]
        while True:
            ai = model.invoke([head, *turn_msgs])
            turn_msgs.append(ai)
            if not ai.tool_calls:
                break
            for c in ai.tool_calls:
                out = tools[c["name"]].invoke(c["args"])
                r = sub_rng("ltool", seed, c["id"])
                turn_msgs.append(ToolMessage(out, tool_call_id=c["id"], name=c["name"], id=det_uuid(r)))
        buf += turn_msgs
        total += len(turn_msgs)
        turn += 1
        if len(buf) >= chunk or total >= count:
            yield buf
            buf = []
