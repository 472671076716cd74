//! Where the wiki's index comes from: the built-in pages' index is the one written at
//! build time (answers as an index built now would), and a wiki with a user folder is
//! indexed once into the cache folder and opened there by the next load.

use kernaut_ide::wiki::WikiConfig;
use kernaut_ide::Knowledge;

fn targets(k: &Knowledge, query: &str) -> Vec<String> {
    k.search(query, &Default::default())
        .iter()
        .map(|h| h.target())
        .collect()
}

#[test]
fn prebuilt_and_cached_indexes_answer_like_fresh_ones() {
    let tmp = std::env::temp_dir().join(format!("kernaut-knowledge-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    let (cache, user) = (tmp.join("cache"), tmp.join("wiki"));
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(
        user.join("team.md"),
        "---\nid: pitfall-team-staging\ntype: pitfall\ntitle: Our staging buffer\n---\nNotes.\n\n\
         ## P1: Staging buffer drained every iteration\n**Symptom**: the staged loop is no faster.\n",
    )
    .unwrap();
    std::env::set_var("KERNAUT_CACHE_DIR", &cache);
    let queries = [
        "bank conflict",
        "staging buffer drained",
        "__hfma2",
        "cp.async wait_group",
    ];

    // The built-in wiki: the prebuilt index against one built now.
    let prebuilt = Knowledge::load(&WikiConfig::builtin()).unwrap();
    std::env::set_var("KERNAUT_INDEX", "rebuild");
    let fresh = Knowledge::load(&WikiConfig::builtin()).unwrap();
    let mut config = WikiConfig::builtin();
    config.dirs.push(user.clone());
    let fresh_user = Knowledge::load(&config).unwrap();
    std::env::remove_var("KERNAUT_INDEX");
    assert!(!cache.exists(), "KERNAUT_INDEX=rebuild writes no cache");
    assert_eq!(prebuilt.index.num_docs(), fresh.index.num_docs());
    for q in queries {
        assert_eq!(targets(&prebuilt, q), targets(&fresh, q), "{q}");
    }

    // With a user folder: indexed into the cache once, then opened there.
    let first = Knowledge::load(&config).unwrap();
    let entries: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(entries.len(), 1, "{entries:?}");
    let meta = cache.join(&entries[0]).join("meta.json");
    let written = std::fs::metadata(&meta).unwrap().modified().unwrap();
    let second = Knowledge::load(&config).unwrap();
    assert_eq!(
        std::fs::metadata(&meta).unwrap().modified().unwrap(),
        written
    );
    assert!(
        targets(&first, "staging buffer drained").contains(&"pitfall-team-staging#P1".to_string()),
        "the user's page is in the cached index"
    );
    for q in queries {
        assert_eq!(targets(&first, q), targets(&fresh_user, q), "{q}");
        assert_eq!(targets(&second, q), targets(&fresh_user, q), "{q}");
    }

    // An edited page: another key, another entry.
    std::fs::write(
        user.join("team.md"),
        "---\nid: pitfall-team-staging\ntype: pitfall\ntitle: Renamed\n---\nNotes.\n",
    )
    .unwrap();
    let third = Knowledge::load(&config).unwrap();
    assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 2);
    assert!(third.resolve("pitfall-team-staging").is_some());
    std::env::remove_var("KERNAUT_CACHE_DIR");
    let _ = std::fs::remove_dir_all(&tmp);
}
