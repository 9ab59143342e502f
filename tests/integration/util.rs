//! Helpers shared by the integration tests: the binary, scratch folders, fresh databases.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

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
    command.current_dir(dir).env("NO_COLOR", "1");
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
        eprintln!("SKIPPED: ../shared/corpus not found");
        None
    }
}

pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
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
        let admin = match sqlx::PgPool::connect(&admin_url).await {
            Ok(pool) => pool,
            Err(error) if in_ci() => {
                panic!("Postgres is not reachable at {admin_url} and CI=true: {error}")
            }
            Err(error) => {
                eprintln!("SKIPPED: Postgres is not reachable at {admin_url}: {error}");
                return None;
            }
        };
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
