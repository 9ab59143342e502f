//! Helpers shared by the integration tests: the binary, scratch folders, fresh databases.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// Variables of the host that must not leak into a test run of the binary.
const HOST_VARIABLES: &[&str] = &[
    "OPENROUTER_API_KEY",
    "LLM_API_KEY",
    "DEEPSEEK_API_KEY",
    "GOOGLE_API_KEY",
    "DATABASE_URL",
    "EMBEDDING_PROVIDER",
    "EMBEDDING_MODEL",
    "EMBEDDING_DIM",
    "CHUNK_SIZE_UNIT",
    "CHUNK_TARGET",
    "CHUNK_MAX",
    "REQUIRE_PERMISSIONS",
    "REQUIRE_AUTH",
    "RERANKER",
];

/// The binary, run in `dir` (so no `.env` of the repository is read) with a clean environment.
pub fn agent(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_crowdvision-agent"));
    // The answer history stays in the test's folder, never in the user's data directory.
    command
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env("HISTORY_FILE", dir.join("history.jsonl"));
    for var in HOST_VARIABLES {
        command.env_remove(var);
    }
    command
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared/corpus` beside the repository (present in CI and on developer machines).
pub fn shared_corpus() -> Option<PathBuf> {
    let path = repo_root().join("../shared/corpus");
    if path.is_dir() {
        Some(path)
    } else if in_ci() {
        panic!("../shared/corpus is missing and CI=true: the corpus tests cannot run");
    } else {
        skipped("corpus tests", "../shared/corpus not found");
        None
    }
}

/// A port nothing listens on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits (at most 20 s) until `url` answers with a success status.
pub async fn wait_until_up(url: &str) {
    let client = crowdvision_agent::http::client_builder().build().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::time::Instant::now() < deadline {
        if let Ok(response) = client.get(url).send().await {
            if response.status().is_success() {
                return;
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("{url} did not come up");
}

/// A child process, killed when the test ends however it ends.
pub struct Running(pub std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Says once per group, where it is seen, that a group of tests is being skipped and why.
/// Written to the process's stderr directly: cargo's capture hides `eprintln!` of passing tests.
pub fn skipped(group: &str, why: &str) {
    static SAID: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
    if !said.iter().any(|g| g == group) {
        said.push(group.to_string());
        let line = format!(
            "\nSKIPPED {group}: {why} (they pass without running; with CI=true they fail instead)\n"
        );
        let _ = std::io::stderr().write_all(line.as_bytes());
    }
}

/// The Python of `target/venv` (the official client SDKs, from `scripts/provision-python`);
/// `None`, said once for `group`, when it is missing outside CI. Under CI a missing venv fails.
pub fn client_python(group: &str) -> Option<PathBuf> {
    let python = repo_root().join("target/venv/bin/python");
    if python.exists() {
        return Some(python);
    }
    assert!(
        !in_ci(),
        "target/venv is missing and CI=true (scripts/provision-python)"
    );
    skipped(
        group,
        "target/venv is missing (scripts/provision-python makes it)",
    );
    None
}

/// The chunk id of the first passage of a `search_docs` result as the model is sent it
/// (`[^id] (page › section)` lines of text).
pub fn first_passage_id(tool_content: &str) -> Option<String> {
    let start = tool_content.find("[^")? + 2;
    let end = start + tool_content[start..].find(']')?;
    Some(tool_content[start..end].to_string())
}

pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Whether a server answers at `url`, found out once per run with one short connection
/// attempt: tests that need it skip (or fail) at once instead of each waiting for a pool's
/// acquire timeout.
async fn postgres_reachable(url: &str) -> Result<(), String> {
    static VERDICT: OnceLock<Result<(), String>> = OnceLock::new();
    if let Some(verdict) = VERDICT.get() {
        return verdict.clone();
    }
    let attempt = tokio::time::timeout(
        std::time::Duration::from_secs(3),
        <sqlx::PgConnection as sqlx::Connection>::connect(url),
    )
    .await;
    let verdict = match attempt {
        Ok(Ok(connection)) => {
            let _ = sqlx::Connection::close(connection).await;
            Ok(())
        }
        Ok(Err(error)) => Err(error.to_string()),
        Err(_) => Err("no answer within 3 s".to_string()),
    };
    VERDICT.get_or_init(|| verdict).clone()
}

/// A fresh, empty Postgres database for one test; dropped by [`TestDatabase::drop_now`].
pub struct TestDatabase {
    pub url: String,
    name: String,
    admin_url: String,
}

static COUNTER: AtomicUsize = AtomicUsize::new(0);

impl TestDatabase {
    pub async fn create() -> Option<TestDatabase> {
        let admin_url = std::env::var("TEST_POSTGRES_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_string());
        if let Err(error) = postgres_reachable(&admin_url).await {
            if in_ci() {
                panic!("Postgres is not reachable at {admin_url} and CI=true: {error}");
            }
            skipped(
                "Postgres tests",
                &format!(
                    "no server at {admin_url} ({error}); scripts/provision-postgres starts one"
                ),
            );
            return None;
        }
        let admin = sqlx::PgPool::connect(&admin_url).await.unwrap();
        let name = format!(
            "cv_test_{}_{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::SeqCst)
        );
        sqlx::query(&format!("DROP DATABASE IF EXISTS {name}"))
            .execute(&admin)
            .await
            .unwrap();
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&admin)
            .await
            .unwrap();
        admin.close().await;
        let url = match admin_url.rsplit_once('/') {
            Some((base, _)) => format!("{base}/{name}"),
            None => panic!("TEST_POSTGRES_URL needs a database path"),
        };
        Some(TestDatabase {
            url,
            name,
            admin_url,
        })
    }

    pub async fn drop_now(self) {
        if let Ok(admin) = sqlx::PgPool::connect(&self.admin_url).await {
            let _ = sqlx::query(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ))
            .execute(&admin)
            .await;
        }
    }
}
