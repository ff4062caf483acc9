//! `store sweep`: deletes the Store's expired items (as the store's `sweep_ttl` would).

use anyhow::Result;

use super::{open_for_removal, removal_report, RemovalReport};
use crate::jobs::{Ctx, Sink};

/// How to sweep.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Delete nothing: report what would be deleted.
    pub dry_run: bool,
}

/// Deletes every expired item (none is asked about: the items had expired).
pub fn run(req: &Request, ctx: &Ctx, _sink: &dyn Sink) -> Result<RemovalReport> {
    let mut store = open_for_removal(ctx, req.dry_run)?;
    let removal = store.sweep(req.dry_run)?;
    Ok(removal_report(removal, req.dry_run))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sweep composes as a job: a plain request, a typed report, notes to a `Collect`;
    /// a dry run predicts the real run (the items the namespaces count as expired) and the
    /// real run deletes them.
    #[test]
    fn a_sweep_is_a_job_whose_dry_run_predicts_the_run() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("store.sqlite");
        let fixture =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/store.sqlite");
        std::fs::copy(fixture, &db).expect("copy");
        let ctx = Ctx {
            db: Some(db),
            ..Default::default()
        };
        let sink = crate::jobs::Collect::default();
        let expired: u64 = super::super::namespaces::run(&Default::default(), &ctx, &sink)
            .expect("namespaces")
            .iter()
            .map(|n| n.expired)
            .sum();
        assert!(expired > 0, "the fixture has expired items");
        let dry = run(&Request { dry_run: true }, &ctx, &sink).expect("dry run");
        assert!(dry.dry_run);
        assert_eq!(dry.items, expired);
        let real = run(&Request { dry_run: false }, &ctx, &sink).expect("sweep");
        assert!(!real.dry_run);
        assert_eq!(real.items, dry.items);
        assert_eq!(
            real.removed.iter().map(|r| &r.key).collect::<Vec<_>>(),
            dry.removed.iter().map(|r| &r.key).collect::<Vec<_>>()
        );
        let again = run(&Request { dry_run: true }, &ctx, &sink).expect("again");
        assert_eq!(again.items, 0, "nothing left to sweep");
        assert!(sink.notes().is_empty(), "{:?}", sink.notes());
    }
}
