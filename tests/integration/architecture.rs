//! The shape of the code, read from `src/`: no import circle between modules; no source file
//! past 600 non-blank lines of code outside its tests, and no file of `src/` or `tests/`, tests
//! included, past 1,200 non-blank lines (ARCHITECTURE.md, "Size").

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The longest a source file may be, counted without its tests and blank lines.
const MAX_CODE_LINES: usize = 600;
/// The longest any Rust file of `src/` or `tests/` may be, tests included, without blank lines.
const MAX_FILE_LINES: usize = 1200;

/// Every Rust file below `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
    }
    found
}

/// Every source file of the library and binary, by module path (`agent::run`, `cli::ask`).
fn modules() -> BTreeMap<String, PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = BTreeMap::new();
    for path in rust_files(&root) {
        let relative = path.strip_prefix(&root).unwrap().with_extension("");
        let mut parts: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts.last().is_some_and(|p| p == "mod") {
            parts.pop();
        }
        if parts.as_slice() == ["lib"] || parts.as_slice() == ["main"] {
            parts.clear();
        }
        found.insert(parts.join("::"), path);
    }
    found
}

/// The text of a file without its inline test modules (`#[cfg(test)]` then `mod name {`, up
/// to the closing brace rustfmt puts alone at the start of a line). A `mod tests;`
/// declaration is not one: its file is counted on its own.
fn code_of(path: &Path) -> String {
    strip_test_modules(&std::fs::read_to_string(path).unwrap())
}

fn strip_test_modules(text: &str) -> String {
    let mut kept = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let opens_tests = line.trim() == "#[cfg(test)]"
            && lines
                .peek()
                .is_some_and(|next| next.starts_with("mod ") && next.trim_end().ends_with('{'));
        if opens_tests {
            for inner in lines.by_ref() {
                if inner == "}" {
                    break;
                }
            }
        } else {
            kept.push(line);
        }
    }
    kept.join("\n")
}

fn non_blank_lines(text: &str) -> usize {
    text.lines().filter(|line| !line.trim().is_empty()).count()
}

/// Paths named in `code`: every `crate::…` and `super::…`, with `use` groups expanded.
fn named_paths(code: &str) -> Vec<String> {
    let mut paths = Vec::new();
    let lines: Vec<&str> = code
        .lines()
        .map(|line| line.split("//").next().unwrap_or_default())
        .collect();
    let code = lines.join("\n");
    let mut statement: Option<String> = None;
    for line in code.lines() {
        let trimmed = line.trim_start();
        let opens = trimmed.starts_with("use ")
            || trimmed.starts_with("pub use ")
            || (trimmed.starts_with("pub(") && trimmed.contains(") use "));
        if statement.is_none() && opens {
            let at = trimmed.find("use ").unwrap_or(0) + 4;
            statement = Some(trimmed[at..].to_string());
        } else if let Some(text) = statement.as_mut() {
            text.push_str(trimmed);
        }
        if let Some(text) = statement.take_if(|text| text.contains(';')) {
            let end = text.find(';').unwrap_or(text.len());
            expand("", &text[..end], &mut paths);
        }
    }
    for prefix in ["crate::", "super::"] {
        let mut rest = code.as_str();
        while let Some(at) = rest.find(prefix) {
            let before = rest[..at].chars().last();
            let path: String = rest[at..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            if !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                paths.push(path.trim_end_matches(':').to_string());
            }
            rest = &rest[at + prefix.len()..];
        }
    }
    paths
}

/// `a::{b, c::{d, e}}` as `a::b`, `a::c::d`, `a::c::e`.
fn expand(prefix: &str, tree: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    match tree.find('{') {
        None => {
            let path = tree.split(" as ").next().unwrap_or_default().trim();
            out.push(format!("{prefix}{path}"));
        }
        Some(open) => {
            let head = &tree[..open];
            let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
            let mut depth = 0;
            let mut start = 0;
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        expand(&format!("{prefix}{head}"), &inner[start..i], out);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            if !inner[start..].trim().is_empty() {
                expand(&format!("{prefix}{head}"), &inner[start..], out);
            }
        }
    }
}

/// The module a path names from `module`: the deepest source file along it.
fn resolve(module: &str, path: &str, known: &BTreeMap<String, PathBuf>) -> Option<String> {
    let mut segments: Vec<&str> = if module.is_empty() {
        Vec::new()
    } else {
        module.split("::").collect()
    };
    let mut parts = path.split("::").peekable();
    match parts.peek() {
        Some(&"crate") => {
            segments.clear();
            parts.next();
        }
        Some(&"super") => {
            while parts.peek() == Some(&"super") {
                parts.next();
                segments.pop();
            }
        }
        _ => return None,
    }
    let mut found = None;
    for part in parts {
        segments.push(part);
        let candidate = segments.join("::");
        if known.contains_key(&candidate) {
            found = Some(candidate);
        } else {
            break;
        }
    }
    found
}

/// A module of tests (`…::tests` or inside one), compiled only for `cargo test`.
fn is_test_module(module: &str) -> bool {
    module.split("::").any(|part| part == "tests")
}

/// `child` is `ancestor` or inside it.
fn within(child: &str, ancestor: &str) -> bool {
    ancestor.is_empty() || child == ancestor || child.starts_with(&format!("{ancestor}::"))
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let known = modules();
    let mut edges = BTreeMap::new();
    for (module, path) in &known {
        if module.is_empty() || is_test_module(module) || module == "fuzz" {
            continue;
        }
        let targets: BTreeSet<String> = named_paths(&code_of(path))
            .iter()
            .filter_map(|named| resolve(module, named, &known))
            // A module sees its ancestors (what `super` is for); that is the tree, not a circle.
            .filter(|target| !within(module, target))
            .collect();
        edges.insert(module.clone(), targets);
    }
    edges
}

/// A circle through `start`, if any, as the modules along it.
fn circle_from(start: &str, edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    let mut stack = vec![(start.to_string(), vec![start.to_string()])];
    let mut seen = BTreeSet::new();
    while let Some((at, trail)) = stack.pop() {
        for next in edges.get(&at).into_iter().flatten() {
            if next == start {
                let mut circle = trail.clone();
                circle.push(start.to_string());
                return Some(circle);
            }
            if seen.insert(next.clone()) {
                let mut longer = trail.clone();
                longer.push(next.clone());
                stack.push((next.clone(), longer));
            }
        }
    }
    None
}

#[test]
fn no_module_imports_itself_through_others() {
    let edges = graph();
    assert!(edges.len() > 40, "the sources were found: {}", edges.len());
    assert!(
        edges["agent::answer"].contains("agent::run"),
        "imports are read: {:?}",
        edges["agent::answer"]
    );
    let circles: Vec<String> = edges
        .keys()
        .filter_map(|module| circle_from(module, &edges))
        .map(|circle| circle.join(" → "))
        .collect();
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
}

#[test]
fn the_config_module_imports_nothing_above_it() {
    let edges = graph();
    let allowed = ["auth::roles"];
    let above: Vec<&String> = edges["config"]
        .iter()
        .filter(|target| !target.starts_with("config") && !allowed.contains(&target.as_str()))
        .collect();
    assert!(above.is_empty(), "config imports {above:?}");
}

#[test]
fn no_source_file_is_past_600_lines_of_code() {
    let long: Vec<String> = modules()
        .iter()
        .filter(|(module, _)| !is_test_module(module))
        .map(|(_, path)| (path, non_blank_lines(&code_of(path))))
        .filter(|(_, lines)| *lines > MAX_CODE_LINES)
        .map(|(path, lines)| format!("{}: {lines}", path.display()))
        .collect();
    assert!(
        long.is_empty(),
        "files past {MAX_CODE_LINES} lines of code: {long:?}"
    );
}

#[test]
fn no_file_is_past_1200_lines_tests_included() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files: Vec<PathBuf> = ["src", "tests"]
        .iter()
        .flat_map(|dir| rust_files(&root.join(dir)))
        .collect();
    let seen = files.len();
    let long: Vec<String> = files
        .iter()
        .map(|path| {
            (
                path,
                non_blank_lines(&std::fs::read_to_string(path).unwrap()),
            )
        })
        .filter(|(_, lines)| *lines > MAX_FILE_LINES)
        .map(|(path, lines)| format!("{}: {lines}", path.display()))
        .collect();
    assert!(seen > 100, "the files were found: {seen}");
    assert!(
        long.is_empty(),
        "files past {MAX_FILE_LINES} lines: {long:?}"
    );
}

#[test]
fn test_modules_are_left_out_and_declarations_are_not() {
    let text = "fn a() {}\n\n#[cfg(test)]\nmod tests;\n\nfn b() {}\n\n#[cfg(test)]\nmod tests {\n    fn t() {}\n}\n";
    let code = strip_test_modules(text);
    assert!(code.contains("fn b()"), "{code}");
    assert!(code.contains("mod tests;"), "{code}");
    assert!(!code.contains("fn t()"), "{code}");
    let after = "#[cfg(test)]\nmod budget_tests {\n    fn t() {}\n}\n\nfn after() {}\n";
    assert!(strip_test_modules(after).contains("fn after()"));
}

#[test]
fn a_circle_is_found_when_there_is_one() {
    let mut edges = BTreeMap::new();
    edges.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    edges.insert("b".to_string(), BTreeSet::from(["c".to_string()]));
    edges.insert("c".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(
        circle_from("a", &edges),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
    edges.insert("c".to_string(), BTreeSet::new());
    assert_eq!(circle_from("a", &edges), None);
    let mut paths = Vec::new();
    expand("", "crate::agent::{run::{self, Step}, llm}", &mut paths);
    assert_eq!(
        paths,
        [
            "crate::agent::run::self",
            "crate::agent::run::Step",
            "crate::agent::llm"
        ]
    );
}
