//! tiktoken's pre-tokenizers (the regexes that cut a text into pieces before the byte-pair
//! merge), written out by hand: the same pieces as the patterns of `tiktoken_ext/openai_public.py`
//! run by fancy-regex (backtracking, leftmost alternative first), several times faster than a
//! regex engine. The tests compare them with the patterns themselves on random Unicode text.
//!
//! o200k_base:
//!
//! ```text
//! [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//! |[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//! |\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//! ```
//!
//! cl100k_base (as tiktoken 0.8 and later write it; earlier versions had no `\s++$`, so a run of
//! white space that ends the text was cut after its last line break):
//!
//! ```text
//! '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s
//! ```
//!
//! Every character starts a match of some alternative, so the pieces cover the text.

use std::sync::LazyLock;

use unicode_general_category::{get_general_category, GeneralCategory as G};

/// A tiktoken encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// gpt-4o, gpt-4.1, gpt-5, o1, o3…
    O200k,
    /// gpt-4, gpt-3.5-turbo.
    Cl100k,
}

/// `\s`: Unicode White_Space.
const WS: u8 = 1;
/// `\p{L}`.
const LET: u8 = 2;
/// `\p{N}`.
const NUM: u8 = 4;
/// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]` (o200k's upper-case side).
const UP: u8 = 8;
/// `[\p{Ll}\p{Lm}\p{Lo}\p{M}]` (o200k's lower-case side).
const LO: u8 = 16;
/// `[\r\n]`.
const NL: u8 = 32;

/// The class bits of a character.
fn class_of_char(c: char) -> u8 {
    let ws = if c.is_whitespace() { WS } else { 0 };
    let nl = if c == '\r' || c == '\n' { NL } else { 0 };
    let cat = match get_general_category(c) {
        G::UppercaseLetter | G::TitlecaseLetter => LET | UP,
        G::LowercaseLetter => LET | LO,
        G::ModifierLetter | G::OtherLetter => LET | UP | LO,
        G::NonspacingMark | G::SpacingMark | G::EnclosingMark => UP | LO,
        G::DecimalNumber | G::LetterNumber | G::OtherNumber => NUM,
        _ => 0,
    };
    ws | nl | cat
}

/// The classes of the Basic Multilingual Plane (64 KiB, made at first use, ~2 ms).
static BMP: LazyLock<Box<[u8]>> = LazyLock::new(|| {
    (0..0x1_0000u32)
        .map(|c| char::from_u32(c).map_or(0, class_of_char))
        .collect()
});

/// Makes the class table now (on a background thread, before the first text).
pub fn preload() {
    LazyLock::force(&BMP);
}

/// The classes of ASCII.
const ASCII: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut c = 0;
    while c < 128 {
        let b = c as u8;
        t[c] = match b {
            b'\r' | b'\n' => WS | NL,
            b'\t' | 0x0b | 0x0c | b' ' => WS,
            b'A'..=b'Z' => LET | UP,
            b'a'..=b'z' => LET | LO,
            b'0'..=b'9' => NUM,
            _ => 0,
        };
        c += 1;
    }
    t
};

/// A text being cut into pieces.
struct Text<'a> {
    s: &'a [u8],
    bmp: &'a [u8],
}

impl Text<'_> {
    /// The class bits and UTF-8 length of the character at byte `i` (`i` < len, on a
    /// character boundary).
    #[inline(always)]
    fn class(&self, i: usize) -> (u8, usize) {
        let s = self.s;
        let b = s[i];
        if b < 0x80 {
            return (ASCII[b as usize], 1);
        }
        let cont = |k: usize| (s[i + k] & 0x3f) as u32;
        if b < 0xe0 {
            let c = ((b as u32 & 0x1f) << 6) | cont(1);
            (self.bmp[c as usize], 2)
        } else if b < 0xf0 {
            let c = ((b as u32 & 0x0f) << 12) | (cont(1) << 6) | cont(2);
            (self.bmp[c as usize], 3)
        } else {
            let c = ((b as u32 & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3);
            (char::from_u32(c).map_or(0, class_of_char), 4)
        }
    }

    /// The end of the longest run from `i` of characters whose class has a bit of `bits`.
    #[inline(always)]
    fn run(&self, mut i: usize, bits: u8) -> usize {
        while i < self.s.len() {
            let (c, l) = self.class(i);
            if c & bits == 0 {
                break;
            }
            i += l;
        }
        i
    }

    /// `[^\r\n\p{L}\p{N}]`: the optional character before a word.
    #[inline(always)]
    fn prefix(c: u8) -> bool {
        c & (NL | LET | NUM) == 0
    }

    /// The end of `(?i:'s|'t|'re|'ve|'m|'ll|'d)?` at `i` (case folding: `ſ` is an `s`).
    #[inline(always)]
    fn contraction(&self, i: usize) -> usize {
        let s = self.s;
        if s.get(i) != Some(&b'\'') {
            return i;
        }
        let at = |k: usize| s.get(i + k).map_or(0, |b| b.to_ascii_lowercase());
        match at(1) {
            b's' | b't' | b'm' | b'd' => i + 2,
            0xc5 if s.get(i + 2) == Some(&0xbf) => i + 3, // ſ (U+017F)
            b'r' | b'v' if at(2) == b'e' => i + 3,
            b'l' if at(2) == b'l' => i + 3,
            _ => i,
        }
    }

    /// o200k's first word alternative from `s` (after the optional prefix):
    /// `[UP]*[LO]+` with backtracking, then a contraction.
    #[inline(always)]
    fn o200k_lower(&self, s: usize) -> Option<usize> {
        // [UP]* takes the longest run; [LO]+ then needs a character: the one after the run,
        // extended while LO, or else the run gives back down to its last LO character.
        let mut u = s;
        let mut last_lo = None;
        while u < self.s.len() {
            let (c, l) = self.class(u);
            if c & UP == 0 {
                if c & LO != 0 {
                    return Some(self.contraction(self.run(u + l, LO)));
                }
                break;
            }
            u += l;
            if c & LO != 0 {
                last_lo = Some(u);
            }
        }
        last_lo.map(|e| self.contraction(e))
    }

    /// o200k's second word alternative from `s`: `[UP]+[LO]*`, then a contraction.
    #[inline(always)]
    fn o200k_upper(&self, s: usize) -> Option<usize> {
        let u = self.run(s, UP);
        (u > s).then(|| self.contraction(self.run(u, LO)))
    }

    /// `\s*[\r\n]+|\s+(?!\S)|\s+` at `p` (a white-space character); with `end_first`,
    /// cl100k's `\s++$|\s*[\r\n]|\s+(?!\S)|\s`: a run that ends the text is one piece.
    #[inline(always)]
    fn spaces(&self, p: usize, end_first: bool) -> usize {
        let mut i = p;
        let mut after_nl = None;
        let mut last = p;
        while i < self.s.len() {
            let (c, l) = self.class(i);
            if c & WS == 0 {
                break;
            }
            last = i;
            i += l;
            if c & NL != 0 {
                after_nl = Some(i);
            }
        }
        if end_first && i == self.s.len() {
            i
        } else if let Some(e) = after_nl {
            // \s* gives back down to the last line break.
            e
        } else if i == self.s.len() || last == p {
            // At the end nothing follows; a single space before a non-space is \s+ alone.
            i
        } else {
            // (?!\S): the last space stays for the next piece.
            last
        }
    }

    /// The end of the o200k piece that starts at `p`.
    fn o200k_end(&self, p: usize) -> usize {
        let n = self.s.len();
        let (c0, l0) = self.class(p);
        // The word alternatives can only match from a letter or mark: with the prefix, the
        // character after it must be one; without, the first.
        let next = if p + l0 < n { self.class(p + l0).0 } else { 0 };
        let pre = Self::prefix(c0) && next & (UP | LO) != 0;
        let bare = c0 & (UP | LO) != 0;
        if pre || bare {
            if pre {
                if let Some(e) = self.o200k_lower(p + l0) {
                    return e;
                }
            }
            if bare {
                if let Some(e) = self.o200k_lower(p) {
                    return e;
                }
            }
            if pre {
                if let Some(e) = self.o200k_upper(p + l0) {
                    return e;
                }
            }
            if bare {
                if let Some(e) = self.o200k_upper(p) {
                    return e;
                }
            }
        }
        if c0 & NUM != 0 {
            return self.digits(p);
        }
        if let Some(e) = self.punctuation(p, c0, b'/') {
            return e;
        }
        self.spaces(p, false)
    }

    /// `\p{N}{1,3}` at `p` (a number character).
    #[inline(always)]
    fn digits(&self, p: usize) -> usize {
        let mut e = p;
        for _ in 0..3 {
            if e >= self.s.len() {
                break;
            }
            let (c, l) = self.class(e);
            if c & NUM == 0 {
                break;
            }
            e += l;
        }
        e
    }

    /// ` ?[^\s\p{L}\p{N}]+[\r\n<also>]*` at `p` (`also`: o200k's `/`, or a line break).
    #[inline(always)]
    fn punctuation(&self, p: usize, c0: u8, also: u8) -> Option<usize> {
        let sym = |c: u8| c & (WS | LET | NUM) == 0;
        let start = if self.s[p] == b' ' && p + 1 < self.s.len() && sym(self.class(p + 1).0) {
            p + 1
        } else if sym(c0) {
            p
        } else {
            return None;
        };
        let mut e = start;
        while e < self.s.len() {
            let (c, l) = self.class(e);
            if !sym(c) {
                break;
            }
            e += l;
        }
        while let Some(&b) = self.s.get(e) {
            if b != b'\r' && b != b'\n' && b != also {
                break;
            }
            e += 1;
        }
        Some(e)
    }

    /// The end of the cl100k piece that starts at `p`.
    fn cl100k_end(&self, p: usize) -> usize {
        let s = self.s;
        let n = s.len();
        if s[p] == b'\'' {
            let at = |k: usize| s.get(p + k).map_or(0, |b| b.to_ascii_lowercase());
            match at(1) {
                b's' | b'd' | b'm' | b't' => return p + 2,
                0xc5 if s.get(p + 2) == Some(&0xbf) => return p + 3, // ſ
                b'l' if at(2) == b'l' => return p + 3,
                b'v' | b'r' if at(2) == b'e' => return p + 3,
                _ => {}
            }
        }
        let (c0, l0) = self.class(p);
        if c0 & LET != 0 {
            return self.run(p + l0, LET);
        }
        if Self::prefix(c0) && p + l0 < n && self.class(p + l0).0 & LET != 0 {
            return self.run(p + l0, LET);
        }
        if c0 & NUM != 0 {
            return self.digits(p);
        }
        if let Some(e) = self.punctuation(p, c0, b'\n') {
            return e;
        }
        self.spaces(p, true)
    }
}

/// Calls `f` with each piece tiktoken's pre-tokenizer of `e` cuts `text` into, in order.
pub fn for_each_piece(e: Encoding, text: &str, mut f: impl FnMut(&[u8])) {
    let t = Text {
        s: text.as_bytes(),
        bmp: &BMP,
    };
    let mut p = 0;
    while p < t.s.len() {
        let end = match e {
            Encoding::O200k => t.o200k_end(p),
            Encoding::Cl100k => t.cl100k_end(p),
        };
        f(&t.s[p..end]);
        p = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex_automata::meta::Regex;
    use regex_automata::{Anchored, Input};

    /// tiktoken's patterns for the `regex` engine, which has no look-around: `\s+(?!\S)`
    /// becomes `\s+\s` (pattern 1), whose last character is then given back; `\s+$` stands
    /// before it (o200k: after `\s*[\r\n]+`, cl100k: before, as tiktoken's `\s++$`). Possessive
    /// quantifiers are plain ones (the same matches here). bpe-openai 0.3 used these patterns,
    /// with cl100k's `\s+$` after `\s*[\r\n]+` (tiktoken before its `\s++$`).
    fn reference(e: Encoding) -> Regex {
        let first = match e {
            Encoding::O200k => [
                r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
                r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
                r"\p{N}{1,3}",
                r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
                r"\s*[\r\n]+",
                r"\s+$",
            ]
            .join("|"),
            Encoding::Cl100k => [
                r"'(?i:[sdmt]|ll|ve|re)",
                r"[^\r\n\p{L}\p{N}]?\p{L}+",
                r"\p{N}{1,3}",
                r" ?[^\s\p{L}\p{N}]+[\r\n]*",
                r"\s+$",
                r"\s*[\r\n]",
            ]
            .join("|"),
        };
        Regex::new_many(&[first.as_str(), r"\s+\s", r"\s+"]).expect("the patterns compile")
    }

    fn reference_pieces<'t>(re: &Regex, text: &'t str) -> Vec<&'t str> {
        let mut out = Vec::new();
        let mut last = 0;
        while last < text.len() {
            let input = Input::new(&text[last..]).anchored(Anchored::Yes);
            let m = re.search(&input).expect("every character starts a piece");
            let mut end = last + m.end();
            if m.pattern().as_usize() == 1 {
                end -= text[last..end]
                    .chars()
                    .next_back()
                    .map_or(0, char::len_utf8);
            }
            assert!(end > last);
            out.push(&text[last..end]);
            last = end;
        }
        out
    }

    fn ours(e: Encoding, text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        let mut at = 0;
        for_each_piece(e, text, |p| {
            out.push(&text[at..at + p.len()]);
            at += p.len();
        });
        out
    }

    /// Characters of every class the patterns tell apart, and their edges.
    const ALPHABET: &str = concat!(
        " \t\n\r\u{b}\u{c}\u{85}\u{a0}\u{1680}\u{2000}\u{200a}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}",
        "\u{1c}\u{1f}\u{180e}\u{200b}\u{feff}\u{0}",
        "aZzA's'S'tT'rRe'vVE'mM'lL'dDſKİßǅʰ中文あア한글Ωω",
        "\u{301}\u{903}\u{20dd}\u{300}",
        "09٣⑤½²Ⅻ",
        ".,;:!?'\"/\\-_()[]{}<>@#$%^&*+=|~`…“”，。、￥",
        "😀🌧️☀\u{fe0f}👍🏽👨\u{200d}👩\u{200d}👧🇫🇷"
    );

    /// Random texts: mostly from [`ALPHABET`], some of any code point, in runs.
    fn random_texts(seed: u64, count: usize, max_len: u64) -> Vec<String> {
        let alphabet: Vec<char> = ALPHABET.chars().collect();
        let mut s = seed;
        let mut next = move || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            s >> 33
        };
        (0..count)
            .map(|_| {
                let len = next() % max_len;
                let mut t = String::new();
                while (t.chars().count() as u64) < len {
                    let c = if next() % 8 == 0 {
                        let cp = match next() % 3 {
                            0 => next() % 0x80,
                            1 => next() % 0x1_0000,
                            _ => next() % 0x11_0000,
                        };
                        char::from_u32(cp as u32).unwrap_or('x')
                    } else {
                        alphabet[next() as usize % alphabet.len()]
                    };
                    // Runs of the same character (spaces, letters, marks) now and then.
                    let times = if next() % 10 == 0 { next() % 6 + 1 } else { 1 };
                    for _ in 0..times {
                        t.push(c);
                    }
                }
                t
            })
            .collect()
    }

    #[test]
    fn pieces_equal_the_patterns_on_random_text() {
        let texts = random_texts(20261201, 20_000, 40);
        for e in [Encoding::O200k, Encoding::Cl100k] {
            let re = reference(e);
            for t in &texts {
                assert_eq!(ours(e, t), reference_pieces(&re, t), "{e:?} {t:?}");
            }
        }
    }

    #[test]
    fn pieces_equal_the_patterns_on_known_cases() {
        let cases = [
            "",
            "Hello, how are you today?",
            "don't I'LL 'S they'Re we'VE 'ſ 'x ' 's",
            "HELLOworld helloWORLD HeLLo Ǆǅǆ ʰʰa a\u{301}b \u{301}\u{301}A",
            "123456789 ٣٣٣٣ ½½½½",
            "  x   y\t\tz \n\n  w\r\n\r\n",
            "a\n\n  ",
            "a\n  ",
            "x \n",
            "end   ",
            "//\n\n/ a/b a//\n c ...\r\n",
            "天气 北京 🌧️☀️ Zürich   ",
            "\u{3000}中文\u{a0}x\u{85}y",
        ];
        for e in [Encoding::O200k, Encoding::Cl100k] {
            let re = reference(e);
            for t in cases {
                assert_eq!(ours(e, t), reference_pieces(&re, t), "{e:?} {t:?}");
            }
        }
        // The white space that ends a text: cl100k keeps it whole (tiktoken's `\s++$`).
        assert_eq!(ours(Encoding::Cl100k, "a\n  "), ["a", "\n  "]);
        assert_eq!(ours(Encoding::O200k, "a\n  "), ["a", "\n", "  "]);
    }

    #[test]
    fn case_insensitive_contractions_fold_only_long_s() {
        // (?i) in the contractions: which characters match one of their letters.
        let re = regex::Regex::new(r"^(?i:[stdmrvel])$").expect("compiles");
        let folded: String = (0..0x11_0000u32)
            .filter_map(char::from_u32)
            .filter(|c| re.is_match(c.encode_utf8(&mut [0; 4])))
            .collect();
        assert_eq!(folded, "DELMRSTVdelmrstvſ");
    }

    #[test]
    fn classes_equal_the_regex_classes() {
        let class = |p: &str| regex::Regex::new(&format!("^{p}$")).expect("compiles");
        let (ws, l, n) = (class(r"\s"), class(r"\p{L}"), class(r"\p{N}"));
        let (up, lo) = (
            class(r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"),
            class(r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"),
        );
        let text = Text { s: b"", bmp: &BMP };
        for c in (0..0x11_0000u32).filter_map(char::from_u32) {
            let mut buf = [0; 4];
            let s = c.encode_utf8(&mut buf);
            let t = Text {
                s: s.as_bytes(),
                ..text
            };
            let (k, len) = t.class(0);
            assert_eq!(len, s.len());
            let want = [
                (ws.is_match(s), WS),
                (l.is_match(s), LET),
                (n.is_match(s), NUM),
                (up.is_match(s), UP),
                (lo.is_match(s), LO),
                (c == '\r' || c == '\n', NL),
            ]
            .iter()
            .fold(0, |k, &(m, bit)| if m { k | bit } else { k });
            assert_eq!(k, want, "U+{:04X}", c as u32);
        }
    }
}
