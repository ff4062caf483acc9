//! `--meta`'s batched read ([`CheckpointStore::metadata_of`]) against the per-thread reads it
//! replaced: each thread's namespaces, each namespace's metadata, and the latest root
//! checkpoint.

use memctl::storage::CheckpointStore;

/// Every way `store.metadata_of` differs from the per-thread reads, for all of the store's
/// threads asked at once in reverse order, with a thread that does not exist among them (it
/// gets no rows) and one asked twice.
pub fn metadata_of_differences(store: &dyn CheckpointStore) -> Vec<String> {
    let mut threads: Vec<String> = Vec::new();
    store
        .for_each_thread(&mut |t| {
            threads.push(t.thread_id);
            Ok(())
        })
        .expect("threads");
    threads.reverse();
    threads.insert(1, "no-such-thread".to_owned());
    threads.push(threads[0].clone());
    let asked: Vec<&str> = threads.iter().map(String::as_str).collect();
    let got = store.metadata_of(&asked).expect("metadata_of");
    assert_eq!(got.len(), asked.len());
    let mut differences = Vec::new();
    for (thread, rows) in asked.iter().zip(&got) {
        let mut want = Vec::new();
        for ns in store.namespaces(thread).expect("namespaces") {
            for (id, m) in store.metadata(thread, &ns).expect("metadata") {
                want.push((ns.clone(), id, m));
            }
        }
        let have: Vec<_> = rows
            .iter()
            .map(|r| {
                (
                    r.checkpoint_ns.clone(),
                    r.checkpoint_id.clone(),
                    r.metadata.clone(),
                )
            })
            .collect();
        if have != want {
            differences.push(format!("{thread}: {have:?} != {want:?}"));
        }
        let latest = store
            .checkpoint(thread, "", None)
            .expect("latest")
            .map(|row| row.checkpoint_id);
        let first_root = rows
            .iter()
            .find(|r| r.checkpoint_ns.is_empty())
            .map(|r| r.checkpoint_id.clone());
        if first_root != latest {
            differences.push(format!(
                "{thread}: first root {first_root:?}, latest {latest:?}"
            ));
        }
    }
    differences
}
