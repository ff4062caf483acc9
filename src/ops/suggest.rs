//! "Did you mean": the known names close to a mistyped one.

/// The candidates `given` is likely a typo of, at most three: first those the same but for
/// case, then those one character different (one replaced, added or left out, case aside),
/// each in the candidates' order. `given` itself is never suggested.
pub fn near<'a>(given: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let lower = given.to_lowercase();
    let (mut same_but_case, mut one_off) = (Vec::new(), Vec::new());
    for c in candidates {
        if c == given || same_but_case.len() == 3 {
            continue;
        }
        let c_lower = c.to_lowercase();
        if c_lower == lower {
            same_but_case.push(c);
        } else if one_off.len() < 3 && within_one(&lower, &c_lower) {
            one_off.push(c);
        }
    }
    same_but_case.extend(one_off);
    same_but_case.truncate(3);
    same_but_case
}

/// True when `a` and `b` are equal or one edit apart (a character replaced, added or removed).
fn within_one(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let (short, long) = if a.len() <= b.len() {
        (&a, &b)
    } else {
        (&b, &a)
    };
    match long.len() - short.len() {
        0 => short.iter().zip(long).filter(|(x, y)| x != y).count() <= 1,
        1 => {
            // The first difference is the extra character of the longer one.
            let at = short
                .iter()
                .zip(long)
                .position(|(x, y)| x != y)
                .unwrap_or(short.len());
            short[at..] == long[at + 1..]
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_and_one_character_are_near() {
        let ids = ["tools", "Tools2", "system", "user-42", "user-43", "t"];
        assert_eq!(near("Tools", ids), ["tools", "Tools2"]);
        assert_eq!(near("tool", ids), ["tools"]);
        assert_eq!(near("toolsx", ids), ["tools", "Tools2"]);
        assert_eq!(near("tXols", ids), ["tools"]);
        assert_eq!(near("user-44", ids), ["user-42", "user-43"]);
        assert!(near("tls", ids).is_empty());
        assert!(near("tools", ids).iter().all(|s| *s != "tools"));
        assert_eq!(near("", ids), ["t"]);
        assert_eq!(near("ü", ["u", "Ü"]), ["Ü", "u"]);
        // #43: the one that differs only by case comes first, however many are one off.
        let numbered = ["t00", "t01", "t02", "t03", "t04", "t05"];
        assert_eq!(near("T05", numbered), ["t05", "t00", "t01"]);
    }
}
