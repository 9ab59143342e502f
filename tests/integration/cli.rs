//! The command-line surface as a user meets it: exit codes, configuration errors,
//! `chunk --json`, and the committed generated files.

use crate::util::{agent, repo_root, stderr, stdout, write};

#[test]
fn invalid_configuration_exits_2_naming_the_variable() {
    let dir = tempfile::tempdir().unwrap();
    let output = agent(dir.path())
        .env("MAX_TOOL_HOPS", "99")
        .args(["db", "status"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("MAX_TOOL_HOPS"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn dot_env_in_the_working_directory_is_read() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join(".env"), "LOG_FORMAT=yaml\n");
    let output = agent(dir.path()).args(["db", "status"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("LOG_FORMAT"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn config_file_is_read() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("agent.yaml"), "RRF_K: 0\n");
    let output = agent(dir.path())
        .args(["--config", "agent.yaml", "db", "status"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("RRF_K"), "{}", stderr(&output));
}

#[test]
fn usage_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let output = agent(dir.path()).arg("no-such-command").output().unwrap();
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn chunk_json_prints_one_object_a_line() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("guide.md"),
        "---\ntitle: Guide\n---\n# Guide\n\nIntro.\n\n## Sensors\n\n```yaml\nco2: ppm\n```\n",
    );
    let output = agent(dir.path())
        .args(["chunk", "guide.md", "--json"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let lines: Vec<serde_json::Value> = stdout(&output)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["source"], "guide.md");
    assert_eq!(lines[1]["ordinal"], 1);
    assert_eq!(lines[1]["section"], "Guide > Sensors");
    assert_eq!(
        lines[1]["kind"], "code",
        "a heading does not make a code chunk mixed"
    );
    assert!(lines[1]["tokens"].as_u64().unwrap() > 3);
    assert!(lines[1]["text"].as_str().unwrap().contains("co2: ppm"));
    assert!(
        !stdout(&output).contains("title: Guide"),
        "front matter is not chunk text"
    );
}

#[test]
fn chunk_reports_bad_files_and_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("bad.md"), "---\ntags: [x\n---\n# Bad\n");
    write(&dir.path().join("good.md"), "# Good\n\ntext\n");
    let output = agent(dir.path())
        .args(["chunk", "bad.md", "good.md", "--json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("bad.md"));
    assert_eq!(stdout(&output).lines().count(), 1);
}

#[test]
fn committed_completions_and_man_page_are_current() {
    let dir = tempfile::tempdir().unwrap();
    let root = repo_root();
    let mut checks: Vec<(Vec<&str>, std::path::PathBuf)> =
        ["bash", "zsh", "fish", "elvish", "powershell"]
            .iter()
            .map(|shell| {
                (
                    vec!["completions", *shell],
                    root.join(format!("completions/crowdvision-agent.{shell}")),
                )
            })
            .collect();
    checks.push((vec!["man"], root.join("man/crowdvision-agent.1")));
    // Every subcommand the top page names under SEE ALSO has its page committed.
    let top = stdout(&agent(dir.path()).arg("man").output().unwrap());
    let subcommands: Vec<String> = top
        .split("\\fBcrowdvision-agent-")
        .skip(1)
        .filter_map(|rest| rest.split_once("\\fR").map(|(name, _)| name.to_string()))
        .collect();
    assert!(subcommands.len() >= 12, "{subcommands:?}");
    let committed_pages = std::fs::read_dir(root.join("man")).unwrap().count();
    assert_eq!(
        committed_pages,
        subcommands.len() + 1,
        "a page too many or too few in man/"
    );
    for name in &subcommands {
        let page = root.join(format!("man/crowdvision-agent-{name}.1"));
        assert!(page.is_file(), "{} is missing", page.display());
    }
    let sub_checks: Vec<(Vec<String>, std::path::PathBuf)> = subcommands
        .iter()
        .map(|name| {
            (
                vec!["man".to_string(), name.clone()],
                root.join(format!("man/crowdvision-agent-{name}.1")),
            )
        })
        .collect();
    for (args, path) in &sub_checks {
        let output = agent(dir.path()).args(args).output().unwrap();
        let committed = std::fs::read_to_string(path).unwrap_or_default();
        assert!(stdout(&output).contains("EXIT STATUS"));
        assert!(
            stdout(&output) == committed,
            "{} is stale: regenerate with `scripts/generate` and commit it",
            path.display()
        );
    }
    for (args, path) in checks {
        let output = agent(dir.path()).args(&args).output().unwrap();
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            stdout(&output) == committed,
            "{} is stale: regenerate with `scripts/generate` and commit it",
            path.display()
        );
    }
}

/// `… | head` closes the pipe early: the command stops quietly instead of panicking.
#[test]
fn a_closed_stdout_ends_commands_quietly() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("docs/a.md"),
        "# A\n\nSome words about rooms.\n",
    );
    let db = format!("sqlite://{}", dir.path().join("kb.sqlite").display());
    let ingest = agent(dir.path())
        .env("DATABASE_URL", &db)
        .args(["ingest", "docs"])
        .output()
        .unwrap();
    assert!(ingest.status.success(), "{}", stderr(&ingest));
    let commands: [&[&str]; 7] = [
        &["chunk", "docs", "--json"],
        &["completions", "bash"],
        &["man"],
        &["tools", "list"],
        &["search", "rooms"],
        &["search", "rooms", "--json"],
        &["ingest", "docs", "--json"],
    ];
    for args in commands {
        let mut child = agent(dir.path())
            .env("DATABASE_URL", &db)
            .env("REQUIRE_AUTH", "false")
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take()); // the reader is gone before anything is written
        let output = child.wait_with_output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "{args:?}: {}",
            stderr(&output)
        );
        assert!(!stderr(&output).contains("panicked"), "{args:?}");
    }
}

/// Arguments, settings, and the exit code they must give.
type ExitCase<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], i32);

/// Exit codes as the README promises them: 0 success, 1 failure, 2 usage or configuration.
#[test]
fn exit_codes_follow_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        &root.join("docs/page.md"),
        "# Page\n\nSome text about sensors.\n",
    );
    write(
        &root.join("broken/bad.md"),
        "---\npermissions: [\n---\n# Bad\n",
    );
    write(
        &root.join("staff.json"),
        r#"{"sub":"s","roles":["business_staff"]}"#,
    );
    write(&root.join("garbage.json"), "not claims at all");
    let db = format!("sqlite://{}", root.join("kb.sqlite").display());
    let ingest = agent(root)
        .env("DATABASE_URL", &db)
        .env("EMBEDDING_DIM", "64")
        .args(["ingest", "docs"])
        .output()
        .unwrap();
    assert!(ingest.status.success(), "{}", stderr(&ingest));
    let table: &[ExitCase] = &[
        (&["chunk", "docs/page.md", "--json"], &[], 0),
        (
            &["search", "sensors", "--claims", "staff.json"],
            &[("EMBEDDING_DIM", "64")],
            0,
        ),
        (&["ingest", "broken"], &[("EMBEDDING_DIM", "64")], 1),
        (&["search", "sensors"], &[("EMBEDDING_DIM", "64")], 2),
        (
            &["search", "sensors", "--claims", "missing.json"],
            &[("EMBEDDING_DIM", "64")],
            2,
        ),
        (
            &["search", "sensors", "--claims", "garbage.json"],
            &[("EMBEDDING_DIM", "64")],
            2,
        ),
        (
            &[
                "search",
                "sensors",
                "--claims",
                "staff.json",
                "--token",
                "x.y.z",
            ],
            &[("EMBEDDING_DIM", "64")],
            2,
        ),
        (
            &["tools", "call", "search_docs", "--args", "{not json"],
            &[("EMBEDDING_DIM", "64"), ("REQUIRE_AUTH", "false")],
            2,
        ),
        (&["chunk", "docs/page.md", "--target", "10"], &[], 2),
        (
            &["search", "sensors", "--claims", "staff.json"],
            &[("EMBEDDING_DIM", "128")],
            2,
        ),
        (&["ingest", "docs"], &[("EMBEDDING_DIM", "128")], 2),
        // One missing path among others fails alone; only missing paths is a usage error.
        (
            &["ingest", "nowhere", "docs"],
            &[("EMBEDDING_DIM", "64")],
            1,
        ),
        (&["ingest", "nowhere"], &[("EMBEDDING_DIM", "64")], 2),
        (&["search"], &[], 2),
        (&["search", " "], &[("EMBEDDING_DIM", "64")], 2),
        (
            &["search", "sensors", "-k", "0"],
            &[("EMBEDDING_DIM", "64")],
            2,
        ),
        (
            &["search", "sensors", "-k", "51"],
            &[("EMBEDDING_DIM", "64")],
            2,
        ),
        (&["ask", "hello", "--top-k", "0"], &[], 2),
        (&["search", "x"], &[("EMBEDDING_DIM", "0")], 2),
    ];
    // Looking at a store that is not there says so and creates nothing.
    let missing = root.join("nothing-here.sqlite");
    let status = agent(root)
        .env("DATABASE_URL", format!("sqlite://{}", missing.display()))
        .args(["db", "status"])
        .output()
        .unwrap();
    assert_eq!(status.status.code(), Some(1));
    assert!(
        stderr(&status).contains("crowdvision-agent ingest"),
        "{}",
        stderr(&status)
    );
    assert!(!missing.exists());
    // A refused PostgreSQL connection fails at once, naming where it looked.
    let refused = agent(root)
        .env("DATABASE_URL", "postgres://someone@127.0.0.1:1/kb")
        .args(["db", "status"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        stderr(&refused).contains("127.0.0.1:1"),
        "{}",
        stderr(&refused)
    );
    assert!(stderr(&refused).contains("refused"), "{}", stderr(&refused));
    for (args, env, expected) in table {
        let output = agent(root)
            .env("DATABASE_URL", &db)
            .envs(env.iter().copied())
            .args(*args)
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(*expected),
            "{args:?} {env:?}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn doctor_names_each_setting_source_and_checks_each_part() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(&root.join("settings.yaml"), "TOP_K_FINAL: 4\n");
    write(&root.join(".env"), "# local\nRRF_K=30\n");
    let doctor = |config: &str| {
        agent(root)
            .env("CHUNK_TARGET", "300")
            .env("EMBEDDING_PROVIDER", "local")
            .env("OPENROUTER_API_KEY", "sk-very-secret")
            .env("LLM_BASE_URL", "http://127.0.0.1:1/v1")
            .env("TWIN_SERVICE_URL", "http://127.0.0.1:1")
            .env(
                "DATABASE_URL",
                format!("sqlite://{}", root.join("none.sqlite").display()),
            )
            .args(["doctor", "--json", "--config", config])
            .output()
            .unwrap()
    };
    let output = doctor("settings.yaml");
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let setting = |name: &str| {
        report["settings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("{name} missing"))
            .clone()
    };
    assert_eq!(setting("CHUNK_TARGET")["origin"], "environment");
    assert_eq!(setting("TOP_K_FINAL")["value"], "4");
    assert_eq!(setting("TOP_K_FINAL")["origin"], "settings.yaml");
    assert_eq!(setting("RRF_K")["origin"], ".env");
    assert_eq!(setting("TOP_K_VECTOR")["origin"], "default");
    assert!(!stdout(&output).contains("sk-very-secret"));
    let check = |part: &str| {
        report["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["part"] == part)
            .unwrap()
            .clone()
    };
    assert_eq!(check("store")["ok"], false);
    assert!(check("store")["fix"].as_str().unwrap().contains("ingest"));
    assert_eq!(check("provider")["ok"], false);
    assert_eq!(
        check("embedder")["ok"],
        true,
        "the local embedder needs nothing"
    );
    assert!(check("twin-service")["fix"]
        .as_str()
        .unwrap()
        .contains("crowdvision-agent sim"));
    assert!(!root.join("none.sqlite").exists());

    // An unknown key in the settings file and a malformed .env line are errors naming them.
    write(&root.join("typo.yaml"), "TOP_K_FINAL: 4\nTOP_K_FNAL: 5\n");
    let typo = doctor("typo.yaml");
    assert_eq!(typo.status.code(), Some(2));
    assert!(
        stderr(&typo).contains("line 2: unknown setting TOP_K_FNAL"),
        "{}",
        stderr(&typo)
    );
    write(&root.join(".env"), "RRF_K=30\nthis is not a setting\n");
    let broken = doctor("settings.yaml");
    assert_eq!(broken.status.code(), Some(2));
    assert!(stderr(&broken).contains(".env"), "{}", stderr(&broken));
    assert!(stderr(&broken).contains("line 2"), "{}", stderr(&broken));
}

/// Every argument and option of every subcommand says what it is for.
#[test]
fn every_argument_is_described_in_help() {
    let dir = tempfile::tempdir().unwrap();
    let subcommands = [
        vec!["ingest"],
        vec!["chunk"],
        vec!["search"],
        vec!["ask"],
        vec!["chat"],
        vec!["eval"],
        vec!["serve"],
        vec!["sim"],
        vec!["doctor"],
        vec!["completions"],
        vec!["man"],
        vec!["tools", "list"],
        vec!["tools", "call"],
        vec!["db", "status"],
        vec!["db", "reset"],
    ];
    for args in subcommands {
        let output = agent(dir.path())
            .args(&args)
            .arg("--help")
            .output()
            .unwrap();
        let help = stdout(&output);
        let bare: Vec<&str> = help
            .lines()
            .filter(|line| {
                let words: Vec<&str> = line.split_whitespace().collect();
                let is_entry = line.starts_with("  ")
                    && words
                        .first()
                        .is_some_and(|w| w.starts_with('-') || w.starts_with('<'));
                // An entry whose every word is its flag or value name has no description.
                is_entry
                    && words.iter().all(|w| {
                        w.starts_with('-') || w.starts_with('<') || *w == "..." || w.ends_with(',')
                    })
            })
            .collect();
        assert!(bare.is_empty(), "{args:?}: undescribed {bare:?}\n{help}");
        assert!(help.contains("Global options:"), "{args:?}");
    }
}

/// A provider that is down: one warning naming where it was asked (the retries are quiet), and
/// the error says where too.
#[test]
fn a_provider_that_is_down_is_one_warning_and_an_error_naming_its_url() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("open.md"),
        "# Open\n\nThe lobby zebra display.\n",
    );
    let data = dir.path().join("data");
    let ingest = agent(dir.path())
        .env("XDG_DATA_HOME", &data)
        .args(["ingest", "open.md"])
        .output()
        .unwrap();
    assert!(ingest.status.success(), "{}", stderr(&ingest));
    let dead = format!("http://127.0.0.1:{}/v1", crate::util::free_port());
    let output = agent(dir.path())
        .env("XDG_DATA_HOME", &data)
        .env("REQUIRE_AUTH", "false")
        .env("LLM_API_KEY", "k")
        .env("LLM_BASE_URL", &dead)
        .env("LLM_MAX_RETRIES", "3")
        .args(["ask", "Where is the zebra display?"])
        .output()
        .unwrap();
    let err = stderr(&output);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert_eq!(err.matches("WARN").count(), 1, "{err}");
    assert!(
        err.contains("provider call failed") && err.contains(&dead),
        "{err}"
    );
    let last = err.lines().last().unwrap();
    assert!(last.starts_with("error:") && last.contains(&dead), "{err}");
}
