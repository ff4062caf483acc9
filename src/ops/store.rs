//! The LangGraph Store's namespaces as `store namespaces` shows them: split into labels, and
//! grouped to a depth the way `list_namespaces(max_depth=N)` groups them.

use crate::storage::store::NamespaceSummary;

/// A namespace's labels, as LangGraph decodes the stored text (`prefix.split('.')`).
pub fn labels(prefix: &str) -> Vec<String> {
    prefix.split('.').map(str::to_owned).collect()
}

/// `summaries` (in namespace order) with every namespace cut to its first `depth` labels and
/// the ones that fall together added up (items, bytes, expired; the newest update), in the
/// order of the cut namespaces.
pub fn to_depth(summaries: Vec<NamespaceSummary>, depth: usize) -> Vec<NamespaceSummary> {
    let mut grouped: std::collections::BTreeMap<String, NamespaceSummary> = Default::default();
    for s in summaries {
        let cut: Vec<&str> = s.prefix.split('.').take(depth.max(1)).collect();
        let cut = cut.join(".");
        let entry = grouped
            .entry(cut.clone())
            .or_insert_with(|| NamespaceSummary {
                prefix: cut,
                items: 0,
                bytes: 0,
                expired: 0,
                newest_update: None,
            });
        entry.items += s.items;
        entry.bytes += s.bytes;
        entry.expired += s.expired;
        if s.newest_update > entry.newest_update {
            entry.newest_update = s.newest_update;
        }
    }
    grouped.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(prefix: &str, items: u64, updated: &str) -> NamespaceSummary {
        NamespaceSummary {
            prefix: prefix.into(),
            items,
            bytes: items * 10,
            expired: 1,
            newest_update: Some(updated.into()),
        }
    }

    #[test]
    fn depth_groups_by_leading_labels() {
        let got = to_depth(
            vec![
                ns("prefs", 1, "2026-01-01T00:00:00+00:00"),
                ns("users", 1, "2026-01-02T00:00:00+00:00"),
                ns("users.u-42.memories", 3, "2026-01-05T00:00:00+00:00"),
                ns("users.u-42.profile", 1, "2026-01-03T00:00:00+00:00"),
                ns("users.u-7.memories", 2, "2026-01-04T00:00:00+00:00"),
            ],
            2,
        );
        let shown: Vec<(&str, u64, u64, u64, &str)> = got
            .iter()
            .map(|n| {
                (
                    n.prefix.as_str(),
                    n.items,
                    n.bytes,
                    n.expired,
                    n.newest_update.as_deref().unwrap_or(""),
                )
            })
            .collect();
        assert_eq!(
            shown,
            vec![
                ("prefs", 1, 10, 1, "2026-01-01T00:00:00+00:00"),
                ("users", 1, 10, 1, "2026-01-02T00:00:00+00:00"),
                ("users.u-42", 4, 40, 2, "2026-01-05T00:00:00+00:00"),
                ("users.u-7", 2, 20, 1, "2026-01-04T00:00:00+00:00"),
            ]
        );
    }

    #[test]
    fn labels_split_on_dots() {
        assert_eq!(labels("users.u-42.memories"), ["users", "u-42", "memories"]);
        assert_eq!(labels("prefs"), ["prefs"]);
    }
}
