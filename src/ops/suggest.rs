//! "Did you mean": the known names close to a mistyped one.

/// The candidates `given` is likely a typo of, at most three, in the candidates' order: the
/// same but for case, or one character different (one replaced, added or left out, case
/// aside). `given` itself is never suggested.
pub fn near<'a>(given: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let lower = given.to_lowercase();
    candidates
        .into_iter()
        .filter(|c| *c != given && within_one(&lower, &c.to_lowercase()))
        .take(3)
        .collect()
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
        assert_eq!(near("ü", ["u", "Ü"]), ["u", "Ü"]);
    }
}
