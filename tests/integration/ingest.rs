//! `ingest` end to end through the binary, on both stores: idempotence, replacement, prune,
//! dry run, permissions, failures that do not stop the run, and embedding mismatches.

use crate::util::{agent, stderr, stdout, write, TestDatabase};
use serde_json::Value;
use std::path::Path;

struct Run {
    code: i32,
    summary: Value,
    stderr: String,
}

fn ingest(workdir: &Path, database_url: &str, args: &[&str]) -> Run {
    let output = agent(workdir)
        .env("DATABASE_URL", database_url)
        .env("EMBEDDING_DIM", "64")
        .arg("ingest")
        .arg("--json")
        .args(args)
        .output()
        .unwrap();
    Run {
        code: output.status.code().unwrap_or(-1),
        summary: serde_json::from_str(&stdout(&output)).unwrap_or(Value::Null),
        stderr: stderr(&output),
    }
}

fn count(run: &Run, field: &str) -> u64 {
    run.summary[field]
        .as_u64()
        .unwrap_or_else(|| panic!("no {field} in {:?} ({})", run.summary, run.stderr))
}

fn action_of<'a>(run: &'a Run, source: &str) -> &'a str {
    run.summary["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["source"] == source)
        .and_then(|s| s["action"].as_str())
        .unwrap_or("absent")
}

fn fixture(root: &Path) {
    write(
        &root.join("docs/user/rooms.md"),
        "# Rooms\n\nEvery room has a capacity.\n",
    );
    write(
        &root.join("docs/staff/_permissions.yaml"),
        "permissions: [business_staff]\n",
    );
    write(
        &root.join("docs/staff/sensors.md"),
        "# Sensors\n\nCO2 is measured in ppm.\n",
    );
    write(
        &root.join("docs/admin.md"),
        "---\ntitle: Admin\npermissions: [admin]\n---\n# Keys\n\nRotate keys.\n",
    );
    write(
        &root.join("docs/broken.md"),
        "---\npermissions: [admin\n---\n# Broken\n",
    );
}

fn ingest_lifecycle(workdir: &Path, url: &str) {
    fixture(workdir);
    let first = ingest(workdir, url, &["docs"]);
    assert_eq!(
        first.code, 1,
        "a file that fails makes the run exit 1: {}",
        first.stderr
    );
    assert_eq!(count(&first, "added"), 3);
    assert_eq!(count(&first, "failed"), 1);
    assert_eq!(
        count(&first, "public"),
        1,
        "only user/rooms.md declares no permissions"
    );
    assert_eq!(action_of(&first, "broken.md"), "failed");

    std::fs::remove_file(workdir.join("docs/broken.md")).unwrap();
    let second = ingest(workdir, url, &["docs"]);
    assert_eq!(second.code, 0, "{}", second.stderr);
    assert_eq!((count(&second, "added"), count(&second, "skipped")), (0, 3));

    write(
        &workdir.join("docs/user/rooms.md"),
        "# Rooms\n\nEvery room has a capacity and a floor.\n",
    );
    let dry = ingest(workdir, url, &["docs", "--dry-run"]);
    assert_eq!(action_of(&dry, "user/rooms.md"), "replaced");
    assert_eq!(count(&dry, "skipped"), 2);
    let edited = ingest(workdir, url, &["docs"]);
    assert_eq!(
        (count(&edited, "replaced"), count(&edited, "skipped")),
        (1, 2),
        "the dry run wrote nothing"
    );
    assert_eq!(action_of(&edited, "user/rooms.md"), "replaced");

    write(
        &workdir.join("docs/copy/rooms-again.md"),
        "# Rooms\n\nEvery room has a capacity and a floor.\n",
    );
    let copy = ingest(workdir, url, &["docs"]);
    assert_eq!(action_of(&copy, "copy/rooms-again.md"), "duplicate");

    std::fs::remove_dir_all(workdir.join("docs/copy")).unwrap();
    std::fs::remove_file(workdir.join("docs/staff/sensors.md")).unwrap();
    let without_prune = ingest(workdir, url, &["docs"]);
    assert_eq!(count(&without_prune, "pruned"), 0);
    let pruned = ingest(workdir, url, &["docs", "--prune"]);
    assert_eq!(count(&pruned, "pruned"), 1);
    assert_eq!(action_of(&pruned, "staff/sensors.md"), "pruned");

    let strict = ingest(workdir, url, &["docs", "--require-permissions"]);
    assert_eq!(strict.code, 1);
    assert_eq!(action_of(&strict, "user/rooms.md"), "failed");

    let status = agent(workdir)
        .env("DATABASE_URL", url)
        .args(["db", "status", "--json"])
        .output()
        .unwrap();
    let status: Value = serde_json::from_str(&stdout(&status)).unwrap();
    assert_eq!(status["documents"], 2);
    assert_eq!(status["embedding_model"], "local-hash-v1");
    assert_eq!(status["embedding_dim"], 64);

    let mismatch = agent(workdir)
        .env("DATABASE_URL", url)
        .env("EMBEDDING_DIM", "32")
        .args(["ingest", "docs"])
        .output()
        .unwrap();
    // Another embedding dimension is the caller's to fix: a usage error.
    assert_eq!(mismatch.status.code(), Some(2));
    assert!(
        stderr(&mismatch).contains("db reset"),
        "{}",
        stderr(&mismatch)
    );
}

#[test]
fn ingest_lifecycle_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("kb.sqlite").display());
    ingest_lifecycle(dir.path(), &url);
}

#[tokio::test(flavor = "multi_thread")]
async fn ingest_lifecycle_on_postgres() {
    let Some(db) = TestDatabase::create().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let url = db.url.clone();
    let path = dir.path().to_path_buf();
    tokio::task::spawn_blocking(move || ingest_lifecycle(&path, &url))
        .await
        .unwrap();
    db.drop_now().await;
}

fn concurrent_ingests(workdir: &Path, url: &str) {
    concurrent_ingests_of(workdir, url, 30, true);
}

/// Two ingests of `pages` pages at once; with `migrate_first` false both start on an empty
/// store and race on the schema too (at 100 pages and more, on the bulk-load index as well).
fn concurrent_ingests_of(workdir: &Path, url: &str, pages: u64, migrate_first: bool) {
    for i in 0..pages {
        write(
            &workdir.join(format!("docs/page-{i}.md")),
            &format!("# Page {i}\n\nText of page {i}.\n"),
        );
    }
    if migrate_first {
        let migrate = agent(workdir)
            .env("DATABASE_URL", url)
            .env("EMBEDDING_DIM", "64")
            .args(["db", "migrate"])
            .output()
            .unwrap();
        assert!(migrate.status.success(), "{}", stderr(&migrate));
    }
    let spawn = || {
        agent(workdir)
            .env("DATABASE_URL", url)
            .env("EMBEDDING_DIM", "64")
            .args(["ingest", "--json", "docs"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    assert!(a.status.success(), "{}", stderr(&a));
    assert!(b.status.success(), "{}", stderr(&b));
    let added = |o: &std::process::Output| {
        serde_json::from_str::<Value>(&stdout(o)).unwrap()["added"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(
        added(&a) + added(&b),
        pages,
        "each page is added exactly once"
    );
    let status = agent(workdir)
        .env("DATABASE_URL", url)
        .args(["db", "status", "--json"])
        .output()
        .unwrap();
    let status: Value = serde_json::from_str(&stdout(&status)).unwrap();
    assert_eq!(status["documents"], pages);
}

#[test]
fn two_ingests_at_once_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("kb.sqlite").display());
    concurrent_ingests(dir.path(), &url);
}

#[tokio::test(flavor = "multi_thread")]
async fn two_ingests_at_once_on_postgres() {
    let Some(db) = TestDatabase::create().await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (url, path) = (db.url.clone(), dir.path().to_path_buf());
    tokio::task::spawn_blocking(move || concurrent_ingests(&path, &url))
        .await
        .unwrap();
    db.drop_now().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn two_first_ingests_into_an_empty_postgres_store() {
    for _round in 0..2 {
        let Some(db) = TestDatabase::create().await else {
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let (url, path) = (db.url.clone(), dir.path().to_path_buf());
        tokio::task::spawn_blocking(move || concurrent_ingests_of(&path, &url, 120, false))
            .await
            .unwrap();
        db.drop_now().await;
    }
}

#[test]
fn a_missing_path_fails_alone_and_the_others_are_ingested() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("kb.sqlite").display());
    let run = ingest(dir.path(), &url, &["no-such-folder"]);
    assert_eq!(run.code, 2, "nothing to read is a usage error");
    assert!(
        run.stderr.contains("no such file or folder"),
        "{}",
        run.stderr
    );

    write(
        &dir.path().join("docs/page.md"),
        "# Page\n\nSome text about sensors.\n",
    );
    let run = ingest(dir.path(), &url, &["no-such-folder", "docs"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(count(&run, "added"), 1);
    assert_eq!(count(&run, "failed"), 1);
    assert!(
        run.summary.to_string().contains("no-such-folder"),
        "{}",
        run.summary
    );
}

/// Ingest stores exactly the chunks `Chunker::chunk` makes, normalisation included: CRLF line
/// ends and a closing fence followed by a tab (which pulldown-cmark alone would not close).
#[tokio::test]
async fn ingest_stores_what_the_chunker_shows() {
    use crowdvision_agent::retrieval::chunk::Chunker;
    use crowdvision_agent::retrieval::embed::LocalEmbedder;
    use crowdvision_agent::retrieval::ingest::{IngestOptions, Ingestor, NoProgress};
    use crowdvision_agent::retrieval::store::{sqlite::SqliteStore, ChunkStore};
    use std::sync::Arc;

    let dir = tempfile::tempdir().unwrap();
    let text = "# Setup\r\n\r\nRun this:\r\n\r\n```\r\nmake install\r\n```\t\r\n\r\n## After\r\n\r\nDone.\r\n";
    write(&dir.path().join("docs/setup.md"), text);
    let store = Arc::new(
        SqliteStore::open(&dir.path().join("kb.sqlite"))
            .await
            .unwrap(),
    );
    store.migrate(16).await.unwrap();
    let chunker = Chunker::new(Default::default());
    let ingestor = Ingestor {
        store: store.clone(),
        embedder: Arc::new(LocalEmbedder::new(16)),
        chunker: chunker.clone(),
    };
    let options = IngestOptions {
        roots: vec![dir.path().join("docs")],
        prune: false,
        dry_run: false,
        require_permissions: false,
        docs_root: None,
        max_source_bytes: crowdvision_agent::retrieval::ingest::DEFAULT_MAX_SOURCE_BYTES,
    };
    ingestor.run(&options, &NoProgress).await.unwrap();
    let stored: Vec<String> = sqlx::query_scalar("SELECT text FROM chunks ORDER BY ordinal")
        .fetch_all(store.pool())
        .await
        .unwrap();
    let expected: Vec<String> = chunker
        .chunk(text)
        .unwrap()
        .chunks
        .into_iter()
        .map(|c| c.text)
        .collect();
    assert_eq!(stored, expected);
    assert!(stored.iter().all(|t| !t.contains('\r')));
    assert!(
        stored.iter().any(|t| t.starts_with("## After")),
        "the fence closed: {stored:?}"
    );
}
