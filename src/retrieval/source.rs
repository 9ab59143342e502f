//! Markdown sources on disk: which files under the given roots are documents, the name each is
//! stored under, and the directory-level permission defaults (`_permissions.yaml`).
//!
//! A document's permissions are its front matter's `permissions` when present (an empty list
//! means public), else those of the nearest `_permissions.yaml` between its folder and the root,
//! else none (public). Every entry must be a known role or `domain:NAME`.

use crate::auth::RoleHierarchy;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub const EXTENSIONS: [&str; 4] = ["md", "markdown", "qmd", "qd"];
pub const PERMISSIONS_FILE: &str = "_permissions.yaml";

#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("{path}: {message}")]
    Unreadable { path: PathBuf, message: String },
    #[error("{path}: invalid permission {permission:?}: expected a role ({roles}) or domain:NAME")]
    InvalidPermission {
        path: PathBuf,
        permission: String,
        roles: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    /// The name the document is stored under: its canonical path relative to the
    /// knowledge-base root, with `/`.
    pub source: String,
    /// The canonical path (symlinks resolved).
    pub path: PathBuf,
    /// The nearest directory default, if any.
    pub default_permissions: Option<Vec<String>>,
    /// The text itself for a document that arrived inline (`POST /ingest`); `None` = read `path`.
    pub inline: Option<String>,
}

/// Longest inline source name.
const MAX_INLINE_NAME_CHARS: usize = 200;

impl SourceFile {
    /// An inline document named `source` (a relative `.md` path of plain segments), with the
    /// permissions its request stated.
    pub fn inline(
        source: &str,
        content: String,
        permissions: Vec<String>,
    ) -> Result<SourceFile, String> {
        let plain_segments = source
            .split('/')
            .all(|segment| !segment.is_empty() && segment != "." && segment != "..");
        let plain_characters = source
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/".contains(c));
        if !(plain_segments && plain_characters && is_document(Path::new(source)))
            || source.chars().count() > MAX_INLINE_NAME_CHARS
        {
            return Err(format!(
                "{:?} is not a usable source name: a relative path of letters, digits, . _ - and /, \
                 ending in .md",
                source.chars().take(MAX_INLINE_NAME_CHARS).collect::<String>()
            ));
        }
        Ok(SourceFile {
            source: source.to_string(),
            path: PathBuf::from(source),
            default_permissions: Some(permissions),
            inline: Some(content),
        })
    }
}

/// What one run found: the documents, the problems, and the part of the knowledge base each
/// given path covers (what `--prune` may touch).
#[derive(Debug, Default)]
pub struct Discovery {
    pub files: Vec<SourceFile>,
    pub errors: Vec<SourceError>,
    pub scopes: Vec<Scope>,
    /// The canonical folders given as roots that lay inside no known knowledge-base root:
    /// new roots, for later runs to name their files under.
    pub new_roots: Vec<PathBuf>,
}

/// The stored sources one given path speaks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// Every source under this folder prefix (`""` = the whole root, else `user/`).
    Folder(String),
    /// Exactly this source.
    File(String),
}

impl Scope {
    pub fn covers(&self, source: &str) -> bool {
        match self {
            Scope::Folder(prefix) => source.starts_with(prefix.as_str()),
            Scope::File(name) => source == name,
        }
    }
}

/// Every document file under the roots (a root may also be a single file), sorted by source,
/// each root being its own knowledge-base root.
pub fn discover(roots: &[PathBuf]) -> (Vec<SourceFile>, Vec<SourceError>) {
    let found = discover_under(roots, &[]);
    (found.files, found.errors)
}

/// Every document under `paths`, named and permissioned by its canonical location under the
/// outermost knowledge-base root of `kb_roots` that holds it; a path outside all of them is its
/// own root (a file: its folder). Only regular files inside their root are documents: a symlink
/// may point elsewhere inside the root, never outside it, and loops are reported. The same
/// document reached twice (through a symlink) is listed once.
pub fn discover_under(paths: &[PathBuf], kb_roots: &[PathBuf]) -> Discovery {
    let mut found = Discovery::default();
    let kb_roots: Vec<PathBuf> = kb_roots
        .iter()
        .filter_map(|r| r.canonicalize().ok())
        .collect();
    for path in paths {
        let is_dir = path.is_dir();
        // A file's root comes from the folder it was named in, never from where a link leads.
        let given_folder = match path.parent() {
            _ if is_dir => path.as_path(),
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        let folder = match given_folder.canonicalize() {
            Ok(folder) => folder,
            Err(e) => {
                found.errors.push(unreadable(path, &e.to_string()));
                continue;
            }
        };
        // The outermost known root that holds the folder; else the folder is its own root.
        let known = kb_roots
            .iter()
            .filter(|kb| folder.starts_with(kb))
            .min_by_key(|kb| kb.components().count());
        let root = match known {
            Some(kb) => kb.clone(),
            None => {
                if is_dir {
                    found.new_roots.push(folder.clone());
                }
                folder.clone()
            }
        };
        let mut defaults = DirectoryDefaults::default();
        if !is_dir {
            let named = folder.join(path.file_name().unwrap_or_default());
            found.scopes.push(Scope::File(relative_name(&root, &named)));
            if let Some(file) = checked_file(&root, path, &mut defaults, &mut found.errors) {
                found.files.push(file);
            }
            continue;
        }
        let canonical = folder;
        let prefix = relative_name(&root, &canonical);
        found.scopes.push(Scope::Folder(if prefix.is_empty() {
            prefix
        } else {
            format!("{prefix}/")
        }));
        walk(&root, &canonical, &mut defaults, &mut found);
    }
    found.files.sort_by(|a, b| a.source.cmp(&b.source));
    found.files.dedup_by(|a, b| a.source == b.source);
    found
}

fn walk(root: &Path, folder: &Path, defaults: &mut DirectoryDefaults, found: &mut Discovery) {
    let walker = walkdir::WalkDir::new(folder)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'));
    for entry in walker {
        match entry {
            Ok(entry) if !entry.file_type().is_dir() && is_document(entry.path()) => {
                if let Some(file) = checked_file(root, entry.path(), defaults, &mut found.errors) {
                    found.files.push(file);
                }
            }
            Ok(_) => {}
            Err(error) => found.errors.push(unreadable(
                error.path().unwrap_or(folder),
                &if error.loop_ancestor().is_some() {
                    "a symbolic link loops back to a folder above it".to_string()
                } else {
                    error.to_string()
                },
            )),
        }
    }
}

/// A document at `path` when its canonical location is a regular file inside `root`.
fn checked_file(
    root: &Path,
    path: &Path,
    defaults: &mut DirectoryDefaults,
    errors: &mut Vec<SourceError>,
) -> Option<SourceFile> {
    let canonical = match path.canonicalize() {
        Ok(canonical) => canonical,
        Err(e) => {
            errors.push(unreadable(path, &e.to_string()));
            return None;
        }
    };
    if !canonical.starts_with(root) {
        errors.push(unreadable(
            path,
            &format!(
                "refused: it resolves to {}, outside the knowledge-base root {}",
                canonical.display(),
                root.display()
            ),
        ));
        return None;
    }
    match std::fs::metadata(&canonical) {
        Ok(metadata) if metadata.is_file() => {}
        Ok(_) => {
            errors.push(unreadable(path, "refused: not a regular file"));
            return None;
        }
        Err(e) => {
            errors.push(unreadable(path, &e.to_string()));
            return None;
        }
    }
    match defaults.for_file(root, &canonical) {
        Ok(default_permissions) => Some(SourceFile {
            source: relative_name(root, &canonical),
            path: canonical,
            default_permissions,
            inline: None,
        }),
        Err(error) => {
            errors.push(error);
            None
        }
    }
}

fn unreadable(path: &Path, message: &str) -> SourceError {
    SourceError::Unreadable {
        path: path.to_path_buf(),
        message: message.to_string(),
    }
}

pub fn is_document(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

fn relative_name(root: &Path, path: &Path) -> String {
    let relative = path.strip_prefix(root).unwrap_or(path);
    relative
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Checks every entry of a permission list.
pub fn validate_permissions(path: &Path, permissions: &[String]) -> Result<(), SourceError> {
    let roles = RoleHierarchy::shipped();
    for permission in permissions {
        let valid = match permission.strip_prefix("domain:") {
            Some(domain) => !domain.trim().is_empty() && !domain.contains(char::is_whitespace),
            None => roles.is_known(permission),
        };
        if !valid {
            return Err(SourceError::InvalidPermission {
                path: path.to_path_buf(),
                permission: permission.clone(),
                roles: roles.names().collect::<Vec<_>>().join(", "),
            });
        }
    }
    Ok(())
}

/// The list a `_permissions.yaml` holds. A misspelt key, a null, an empty file or anything but
/// a list of strings is an error saying what was expected.
pub fn parse_permissions_file(text: &str) -> Result<Vec<String>, String> {
    let text = crate::text::strip_invisible(text);
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(&text);
    serde_yaml::from_str::<PermissionsFile>(text)
        .map(|parsed| parsed.permissions)
        .map_err(|e| {
            format!(
                "{e}; expected `permissions: [ROLE or domain:NAME, ...]` (`permissions: []` for \
                 public)"
            )
        })
}

/// `_permissions.yaml` files read once per folder.
#[derive(Default)]
struct DirectoryDefaults {
    by_folder: HashMap<PathBuf, Option<Vec<String>>>,
}

/// `permissions:` is required and must be a list: a misspelt key, a null or an empty file is
/// an error, never "public".
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PermissionsFile {
    permissions: Vec<String>,
}

impl DirectoryDefaults {
    fn for_file(&mut self, root: &Path, file: &Path) -> Result<Option<Vec<String>>, SourceError> {
        let mut folder = file.parent();
        while let Some(dir) = folder {
            if let Some(found) = self.read(dir)? {
                return Ok(Some(found));
            }
            if dir == root {
                break;
            }
            folder = dir.parent();
        }
        Ok(None)
    }

    fn read(&mut self, dir: &Path) -> Result<Option<Vec<String>>, SourceError> {
        if let Some(cached) = self.by_folder.get(dir) {
            return Ok(cached.clone());
        }
        let path = dir.join(PERMISSIONS_FILE);
        let found = match std::fs::read_to_string(&path) {
            Ok(text) => {
                let permissions =
                    parse_permissions_file(&text).map_err(|message| SourceError::Unreadable {
                        path: path.clone(),
                        message,
                    })?;
                validate_permissions(&path, &permissions)?;
                Some(permissions)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                return Err(SourceError::Unreadable {
                    path,
                    message: e.to_string(),
                })
            }
        };
        self.by_folder.insert(dir.to_path_buf(), found.clone());
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn finds_documents_with_relative_names_and_nearest_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(&root.join("user/a.md"), "# A");
        write(
            &root.join("staff/_permissions.yaml"),
            "permissions: [business_staff]\n",
        );
        write(&root.join("staff/b.markdown"), "# B");
        write(&root.join("staff/deep/c.qmd"), "# C");
        write(&root.join("staff/notes.txt"), "not a document");
        write(&root.join(".hidden/d.md"), "# D");
        let (files, errors) = discover(&[root.to_path_buf()]);
        assert!(errors.is_empty(), "{errors:?}");
        let names: Vec<&str> = files.iter().map(|f| f.source.as_str()).collect();
        assert_eq!(names, ["staff/b.markdown", "staff/deep/c.qmd", "user/a.md"]);
        assert_eq!(
            files[1].default_permissions,
            Some(vec!["business_staff".to_string()])
        );
        assert_eq!(files[2].default_permissions, None);
    }

    #[test]
    fn invalid_directory_permissions_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        write(
            &dir.path().join("x/_permissions.yaml"),
            "permissions: [wizard]\n",
        );
        write(&dir.path().join("x/a.md"), "# A");
        let (files, errors) = discover(&[dir.path().to_path_buf()]);
        assert!(files.is_empty());
        assert!(matches!(errors[0], SourceError::InvalidPermission { .. }));
    }

    #[test]
    fn permission_entries_are_checked() {
        let path = Path::new("x.md");
        assert!(validate_permissions(path, &["admin".into(), "domain:acme".into()]).is_ok());
        assert!(validate_permissions(path, &["domain:".into()]).is_err());
        assert!(validate_permissions(path, &["root".into()]).is_err());
    }
}
