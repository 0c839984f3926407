//! `include:`: a directory of YAML files whose `actions`, `dashboards` and `entities` are
//! appended to the main file's, file by file in name order. The files are read through a
//! closure (`source` passes one that reads the disk; tests pass their own), and a problem in
//! one is reported as `<dir>/<file>: <path>`. The overlay directory of `layers` is listed
//! the same way.

use std::path::{Path, PathBuf};

use super::checker::{Checker, Fields};
use super::tree::{self, Node, key_path};

/// Reads the YAML files of a directory (`include:`, `overlay:`): given the directory
/// (already resolved against the config's directory), the `(file name, text)` of every
/// `*.yml` / `*.yaml` in it, sorted by name; `None` when the directory does not exist; or
/// why it could not be read.
pub type IncludeReader<'a> = dyn Fn(&Path) -> Result<Option<Vec<(String, String)>>, Unread> + 'a;

/// Why a file or a directory the config names (`board:`, `overlay:`, `include:`) could not be
/// read. The system's own words are carried in an `io::Error`.
#[derive(Debug)]
pub enum Unread {
    /// The config was not loaded from a file (the embedded default, a text parsed alone), so
    /// it reads no other file.
    NoFile(PathBuf),
    /// The file could not be read: what the system or the regular-file check said.
    File(PathBuf, std::io::Error),
    /// Reading the file would take the config and its files past the most actiond reads
    /// together, this many MiB.
    OverTotal(PathBuf, u64),
    /// The directory could not be opened.
    Dir(PathBuf, std::io::Error),
    /// The directory could not be listed.
    List(PathBuf, std::io::Error),
    /// The directory holds more YAML files than this.
    TooMany(PathBuf, usize),
}

impl std::fmt::Display for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unread::NoFile(path) => write!(
                f,
                "cannot read {}: other files are only read when the config is loaded from a file",
                path.display()
            ),
            Unread::File(path, e) => write!(f, "cannot read {}: {e}", path.display()),
            Unread::OverTotal(path, mib) => write!(
                f,
                "cannot read {}: the config and the files it reads (board, overlay and include \
                 files) would hold more than {mib} MiB together, the most actiond reads",
                path.display()
            ),
            Unread::Dir(dir, e) => {
                write!(
                    f,
                    "cannot read the include directory {}: {e}",
                    dir.display()
                )
            }
            Unread::List(dir, e) => {
                write!(
                    f,
                    "cannot list the include directory {}: {e}",
                    dir.display()
                )
            }
            Unread::TooMany(dir, max) => write!(
                f,
                "the include directory {} holds more than {max} YAML files",
                dir.display()
            ),
        }
    }
}

impl std::error::Error for Unread {}

/// The keys read from an included file.
const READ: [&str; 3] = ["actions", "dashboards", "entities"];

/// The files of the directory `dir` (as written; `path` is the key's), each as its file name,
/// its label (`config.d/00-first.yml`) and its text. A directory that does not exist is an
/// error when `required`, and otherwise has no files.
pub(super) fn texts(
    c: &mut Checker<'_>,
    dir: &str,
    path: &str,
    reader: &IncludeReader<'_>,
    required: bool,
) -> Vec<(String, String, String)> {
    let resolved = c.resolve(dir);
    let files = match reader(&resolved) {
        Ok(Some(files)) => files,
        Ok(None) if !required => return Vec::new(),
        Ok(None) => {
            c.error(
                path,
                format!(
                    "cannot read the include directory {}: it does not exist",
                    resolved.display()
                ),
            );
            return Vec::new();
        }
        Err(why) => {
            c.error(path, why.to_string());
            return Vec::new();
        }
    };
    files
        .into_iter()
        .map(|(name, text)| {
            let label = format!("{}/{}", dir.trim_end_matches('/'), name);
            (name, label, text)
        })
        .collect()
}

/// Reads and parses the files of the `include:` directory `dir` (as written; `path` is the
/// key's); each comes back with its label (`config.d/00-first.yml`) and its interpolated tree.
pub(super) fn read(
    c: &mut Checker<'_>,
    dir: &str,
    path: &str,
    reader: &IncludeReader<'_>,
) -> Vec<(String, Node)> {
    let files = texts(c, dir, path, reader, true);
    let mut out = Vec::with_capacity(files.len());
    for (_, label, text) in files {
        match tree::parse_yaml(&text) {
            Ok(mut node) => {
                c.problems.warnings.extend(tree::tab_warning(&text, &label));
                tree::interpolate_env(&mut node, &format!("{label}: "), c.env, &mut c.pending);
                out.push((label, node));
            }
            Err(mut problem) => {
                problem.path = label;
                c.problems.errors.push(problem);
            }
        }
    }
    out
}

/// The `actions`, `dashboards` and `entities` of an included file; anything else in it is
/// named in a warning, because OliveTin ignores it too and the author may expect otherwise.
pub(super) fn fields<'n>(c: &mut Checker<'_>, label: &str, node: &'n Node) -> Fields<'n> {
    let mut fields = Fields::new();
    let entries = match node {
        Node::Map(entries) => entries,
        Node::Null => return fields,
        other => {
            c.error(
                label,
                format!(
                    "an included file is a mapping with actions, dashboards or entities, found {}",
                    other.describe()
                ),
            );
            return fields;
        }
    };
    let prefix = format!("{label}: ");
    for (key, value) in entries {
        let key_at = key_path(&prefix, key);
        match READ.into_iter().find(|name| name.eq_ignore_ascii_case(key)) {
            Some(name) if fields.written(name) => {
                c.error(
                    &key_at,
                    format!("`{key}` is written twice in this file: keep one"),
                );
            }
            Some(name) => fields.found.push((name, key_at, value)),
            None => c.warn(
                &key_at,
                format!(
                    "`{key}` is ignored: only actions, dashboards and entities are read from an \
                     included file"
                ),
            ),
        }
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::fixtures::*;
    use crate::config::{FileReader, Files, Source, parse_with_files};

    fn no_file() -> impl Fn(&Path) -> Result<String, Unread> {
        |p: &Path| Err(Unread::NoFile(p.to_path_buf()))
    }

    /// Why a file could not be read, word for word as the config's errors say it.
    #[test]
    fn unread_word_for_word() {
        let p = || PathBuf::from("/etc/actiond/board.yaml");
        let d = || PathBuf::from("/etc/actiond/config.d");
        let cases = [
            (
                Unread::NoFile(p()),
                "cannot read /etc/actiond/board.yaml: other files are only read when the config \
                 is loaded from a file",
            ),
            (
                Unread::File(p(), std::io::Error::from_raw_os_error(13)),
                "cannot read /etc/actiond/board.yaml: Permission denied (os error 13)",
            ),
            (
                Unread::OverTotal(p(), 8),
                "cannot read /etc/actiond/board.yaml: the config and the files it reads (board, \
                 overlay and include files) would hold more than 8 MiB together, the most \
                 actiond reads",
            ),
            (
                Unread::Dir(d(), std::io::Error::from_raw_os_error(13)),
                "cannot read the include directory /etc/actiond/config.d: Permission denied \
                 (os error 13)",
            ),
            (
                Unread::List(d(), std::io::Error::from_raw_os_error(5)),
                "cannot list the include directory /etc/actiond/config.d: Input/output error \
                 (os error 5)",
            ),
            (
                Unread::TooMany(d(), 256),
                "the include directory /etc/actiond/config.d holds more than 256 YAML files",
            ),
        ];
        for (why, words) in cases {
            assert_eq!(why.to_string(), words);
        }
    }

    #[test]
    fn includes_merge_lists_and_name_their_files() {
        let reader = |dir: &Path| -> Result<Option<Vec<(String, String)>>, Unread> {
            assert_eq!(dir, Path::new("/srv/actiond/config.d"));
            Ok(Some(vec![
                (
                    "00-first.yml".to_string(),
                    "actions:\n  - {title: First, shell: echo 1}\nentities:\n  - {file: e.yaml, name: e}\n".to_string(),
                ),
                (
                    "01-second.yaml".to_string(),
                    "logLevel: debug\nActions:\n  - {title: Second, shell: echo 2}\n  - {shell: nameless}\ndashboards:\n  - {title: Extra}\n".to_string(),
                ),
                ("02-broken.yml".to_string(), "actions: [\n".to_string()),
            ]))
        };
        let file: &FileReader<'_> = &no_file();
        let text = "include: config.d/\nactions:\n  - {title: Main, shell: echo 0}\n";
        let result = parse_with_files(
            text,
            Source::Embedded,
            base(),
            &no_env,
            &Files { dir: &reader, file },
        );
        let Err((errs, warnings)) = result else {
            panic!("the broken include must fail the load");
        };
        let paths: Vec<&str> = errs.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(
            paths,
            vec![
                "config.d/02-broken.yml",
                "config.d/01-second.yaml: Actions[1]"
            ]
        );
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(warnings[0].path, "config.d/01-second.yaml: logLevel");
        assert!(
            warnings[0]
                .message
                .contains("only actions, dashboards and entities")
        );

        let good = |_: &Path| -> Result<Option<Vec<(String, String)>>, Unread> {
            Ok(Some(vec![
                (
                    "a.yml".to_string(),
                    "actions:\n  - {title: First, shell: echo 1}\n".to_string(),
                ),
                (
                    "b.yml".to_string(),
                    "entities:\n  - {file: e.yaml, name: e}\ndashboards:\n  - {title: Extra}\n"
                        .to_string(),
                ),
            ]))
        };
        let files = Files { dir: &good, file };
        let (c, _) = parse_with_files(text, Source::Embedded, base(), &no_env, &files)
            .unwrap_or_else(|(e, _)| panic!("{e:?}"));
        let titles: Vec<&str> = c.actions.iter().map(|a| a.title.as_str()).collect();
        assert_eq!(titles, vec!["Main", "First"]);
        assert_eq!(c.entities[0].file, base().join("e.yaml"));
        assert_eq!(c.dashboards[0].title, "Extra");

        // Without a reader (plain `parse`), an include cannot be honoured.
        assert_error(
            "include: config.d\n",
            "include",
            "only read when the config is loaded",
        );
    }
}
