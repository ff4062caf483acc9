"""Deterministic production-like text for the realistic benchmark preset (no network, no corpora).

Everything is drawn from a caller's `random.Random`, so the same seed gives the same text on any
machine (CPython's Mersenne Twister, `random`, `choices`, `lognormvariate` are stable across 3.x).

Vocabulary: ~59k words in three Zipf-distributed parts: ~140 English function words (45 % of the
words drawn), ~640 common English content words (tech, business, everyday; 40 %), and ~58k rarer
words built from real English morphemes (15 %) (prefix + root + suffix: "transductions", "overmarkable"...), so
tokenizers split them into common sub-word pieces as they do rare real words. A seeded lexicon,
not a small word list: a 20 kB answer uses a few thousand distinct words.

Blocks: prose paragraphs, markdown (headings, lists, bold/italic, inline code, links, quotes,
tables), code in Python / TypeScript / Rust / Go / SQL / bash / YAML, JSON documents, SQL result
tables, CSV, log lines, stack traces; Chinese (Zipf over ~600 common hanzi, then all of
U+4E00-U+9FFF), Japanese (kana + kanji, katakana loanwords), Korean (Hangul syllables) and emoji
(several blocks, skin tones, ZWJ sequences, flags).
"""

from __future__ import annotations

import bisect
import itertools
import json
import math
import random
import string
from typing import Callable

# The lexicon is part of the data set's definition: a fixed seed, independent of --seed.
LEXICON_SEED = 0x5EED_19

FUNCTION_WORDS = """
the of and to a in is that for it as with was on be by this are or at from not but have an which
they you we can has more their will his one all there been if would about so what when were also
into some no its other than only do may them these could out up like new just how should our your
who such most any my over then because use used after time two make first very way well many
through where each those between however both while without being under need same see here does
did had before still since even why now off must own much three might again few per via i me us he
she her him let get got yes okay sure please thanks hello hi
""".split()

COMMON_WORDS = """
data user model system file server error request response value table query result message
thread state memory agent token tool call answer question context window summary latency database
index cache vector embedding version feature release deploy build test code function class method
module package library service client api endpoint config setting option default parameter
argument type string number list array object field column row key record item event log metric
issue bug fix change update patch commit branch merge review team project plan goal task week
month year day today tomorrow meeting report budget cost price customer order invoice payment
account password login session security access permission role admin policy document page section
chapter note comment draft email weather city temperature forecast rain travel flight hotel trip
schedule time zone date hour minute second start end step stage phase process workflow pipeline
job queue worker thread pool connection timeout retry limit quota rate size length count total
average median percent ratio growth trend chart graph node edge path route network host port
address domain url link image video audio text content format schema migration backup restore
snapshot checkpoint storage disk volume bucket region cluster instance container image pod
deployment rollout rollback incident alert monitor dashboard trace span profile benchmark
performance memory cpu load throughput capacity scale shard replica primary leader follower
consensus lock transaction commit isolation level read write delete insert select join filter
sort group aggregate window partition label tag name title description status priority owner
assignee reviewer approver contract renewal vendor partner product launch market sales revenue
margin forecast target quarter strategy roadmap milestone deadline risk dependency blocker
decision proposal feedback survey research analysis experiment hypothesis baseline variant
control sample dataset training inference prompt completion reasoning evaluation score accuracy
precision recall loss gradient layer weight bias batch epoch learning rate optimizer checkpoint
support ticket case escalation refund shipping delivery warehouse inventory stock supplier
regulation compliance audit privacy consent retention encryption certificate secret credential
environment variable production staging development local remote cloud cost saving discount plan
upgrade downgrade subscription trial license seat usage billing cycle statement balance transfer
house family friend child school teacher student class homework exam grade book story movie song
music game sport team player match coffee lunch dinner recipe ingredient kitchen garden doctor
health appointment medicine exercise sleep morning evening night weekend holiday birthday gift
work office home car train bus bike road street map store shop market bank money phone laptop
screen keyboard battery charger cable printer camera photo picture letter package box door room
good great fine bad better best worse small large big little long short high low fast slow early
late easy hard simple complex clear open closed full empty ready available missing broken stable
important possible different similar current previous next last final main common public private
free busy quick safe secure valid invalid correct wrong true false real actual total partial
manual automatic internal external global local recent old young happy sorry glad nice strange
run running ran check checking checked look looking looked find found found send sent receive
received create created remove removed add added keep kept move moved try tried help helped
show showed explain explained understand understood think thought know knew want wanted give gave
take took tell told ask asked work worked call called seem seemed feel felt leave left put mean
meant become became begin began write wrote read provide provided include included continue set
learn learned change changed lead led understand watch follow followed stop stopped speak spoke
allow allowed appear appeared offer offered expect expected suggest suggested consider considered
return returned fail failed pass passed load loaded save saved parse parsed render rendered
compute computed store stored fetch fetched handle handled support supported configure configured
install installed upgrade upgraded migrate migrated validate validated reproduce reproduced
investigate investigated confirm confirmed schedule scheduled cancel cancelled approve approved
actually basically probably maybe perhaps usually often sometimes never always already almost
quite rather really simply exactly especially instead otherwise therefore although unless whether
""".split()

PREFIXES = ["", "", "", "", "", "re", "un", "pre", "de", "dis", "over", "under", "inter", "trans",
            "sub", "super", "micro", "multi", "non", "co", "auto", "counter", "out", "mis", "semi",
            "anti", "hyper", "post", "meta", "geo", "bio", "proto", "poly", "mono", "tele", "neo"]
ROOTS = """
form struct port duct spect scrib tract mit ject vert pos press cept ceed fer pend sist tend voc
dict graph log phon scope therm meter cycle mark stream light stone field ward wood bridge land
water work craft path sign point line core frame bound hold stand rest turn set plan cast grade
flex flect fract rupt junct lect leg loc mob mov nat nov ped pel plic pon quer quir sect sent
serv sol solv son tain tang tect temp tex tort tribe vac val ven vid vis viv volv cap cred cur
fac fig flu gen gress hab jud lab later liter magn man medi mem min mor mort mut ord pac pars
part pass pat pend plen port prim prob quest rect reg rog sacr sci scend sed sen sim soci spir
stat stru sum tact tempor terr tract trib trud umbr urb vag vers via vinc voc volunt
anch bask blend brisk clamp craw drift flint glow grind harb knot lumb marsh nest pluck quill
rift shard slate spark spire thatch trell vault wharf wisp yarn zest quartz ember fern gale
harbor loft mesh orchid pebble quarry ridge saddle timber tundra vessel willow
""".split()
SUFFIXES = ["", "", "", "", "s", "s", "ed", "ing", "er", "ers", "tion", "tions", "ment", "ments",
            "able", "ness", "ity", "ive", "al", "ally", "ly", "ous", "ize", "ized", "ism", "ist",
            "ful", "less", "ship", "ence", "ant", "ory", "ure", "ic", "ics", "ware", "let", "hood"]

NAME_SYLLABLES = ("an ar be bel bo ca car da del di el en fa fer ga gor ha hel i ja jo ka kel "
                  "la lin ma mar me mi na nor o pa per ra ri ro sa sel ta tor u va vin wa ya za").split()
TLDS = ["com", "io", "dev", "org", "net", "ai", "co.uk", "de", "jp", "cn"]


def _zipf_cum(n: int, s: float, q: float = 2.7) -> list[float]:
    cum, t = [], 0.0
    for r in range(n):
        t += 1.0 / (r + 1 + q) ** s
        cum.append(t)
    return cum


def _build_lexicon() -> tuple[list[str], list[float]]:
    r = random.Random(LEXICON_SEED)
    seen = set(FUNCTION_WORDS)
    common = [w for w in dict.fromkeys(COMMON_WORDS) if w not in seen]
    seen |= set(common)
    r.shuffle(common)  # no alphabetical bias at the head
    tail: list[str] = []
    combos = list(itertools.product(range(len(PREFIXES)), range(len(ROOTS)), range(len(SUFFIXES))))
    r.shuffle(combos)
    for p, ro, su in combos:
        w = PREFIXES[p] + ROOTS[ro] + SUFFIXES[su]
        if len(w) < 3 or w in seen:
            continue
        seen.add(w)
        tail.append(w)
        if len(tail) >= 58_000:
            break
    func = list(dict.fromkeys(FUNCTION_WORDS))
    # explicit shares (about those of English text): function words 45 %, common words 40 %,
    # the long tail 15 %; Zipf inside each part
    cum: list[float] = []
    for part, share in ((func, 0.45), (common, 0.40), (tail, 0.15)):
        c = _zipf_cum(len(part), 1.0)
        base = cum[-1] if cum else 0.0
        cum += [base + share * x / c[-1] for x in c]
    return func + common + tail, cum


WORDS, WORDS_CUM = _build_lexicon()
CONTENT_START = len(dict.fromkeys(FUNCTION_WORDS))
CONTENT = WORDS[CONTENT_START:]
CONTENT_CUM = _zipf_cum(len(CONTENT), 1.0)

# ~600 frequent hanzi (roughly by frequency), then the rest of the CJK Unified Ideographs block.
HANZI_COMMON = (
    "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可"
    "她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已"
    "老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力"
    "机给等几很业最间新什打便位因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军"
    "产入先山五太水万市眼体别处总才场师书比住员九笑性通目华报立马命张活难神数件安表原车白应路期叫死常"
    "提感金何更反合放做系计或司利受光王果亲界及今京务制解各任至清物台象记边共风战干接它许八特觉望直服"
    "毛林题建南度统色字请交爱让认算论百吃义科怎元社术结六功指思非流每青管夫连远资队跟带花快条院变联言"
    "权往展该领传近留红治决周保达办运武半候七必城父强步完革深区即求品士转量空甚众技轻程告江语英基派满"
    "式李息写呢识极令黄德收脸钱党倒未持取设始版双历越史商千片容研像找友孩站广改议形委早房音火际则首单"
    "据导影失拿网香似斯专石若兵弟谁校读志飞观争究包组造落视济喜离虽坐集编宝谈府拉黑且随格尽剑讲布杀微"
    "怕母调局根曾准团段终乐切级克精哪官示冷域假拍奇状存价值型器库件试验户码库存储查询模型数据服务"
)
HANZI = list(dict.fromkeys(HANZI_COMMON))
_rest = [chr(c) for c in range(0x4E00, 0xA000) if chr(c) not in set(HANZI)]
random.Random(LEXICON_SEED + 1).shuffle(_rest)
HANZI += _rest
HANZI_CUM = _zipf_cum(len(HANZI), 1.3, q=8)  # the ~520 common ones: ~78 %, top 3,500: ~92 %
ZH_PUNCT = ["，", "，", "，", "。", "。", "、", "：", "；", "！", "？", "（", "）", "“", "”"]
ZH_TERMS = ["API", "Python", "SQL", "LangGraph", "GPU", "JSON", "Docker", "Kubernetes", "token",
            "checkpoint", "v2.3", "2024年", "OK", "bug", "PR", "CI", "Redis", "Postgres"]

HIRAGANA = [chr(c) for c in range(0x3041, 0x3097)]
KATAKANA = [chr(c) for c in range(0x30A1, 0x30FB)]
JA_PARTICLES = ["の", "は", "が", "を", "に", "で", "と", "も", "から", "まで", "へ", "より"]
JA_ENDINGS = ["します", "しました", "です", "でした", "ですか", "ません", "ている", "ましょう",
              "してください", "と思います", "になります", "できます", "ですね", "だった", "する"]
JA_LOAN = ["データ", "サーバー", "ファイル", "テスト", "ユーザー", "エラー", "システム", "メモリ",
           "モデル", "ツール", "スレッド", "チェックポイント", "レポート", "ミーティング", "プロジェクト"]
HANGUL_CUM = None  # built lazily
HANGUL: list[str] = []
KO_PARTICLES = ["은", "는", "이", "가", "을", "를", "에", "에서", "으로", "하고", "도", "의"]
KO_ENDINGS = ["합니다", "했습니다", "입니다", "해요", "할까요?", "있어요", "없습니다", "주세요", "됩니다"]

EMOJI: list[str] = (
    [chr(c) for c in range(0x1F600, 0x1F650)] + [chr(c) for c in range(0x1F300, 0x1F5FF, 3)]
    + [chr(c) for c in range(0x1F680, 0x1F6C5)] + [chr(c) for c in range(0x1F90C, 0x1FA00, 2)]
    + [chr(c) + "\ufe0f" for c in (0x2600, 0x2601, 0x2614, 0x2615, 0x2705, 0x2728, 0x274C, 0x2764,
                                   0x26A0, 0x26A1, 0x2B50, 0x270C, 0x261D, 0x2757)]
    + ["👍🏽", "👋🏻", "🙏🏾", "💪🏼", "👌🏿", "🤷‍♀️", "🤦‍♂️", "👩‍💻", "👨‍👩‍👧", "🧑‍🚀", "🏳️‍🌈",
       "❤️‍🔥", "🇯🇵", "🇨🇳", "🇺🇸", "🇩🇪", "🇧🇷", "🇮🇳", "🇰🇷", "🇫🇷"]
)
# the head: the emoji people actually use most
EMOJI_HEAD = ["😂", "❤️", "👍", "🙏", "😊", "🔥", "✅", "🎉", "🚀", "🤔", "😅", "👀", "💯", "🙂", "✨",
              "⚠️", "❌", "📈", "💡", "😭"]
EMOJI_ALL = EMOJI_HEAD + [e for e in EMOJI if e not in EMOJI_HEAD]
EMOJI_CUM = _zipf_cum(len(EMOJI_ALL), 1.2, q=1)


def pick(r: random.Random, words: list[str], cum: list[float]) -> str:
    return words[bisect.bisect(cum, r.random() * cum[-1])]


def picks(r: random.Random, words: list[str], cum: list[float], k: int) -> list[str]:
    return r.choices(words, cum_weights=cum, k=k)


def lognormal(r: random.Random, median: float, sigma: float, lo: int, hi: int) -> int:
    return max(lo, min(hi, int(r.lognormvariate(math.log(median), sigma))))


def word(r: random.Random) -> str:
    return pick(r, CONTENT, CONTENT_CUM)


def emoji(r: random.Random) -> str:
    return pick(r, EMOJI_ALL, EMOJI_CUM)


def ident(r: random.Random, style: str = "snake") -> str:
    parts = [word(r) for _ in range(r.choice([1, 2, 2, 2, 3]))]
    parts = ["".join(c for c in p if c.isalnum()) or "x" for p in parts]
    if style == "snake":
        return "_".join(parts)
    if style == "camel":
        return parts[0] + "".join(p.capitalize() for p in parts[1:])
    if style == "pascal":
        return "".join(p.capitalize() for p in parts)
    if style == "kebab":
        return "-".join(parts)
    return "_".join(parts).upper()


def name(r: random.Random) -> str:
    return "".join(r.choice(NAME_SYLLABLES) for _ in range(r.randint(2, 3))).capitalize()


def person(r: random.Random) -> str:
    return f"{name(r)} {name(r)}"


def url(r: random.Random) -> str:
    host = f"{ident(r, 'kebab')}.{r.choice(TLDS)}"
    path = "/".join(ident(r, r.choice(["kebab", "snake"])) for _ in range(r.randint(0, 3)))
    q = f"?{word(r)}={r.randint(1, 9999)}" if r.random() < 0.2 else ""
    return f"https://{r.choice(['', 'www.', 'docs.', 'api.'])}{host}/{path}{q}"


def path(r: random.Random, ext: str | None = None) -> str:
    ext = ext or r.choice(["py", "ts", "rs", "go", "md", "json", "yaml", "sql", "txt", "tsx"])
    dirs = "/".join(ident(r, "snake") for _ in range(r.randint(1, 4)))
    return f"{r.choice(['src', 'app', 'lib', 'services', 'docs', 'tests'])}/{dirs}.{ext}"


def hexid(r: random.Random, n: int = 12) -> str:
    return f"{r.getrandbits(4 * n):0{n}x}"


def uuid_str(r: random.Random) -> str:
    h = hexid(r, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


def timestamp(r: random.Random) -> str:
    return (f"2025-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}T{r.randint(0, 23):02d}:"
            f"{r.randint(0, 59):02d}:{r.randint(0, 59):02d}.{r.randint(0, 999):03d}Z")


def number(r: random.Random) -> str:
    k = r.random()
    if k < 0.35:
        return str(r.randint(0, 100))
    if k < 0.55:
        return f"{r.uniform(0, 100):.{r.randint(1, 2)}f}"
    if k < 0.7:
        return f"{r.randint(1, 99)}%"
    if k < 0.85:
        return f"{r.randint(1000, 10**7):,}"
    return f"v{r.randint(0, 9)}.{r.randint(0, 30)}.{r.randint(0, 20)}"


# ------------------------------------------------------------------------------------- prose


def sentence(r: random.Random, style: float = 0.0) -> str:
    """One English-like sentence; style > 0 adds markdown decorations (inline code, bold, links)."""
    n = lognormal(r, 13, 0.5, 3, 45)
    ws = picks(r, WORDS, WORDS_CUM, n)
    out = []
    for i, w in enumerate(ws):
        k = r.random()
        if k < 0.025:
            w = number(r)
        elif k < 0.04:
            w = name(r)
        elif style and k < 0.04 + 0.03 * style:
            w = f"`{ident(r, r.choice(['snake', 'camel', 'pascal']))}`"
        elif style and k < 0.05 + 0.04 * style:
            w = f"**{w}**"
        elif style and k < 0.052 + 0.045 * style:
            w = f"[{w}]({url(r)})"
        elif k < 0.056:
            w = emoji(r)
        if i < n - 1 and r.random() < 0.07:
            w += ","
        out.append(w)
    s = " ".join(out)
    end = r.choices([".", "?", "!", ":", "..."], [80, 9, 5, 4, 2])[0]
    return s[:1].upper() + s[1:] + end


def paragraph(r: random.Random, n_chars: int, style: float = 0.0) -> str:
    out, size = [], 0
    while size < n_chars:
        s = sentence(r, style)
        out.append(s)
        size += len(s) + 1
    return " ".join(out)


def prose(r: random.Random, n_chars: int, style: float = 0.0) -> str:
    paras, size = [], 0
    while size < n_chars:
        p = paragraph(r, min(n_chars - size, lognormal(r, 420, 0.6, 60, 2000)), style)
        paras.append(p)
        size += len(p) + 2
    return "\n\n".join(paras)


# ------------------------------------------------------------------------------------- CJK


def zh(r: random.Random, n_chars: int, mixed: float = 0.1) -> str:
    out, size = [], 0
    while size < n_chars:
        k = r.randint(4, 18)
        seg = "".join(picks(r, HANZI, HANZI_CUM, k))
        if r.random() < mixed:
            seg += " " + (r.choice(ZH_TERMS) if r.random() < 0.6 else word(r)) + " "
        if r.random() < 0.03:
            seg += emoji(r)
        seg += r.choice(ZH_PUNCT)
        if r.random() < 0.06:
            seg += "\n\n"
        out.append(seg)
        size += len(seg)
    return "".join(out)


def ja(r: random.Random, n_chars: int) -> str:
    out, size = [], 0
    while size < n_chars:
        parts = []
        for _ in range(r.randint(2, 5)):
            k = r.random()
            if k < 0.4:
                w = "".join(picks(r, HANZI, HANZI_CUM, r.randint(1, 3)))
            elif k < 0.65:
                w = r.choice(JA_LOAN) if r.random() < 0.5 else "".join(r.choice(KATAKANA) for _ in range(r.randint(2, 5))) + "ー"
            elif k < 0.75:
                w = word(r)
            else:
                w = "".join(r.choice(HIRAGANA) for _ in range(r.randint(1, 4)))
            parts.append(w + r.choice(JA_PARTICLES))
        s = "".join(parts) + r.choice(JA_ENDINGS) + r.choice(["。", "。", "、", "！", "？"])
        if r.random() < 0.05:
            s += "\n\n"
        out.append(s)
        size += len(s)
    return "".join(out)


def ko(r: random.Random, n_chars: int) -> str:
    global HANGUL_CUM
    if HANGUL_CUM is None:
        HANGUL.extend(chr(c) for c in range(0xAC00, 0xD7A4))
        random.Random(LEXICON_SEED + 2).shuffle(HANGUL)
        HANGUL_CUM = _zipf_cum(len(HANGUL), 1.3, q=8)
    out, size = [], 0
    while size < n_chars:
        ws = []
        for _ in range(r.randint(3, 8)):
            w = "".join(picks(r, HANGUL, HANGUL_CUM, r.randint(1, 4)))
            if r.random() < 0.5:
                w += r.choice(KO_PARTICLES)
            ws.append(w)
        s = " ".join(ws) + " " + r.choice(KO_ENDINGS) + r.choice([" ", ". ", "\n\n"])
        out.append(s)
        size += len(s)
    return "".join(out)


def lang_text(r: random.Random, lang: str, n_chars: int, style: float = 0.0) -> str:
    if lang == "zh":
        return zh(r, n_chars)
    if lang == "ja":
        return ja(r, n_chars)
    if lang == "ko":
        return ko(r, n_chars)
    if lang == "zh-en":  # the mixed preset's denser code-switching
        return zh_en(r, n_chars)
    if lang == "mixed":  # code-switching English / Chinese
        out, size = [], 0
        while size < n_chars:
            k = min(n_chars - size, r.randint(40, 300)) + 1
            s = zh(r, k, mixed=0.3) if r.random() < 0.5 else paragraph(r, k, style)
            out.append(s)
            size += len(s) + 1
        return " ".join(out)
    return prose(r, n_chars, style)


# ------------------------------------------------------------------------------------- code

LANGS = ["python", "python", "typescript", "rust", "go", "sql", "bash", "yaml", "json"]


def _py_expr(r: random.Random) -> str:
    k = r.random()
    if k < 0.3:
        return f"{ident(r)}({', '.join(ident(r) for _ in range(r.randint(0, 3)))})"
    if k < 0.45:
        return f'"{" ".join(picks(r, WORDS, WORDS_CUM, r.randint(1, 6)))}"'
    if k < 0.6:
        return str(r.randint(0, 10_000))
    if k < 0.75:
        return f"self.{ident(r)}.{ident(r)}({ident(r)}={ident(r)})"
    if k < 0.85:
        return f"[{ident(r)} for {ident(r)} in {ident(r)} if {ident(r)}]"
    return f"{{{', '.join(repr(word(r)) + ': ' + ident(r) for _ in range(r.randint(1, 3)))}}}"


def code_python(r: random.Random, n_chars: int) -> str:
    lines = [f"import {r.choice(['os', 'json', 'logging', 'asyncio', 'sqlite3', 'typing'])}"
             for _ in range(r.randint(1, 3))]
    lines.append(f"from {ident(r)}.{ident(r)} import {ident(r, 'pascal')}, {ident(r)}")
    size = sum(map(len, lines))
    while size < n_chars:
        if r.random() < 0.2:
            block = [f"class {ident(r, 'pascal')}({ident(r, 'pascal')}):",
                     f'    """{sentence(r)}"""', ""]
            ind = "    "
        else:
            block, ind = [], ""
        for _ in range(r.randint(1, 3)):
            args = ", ".join(f"{ident(r)}: {r.choice(['str', 'int', 'float', 'dict', 'list[str]', 'bool'])}"
                             for _ in range(r.randint(0, 4)))
            if ind:
                args = "self" + (", " + args if args else "")
            block.append(f"{ind}{'async ' if r.random() < 0.2 else ''}def {ident(r)}({args}) -> "
                         f"{r.choice(['None', 'str', 'int', 'dict', 'bool', ident(r, 'pascal')])}:")
            if r.random() < 0.6:
                block.append(f'{ind}    """{sentence(r)}"""')
            for _ in range(r.randint(2, 12)):
                k = r.random()
                if k < 0.4:
                    block.append(f"{ind}    {ident(r)} = {_py_expr(r)}")
                elif k < 0.55:
                    block.append(f"{ind}    if {ident(r)} {r.choice(['is None', '> 0', '== 0', 'in ' + ident(r)])}:")
                    block.append(f"{ind}        {r.choice(['return', 'raise ValueError(', 'continue'])}"
                                 f"{' ' + _py_expr(r) if r.random() < 0.5 else ''}")
                elif k < 0.7:
                    block.append(f"{ind}    for {ident(r)} in {_py_expr(r)}:")
                    block.append(f"{ind}        {ident(r)}.append({_py_expr(r)})")
                elif k < 0.8:
                    block.append(f"{ind}    # {sentence(r)}")
                elif k < 0.9:
                    block.append(f'{ind}    logger.info("{sentence(r)[:60]} %s", {ident(r)})')
                else:
                    block.append(f"{ind}    await {_py_expr(r)}" if r.random() < 0.3 else f"{ind}    {_py_expr(r)}")
            block.append(f"{ind}    return {_py_expr(r)}")
            block.append("")
        lines += [""] + block
        size += sum(len(x) + 1 for x in block)
    return "\n".join(lines)


def code_ts(r: random.Random, n_chars: int) -> str:
    lines = [f"import {{ {ident(r, 'pascal')}, {ident(r, 'camel')} }} from './{ident(r, 'kebab')}';",
             f"import type {{ {ident(r, 'pascal')} }} from '@{ident(r, 'kebab')}/{ident(r, 'kebab')}';", ""]
    size = sum(map(len, lines))
    while size < n_chars:
        block = []
        if r.random() < 0.3:
            block.append(f"export interface {ident(r, 'pascal')} {{")
            for _ in range(r.randint(2, 8)):
                block.append(f"  {ident(r, 'camel')}{'?' if r.random() < 0.3 else ''}: "
                             f"{r.choice(['string', 'number', 'boolean', 'string[]', ident(r, 'pascal'), 'Record<string, unknown>'])};")
            block.append("}")
        else:
            block.append(f"export {'async ' if r.random() < 0.4 else ''}function {ident(r, 'camel')}("
                         + ", ".join(f"{ident(r, 'camel')}: {r.choice(['string', 'number', ident(r, 'pascal')])}"
                                     for _ in range(r.randint(0, 3))) + f"): {ident(r, 'pascal')} {{")
            for _ in range(r.randint(2, 10)):
                k = r.random()
                if k < 0.4:
                    block.append(f"  const {ident(r, 'camel')} = {'await ' if r.random() < 0.3 else ''}"
                                 f"{ident(r, 'camel')}.{ident(r, 'camel')}({ident(r, 'camel')});")
                elif k < 0.6:
                    block.append(f"  if (!{ident(r, 'camel')}) {{ throw new Error('{sentence(r)[:50]}'); }}")
                elif k < 0.75:
                    block.append(f"  // {sentence(r)}")
                else:
                    block.append(f"  {ident(r, 'camel')}.{r.choice(['push', 'set', 'emit', 'update'])}"
                                 f"({{ {ident(r, 'camel')}, {ident(r, 'camel')}: {r.randint(0, 999)} }});")
            block.append(f"  return {ident(r, 'camel')};")
            block.append("}")
        block.append("")
        lines += block
        size += sum(len(x) + 1 for x in block)
    return "\n".join(lines)


def code_rust(r: random.Random, n_chars: int) -> str:
    lines = [f"use crate::{ident(r)}::{{{ident(r, 'pascal')}, {ident(r)}}};", "use anyhow::Result;", ""]
    size = sum(map(len, lines))
    while size < n_chars:
        block = []
        if r.random() < 0.3:
            block.append("#[derive(Debug, Clone, Serialize, Deserialize)]")
            block.append(f"pub struct {ident(r, 'pascal')} {{")
            for _ in range(r.randint(2, 7)):
                block.append(f"    pub {ident(r)}: {r.choice(['String', 'u64', 'i32', 'bool', 'Vec<String>', 'Option<u32>', ident(r, 'pascal')])},")
            block.append("}")
        else:
            block.append(f"/// {sentence(r)}")
            block.append(f"pub fn {ident(r)}(&self, {ident(r)}: &str, {ident(r)}: usize) -> Result<{ident(r, 'pascal')}> {{")
            for _ in range(r.randint(2, 10)):
                k = r.random()
                if k < 0.4:
                    block.append(f"    let {ident(r)} = self.{ident(r)}.{ident(r)}({ident(r)})?;")
                elif k < 0.6:
                    block.append(f"    if {ident(r)}.is_empty() {{")
                    block.append(f"        bail!(\"{sentence(r)[:50]}\");")
                    block.append("    }")
                elif k < 0.75:
                    block.append(f"    for {ident(r)} in {ident(r)}.iter() {{ {ident(r)}.push({ident(r)}.clone()); }}")
                else:
                    block.append(f"    // {sentence(r)}")
            block.append(f"    Ok({ident(r, 'pascal')} {{ {ident(r)}, {ident(r)} }})")
            block.append("}")
        block.append("")
        lines += block
        size += sum(len(x) + 1 for x in block)
    return "\n".join(lines)


def code_go(r: random.Random, n_chars: int) -> str:
    lines = [f"package {ident(r).replace('_', '')}", "", "import (", '\t"context"', '\t"fmt"', ")", ""]
    size = sum(map(len, lines))
    while size < n_chars:
        block = [f"// {ident(r, 'pascal')} {sentence(r)}",
                 f"func (s *{ident(r, 'pascal')}) {ident(r, 'pascal')}(ctx context.Context, {ident(r, 'camel')} string) "
                 f"(*{ident(r, 'pascal')}, error) {{"]
        for _ in range(r.randint(2, 10)):
            k = r.random()
            if k < 0.5:
                block.append(f"\t{ident(r, 'camel')}, err := s.{ident(r, 'camel')}.{ident(r, 'pascal')}(ctx, {ident(r, 'camel')})")
                block.append("\tif err != nil {")
                block.append(f'\t\treturn nil, fmt.Errorf("{" ".join(picks(r, WORDS, WORDS_CUM, 3))}: %w", err)')
                block.append("\t}")
            else:
                block.append(f"\t// {sentence(r)}")
        block += [f"\treturn &{ident(r, 'pascal')}{{}}, nil", "}", ""]
        lines += block
        size += sum(len(x) + 1 for x in block)
    return "\n".join(lines)


def code_sql(r: random.Random, n_chars: int) -> str:
    out, size = [], 0
    while size < n_chars:
        t1, t2 = ident(r), ident(r)
        cols = ", ".join(f"{r.choice(['a', 'b'])}.{ident(r)}" for _ in range(r.randint(1, 5)))
        q = (f"SELECT {cols}, COUNT(*) AS {ident(r)}\nFROM {t1} a\nJOIN {t2} b ON b.{ident(r)}_id = a.id\n"
             f"WHERE a.{ident(r)} {r.choice(['>', '=', '<>', 'LIKE', '>='])} "
             f"{r.choice([str(r.randint(0, 999)), repr(word(r)), repr('%' + word(r) + '%')])}\n"
             f"  AND b.created_at >= '2025-{r.randint(1, 12):02d}-01'\n"
             f"GROUP BY {cols}\nORDER BY {ident(r)} {r.choice(['DESC', 'ASC'])}\nLIMIT {r.choice([10, 50, 100, 1000])};")
        if r.random() < 0.3:
            q = (f"CREATE INDEX IF NOT EXISTS idx_{t1}_{ident(r)} ON {t1} ({ident(r)}, {ident(r)});\n" + q)
        out.append(q)
        size += len(q) + 2
    return "\n\n".join(out)


def code_bash(r: random.Random, n_chars: int) -> str:
    cmds = ["git", "docker", "kubectl", "curl", "grep", "find", "cargo", "npm", "pip", "psql", "aws", "jq"]
    out, size = [], 0
    while size < n_chars:
        c = r.choice(cmds)
        line = (f"{c} {word(r)} --{ident(r, 'kebab')} {r.choice([path(r), url(r), word(r), str(r.randint(1, 99))])}"
                + (f" | {r.choice(['grep', 'jq', 'head', 'sort', 'wc'])} {r.choice(['-n', '-r', '.', '-20', '-l', '.items[]'])}"
                   if r.random() < 0.3 else ""))
        if r.random() < 0.15:
            line = f"# {sentence(r)}\n{line}"
        out.append(line)
        size += len(line) + 1
    return "\n".join(out)


def code_yaml(r: random.Random, n_chars: int) -> str:
    out, size = [], 0
    while size < n_chars:
        block = [f"{ident(r, 'kebab')}:"]
        for _ in range(r.randint(2, 8)):
            k = r.random()
            if k < 0.5:
                block.append(f"  {ident(r, 'camel')}: {r.choice([word(r), str(r.randint(0, 9999)), 'true', 'false', url(r)])}")
            else:
                block.append(f"  {ident(r, 'camel')}:")
                block += [f"    - {r.choice([word(r), ident(r, 'kebab'), number(r)])}" for _ in range(r.randint(1, 4))]
        out += block
        size += sum(len(x) + 1 for x in block)
    return "\n".join(out)


def code(r: random.Random, n_chars: int, lang: str | None = None) -> tuple[str, str]:
    lang = lang or r.choice(LANGS)
    fn: Callable = {"python": code_python, "typescript": code_ts, "rust": code_rust, "go": code_go,
                    "sql": code_sql, "bash": code_bash, "yaml": code_yaml,
                    "json": lambda r, n: json_doc(r, n, indent=2)}[lang]
    return lang, fn(r, n_chars)


# ------------------------------------------------------------------------------------- data


def json_value(r: random.Random, depth: int = 0):
    k = r.random()
    if depth < 3 and k < 0.12:
        return {ident(r, r.choice(["snake", "camel"])): json_value(r, depth + 1) for _ in range(r.randint(1, 6))}
    if depth < 3 and k < 0.2:
        return [json_value(r, depth + 1) for _ in range(r.randint(0, 5))]
    if k < 0.35:
        return r.randint(-100, 10**6)
    if k < 0.45:
        return round(r.uniform(-1000, 1000), r.randint(1, 6))
    if k < 0.52:
        return r.random() < 0.5
    if k < 0.57:
        return None
    if k < 0.65:
        return timestamp(r)
    if k < 0.7:
        return uuid_str(r)
    if k < 0.74:
        return url(r)
    if k < 0.77:
        return zh(r, r.randint(4, 30), mixed=0)
    if k < 0.85:
        return " ".join(picks(r, WORDS, WORDS_CUM, r.randint(1, 4)))
    return sentence(r)


def json_record(r: random.Random, keys: list[str]) -> dict:
    rec = {"id": uuid_str(r) if r.random() < 0.5 else r.randint(1, 10**7)}
    for k in keys:
        rec[k] = json_value(r, 1)
    return rec


def json_doc(r: random.Random, n_chars: int, indent: int | None = None) -> str:
    keys = [ident(r, r.choice(["snake", "camel"])) for _ in range(r.randint(3, 9))]
    items, size = [], 60
    while size < n_chars:
        rec = json_record(r, keys)
        items.append(rec)
        size += len(json.dumps(rec, ensure_ascii=False)) + (len(keys) + 2) * (indent or 0) * 2
    doc = {"object": "list", "data": items, "has_more": r.random() < 0.3,
           "next_cursor": hexid(r, 16) if r.random() < 0.5 else None, "total": len(items) + r.randint(0, 500)}
    return json.dumps(doc, ensure_ascii=r.random() < 0.2, indent=indent)


def sql_table(r: random.Random, n_chars: int) -> str:
    cols = [ident(r) for _ in range(r.randint(2, 7))]
    kinds = [r.choice(["int", "float", "word", "ts", "name", "zh"]) for _ in cols]

    def cell(k):
        return {"int": lambda: str(r.randint(0, 10**6)), "float": lambda: f"{r.uniform(0, 1e4):.2f}",
                "word": lambda: word(r), "ts": lambda: timestamp(r)[:19].replace("T", " "),
                "name": lambda: person(r), "zh": lambda: zh(r, r.randint(2, 8), mixed=0).rstrip("，。、：；！？（）“”")}[k]()

    rows, size = [], 0
    while size < n_chars:
        row = [cell(k) for k in kinds]
        rows.append(row)
        size += sum(len(c) + 3 for c in row)
    widths = [max(len(c), *(len(row[i]) for row in rows)) for i, c in enumerate(cols)]
    out = [" " + " | ".join(c.ljust(w) for c, w in zip(cols, widths)),
           "-" + "-+-".join("-" * w for w in widths) + "-"]
    out += [" " + " | ".join(c.rjust(w) if k in ("int", "float") else c.ljust(w)
                             for c, w, k in zip(row, widths, kinds)) for row in rows]
    out.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(out)


def csv_text(r: random.Random, n_chars: int) -> str:
    cols = [ident(r) for _ in range(r.randint(3, 8))]
    out, size = [",".join(cols)], 0
    while size < n_chars:
        row = ",".join(r.choice([str(r.randint(0, 9999)), f"{r.uniform(0, 1):.4f}", word(r),
                                 timestamp(r)[:10], f'"{sentence(r)[:40]}"']) for _ in cols)
        out.append(row)
        size += len(row) + 1
    return "\n".join(out)


def csv_numbers(r: random.Random, n_chars: int) -> str:
    """A CSV tool output full of random numbers (ids, counts, floats, percentages, scientific
    notation, timestamps, Chinese labels): no two rows alike, as a metrics export or a dataframe dump."""
    kinds = ["id", "int", "float", "float", "pct", "sci", "ts", "neg", "hex", "zh", "zh"]
    cols = [(ident(r), r.choice(kinds)) for _ in range(r.randint(4, 10))]
    out, size = [",".join(c for c, _ in cols)], 0
    while size < n_chars:
        cells = []
        for _, k in cols:
            if k == "id":
                cells.append(str(r.randint(10**5, 10**9)))
            elif k == "int":
                cells.append(str(r.randint(0, 10**r.randint(1, 7))))
            elif k == "float":
                cells.append(f"{r.uniform(0, 10**r.randint(0, 5)):.{r.randint(1, 6)}f}")
            elif k == "pct":
                cells.append(f"{r.uniform(0, 100):.2f}%")
            elif k == "sci":
                cells.append(f"{r.uniform(-9, 9):.4e}")
            elif k == "ts":
                cells.append(timestamp(r))
            elif k == "neg":
                cells.append(f"{r.uniform(-1000, 1000):.3f}")
            elif k == "zh":
                cells.append("".join(picks(r, HANZI, HANZI_CUM, r.randint(2, 8))))
            else:
                cells.append(hexid(r, r.choice([8, 12, 16])))
        row = ",".join(cells)
        out.append(row)
        size += len(row) + 1
    return "\n".join(out)


def zh_en(r: random.Random, n_chars: int) -> str:
    """Chinese/English prose that switches language within a paragraph (the `mixed` preset): about
    70 % of the characters are CJK; Chinese stretches carry English terms, numbers and emoji."""
    out, size = [], 0
    while size < n_chars:
        k = r.random()
        if k < 0.88:
            s = zh(r, r.randint(30, 160), mixed=0.3)
            if r.random() < 0.15:
                s += number(r)
        elif k < 0.95:
            s = sentence(r, 0.2) + " "
        else:
            s = emoji(r) + " "
        if r.random() < 0.04:
            s += "\n\n"
        out.append(s)
        size += len(s)
    return "".join(out)


def log_lines(r: random.Random, n_chars: int) -> str:
    out, size = [], 0
    svc = ident(r, "kebab")
    while size < n_chars:
        lvl = r.choices(["INFO", "DEBUG", "WARN", "ERROR"], [60, 20, 12, 8])[0]
        line = (f"{timestamp(r)} {lvl:5} [{svc}] {ident(r, 'snake')}: {sentence(r)[:120]} "
                f"request_id={hexid(r, 16)} duration_ms={r.randint(1, 5000)}")
        out.append(line)
        size += len(line) + 1
    return "\n".join(out)


def stack_trace(r: random.Random, n_chars: int) -> str:
    out = ["Traceback (most recent call last):"]
    size = 40
    while size < n_chars - 80:
        fr = f'  File "/app/{path(r, "py")}", line {r.randint(1, 900)}, in {ident(r)}\n    {ident(r)} = {_py_expr(r)}'
        out.append(fr)
        size += len(fr) + 1
    out.append(f"{r.choice(['ValueError', 'KeyError', 'TimeoutError', 'sqlite3.OperationalError', 'RuntimeError'])}: {sentence(r)}")
    return "\n".join(out)


def md_table(r: random.Random, n_rows: int) -> str:
    cols = [word(r).capitalize() for _ in range(r.randint(2, 6))]
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _ in range(n_rows):
        out.append("| " + " | ".join(r.choice([word(r), number(r), f"`{ident(r)}`", "✅", "❌",
                                                 " ".join(picks(r, WORDS, WORDS_CUM, r.randint(2, 6)))])
                                        for _ in cols) + " |")
    return "\n".join(out)


# ------------------------------------------------------------------------------------- documents


def markdown(r: random.Random, n_chars: int, lang: str = "en", code_rate: float = 0.25) -> str:
    """A markdown answer or document: paragraphs, headings, lists, code, tables, quotes."""
    blocks, size = [], 0
    first = True
    while size < n_chars:
        left = n_chars - size
        k = r.random()
        if first or k < 0.45 or left < 120:
            b = lang_text(r, lang, min(left, lognormal(r, 350, 0.7, 40, 1800)), style=0.6)
        elif k < 0.55:
            b = "#" * r.choice([2, 2, 3, 3, 4]) + " " + (lang_text(r, lang, r.randint(8, 40)).strip()
                                                         if lang != "en" else sentence(r)[:-1])
        elif k < 0.7:
            bullet = r.choice(["-", "*", "1."])
            items = []
            for j in range(r.randint(2, max(2, min(7, left // 60)))):
                mark = f"{j + 1}." if bullet == "1." else bullet
                items.append(f"{mark} " + (lang_text(r, lang, r.randint(20, 160), 0.8) if lang != "en"
                                           else sentence(r, 0.8)))
            b = "\n".join(items)
        elif k < 0.7 + code_rate * 0.4:
            lg, body = code(r, min(max(left, 120), lognormal(r, 500, 0.8, 80, 6000)))
            b = f"```{lg}\n{body}\n```"
        elif k < 0.85:
            b = md_table(r, r.randint(2, max(2, min(10, left // 50))))
        elif k < 0.9:
            b = "> " + sentence(r, 0.5)
        else:
            b = lang_text(r, lang, min(left, 300), style=0.6)
        first = False
        blocks.append(b)
        size += len(b) + 2
    return "\n\n".join(blocks)


PASTE_KINDS = ["document", "document", "code", "code", "log", "json", "csv", "trace", "table", "zh-doc"]


def paste(r: random.Random, n_chars: int, lang: str = "en") -> tuple[str, str]:
    kind = r.choice(PASTE_KINDS)
    if kind == "document":
        return kind, markdown(r, n_chars, lang if r.random() < 0.5 else "en", code_rate=0.1)
    if kind == "code":
        lg, body = code(r, n_chars)
        return kind, f"```{lg}\n{body}\n```"
    if kind == "log":
        return kind, log_lines(r, n_chars)
    if kind == "json":
        return kind, json_doc(r, n_chars, indent=r.choice([None, 2]))
    if kind == "csv":
        return kind, csv_text(r, n_chars)
    if kind == "trace":
        return kind, stack_trace(r, n_chars)
    if kind == "table":
        return kind, sql_table(r, n_chars)
    return kind, zh(r, n_chars, mixed=0.15)
