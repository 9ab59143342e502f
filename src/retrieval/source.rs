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
    /// The name the document is stored under: the path relative to its root, with `/`.
    pub source: String,
    pub path: PathBuf,
    /// The nearest directory default, if any.
    pub default_permissions: Option<Vec<String>>,
}

/// Every document file under the roots (a root may also be a single file), sorted by source.
/// Unreadable folders and invalid `_permissions.yaml` files are returned as errors beside the
/// files that could be found.
pub fn discover(roots: &[PathBuf]) -> (Vec<SourceFile>, Vec<SourceError>) {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for root in roots {
        if root.is_file() {
            let name = root.file_name().map(|n| n.to_string_lossy().into_owned());
            files.push(SourceFile {
                source: name.unwrap_or_else(|| root.display().to_string()),
                path: root.clone(),
                default_permissions: None,
            });
            continue;
        }
        let mut defaults = DirectoryDefaults::default();
        let walker = walkdir::WalkDir::new(root)
            .follow_links(true)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'));
        for entry in walker {
            match entry {
                Ok(entry) if entry.file_type().is_file() && is_document(entry.path()) => {
                    let path = entry.path().to_path_buf();
                    match defaults.for_file(root, &path) {
                        Ok(default_permissions) => files.push(SourceFile {
                            source: relative_name(root, &path),
                            path,
                            default_permissions,
                        }),
                        Err(error) => errors.push(error),
                    }
                }
                Ok(_) => {}
                Err(error) => errors.push(SourceError::Unreadable {
                    path: error.path().unwrap_or(root).to_path_buf(),
                    message: error.to_string(),
                }),
            }
        }
    }
    files.sort_by(|a, b| a.source.cmp(&b.source));
    (files, errors)
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

/// `_permissions.yaml` files read once per folder.
#[derive(Default)]
struct DirectoryDefaults {
    by_folder: HashMap<PathBuf, Option<Vec<String>>>,
}

#[derive(serde::Deserialize)]
struct PermissionsFile {
    #[serde(default)]
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
                let parsed: PermissionsFile =
                    serde_yaml::from_str(&text).map_err(|e| SourceError::Unreadable {
                        path: path.clone(),
                        message: format!("invalid YAML: {e}"),
                    })?;
                validate_permissions(&path, &parsed.permissions)?;
                Some(parsed.permissions)
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
