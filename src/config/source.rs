//! Where the config comes from: the search order, reading the file and the files it names
//! (its `board:` file, its `include:` and `overlay:` directories), and the embedded default.
//!
//! This module owns every file read the config needs (and only reads: nothing here ever
//! writes, creates or renames a file) and hands the text to the validation pass of `config`
//! (`parse_with_files`), with the real process environment for `${{ VAR }}`. It decides
//! nothing about the meaning of keys.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use super::{Config, Files, Problem, Source, Unread, parse_with_files};
use crate::files;

/// The config file and each included or layered file are refused beyond this size: the
/// largest config of the OliveTin corpus is a few dozen KiB, and the whole text is parsed in
/// memory.
pub const MAX_CONFIG_BYTES: u64 = 4 * 1024 * 1024;

/// An include directory may hold at most this many YAML files.
pub const MAX_INCLUDE_FILES: usize = 256;

/// The config file, its `board:` file and the files of its `overlay:` and `include:`
/// directories hold at most this many bytes together: each file's own bound times the number
/// of files would be a gigabyte, and every text is parsed in memory.
pub const MAX_CONFIG_TOTAL_BYTES: u64 = 8 * 1024 * 1024;

/// What is left of [`MAX_CONFIG_TOTAL_BYTES`] while one config and its files are read, and
/// the digest of what was read (`Config::read`).
struct Budget(std::cell::Cell<u64>, std::cell::RefCell<files::Digest>);

impl Budget {
    fn new() -> Budget {
        Budget(
            std::cell::Cell::new(MAX_CONFIG_TOTAL_BYTES),
            std::cell::RefCell::default(),
        )
    }

    /// The text of the regular file `path`, within its own bound and what is left of the
    /// total, which it then takes its share of.
    fn read(&self, path: &Path) -> Result<String, Unread> {
        let left = self.0.get();
        let got = files::read_text(path, MAX_CONFIG_BYTES.min(left));
        self.note(path, &got);
        let text = got.map_err(|e| match e {
            files::ReadError::TooLarge { .. } if left < MAX_CONFIG_BYTES => {
                Unread::OverTotal(path.into(), MAX_CONFIG_TOTAL_BYTES / (1024 * 1024))
            }
            e => Unread::File(path.into(), e.into()),
        })?;
        self.0.set(left - text.len() as u64);
        Ok(text)
    }

    /// Adds what reading `path` gave to the digest.
    fn note(&self, path: &Path, got: &Result<String, files::ReadError>) {
        let got = got.as_ref().map(|text| text.as_bytes());
        self.1.borrow_mut().add(path, got);
    }
}

/// The YAML files of the config directory `dir` (`include:`, `overlay:`) that the loader
/// reads, in the order it reads them (by name): for the watcher, whose digest of the files
/// must cover exactly what a load reads (`Config::read`). Empty when the directory cannot be
/// listed; one past `MAX_INCLUDE_FILES` at most (a load refuses that many).
pub fn config_dir_files(dir: &Path) -> Vec<PathBuf> {
    match yaml_names(dir) {
        Ok(Some(names)) => names.into_iter().map(|n| dir.join(n)).collect(),
        Ok(None) | Err(_) => Vec::new(),
    }
}

/// The embedded default config: a few harmless demo actions, so that a first
/// `cargo run` shows something useful.
const DEFAULT_CONFIG: &str = include_str!("default.yaml");

/// A validated config and the warnings found on the way (unknown or unsupported keys …).
#[derive(Debug)]
pub struct Loaded {
    pub config: Config,
    pub warnings: Vec<Problem>,
}

/// Why a config could not be loaded.
#[derive(Debug)]
pub enum LoadError {
    /// The config file could not be read.
    Read { path: PathBuf, error: io::Error },
    /// The text was read but is not a valid config; `errors` is never empty.
    Invalid {
        errors: Vec<Problem>,
        warnings: Vec<Problem>,
    },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Read { path, error } => {
                write!(f, "cannot read config file {}: {error}", path.display())
            }
            LoadError::Invalid { errors, .. } => {
                let count = errors.len();
                write!(
                    f,
                    "the config has {count} error{}:",
                    if count == 1 { "" } else { "s" }
                )?;
                for problem in errors {
                    write!(f, "\n  {problem}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LoadError::Read { error, .. } => Some(error),
            LoadError::Invalid { .. } => None,
        }
    }
}

/// The config to use: the explicit path when given (even if it does not exist, so that a typo
/// in `--config` is reported rather than silently replaced), else `./config.yaml`, else
/// `/etc/actiond/config.yaml`, else the embedded default.
pub fn locate(explicit: Option<&Path>) -> Source {
    if let Some(path) = explicit {
        return Source::File(path.to_path_buf());
    }
    ["config.yaml", "/etc/actiond/config.yaml"]
        .into_iter()
        .map(PathBuf::from)
        .find(|candidate| candidate.is_file())
        .map_or(Source::Embedded, Source::File)
}

/// Reads and validates the config from `source`, with its includes and the real environment.
///
/// The base directory (default working directory of actions, anchor of relative paths) is the
/// canonical directory of the file, or the current directory for the embedded default.
pub fn load(source: &Source) -> Result<Loaded, LoadError> {
    let budget = Budget::new();
    let (text, base_dir) = match source {
        Source::File(path) => {
            let got = files::read_text(path, MAX_CONFIG_BYTES);
            budget.note(path, &got);
            let text = got.map_err(|e| LoadError::Read {
                path: path.clone(),
                error: e.into(),
            })?;
            let dir = match path.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
                _ => PathBuf::from("."),
            };
            // The file was just read, so its directory exists; canonicalising can still fail
            // on an odd filesystem, and the path as given is then the best anchor there is.
            let dir = dir.canonicalize().unwrap_or(dir);
            (text, dir)
        }
        Source::Embedded => {
            let dir = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
            (DEFAULT_CONFIG.to_string(), dir)
        }
    };
    let env = |name: &str| std::env::var(name).ok();
    // The main file is within MAX_CONFIG_BYTES, less than the total.
    budget
        .0
        .set(MAX_CONFIG_TOTAL_BYTES.saturating_sub(text.len() as u64));
    let files = Files {
        dir: &|dir: &Path| read_include_dir(dir, &budget),
        file: &|path: &Path| budget.read(path),
    };
    match parse_with_files(&text, source.clone(), base_dir, &env, &files) {
        Ok((mut config, mut warnings)) => {
            warn_missing_entity_files(&config, &mut warnings);
            // The user actions run as, resolved on this system; one it cannot honour is
            // refused here, at start as at a reload.
            if let Some(name) = &config.run_as {
                match super::run_as::resolve(name) {
                    Ok(user) => config.actions_user = user.map(std::sync::Arc::new),
                    Err(why) => {
                        let (path, message) = (super::run_as::KEY.to_string(), why.to_string());
                        let errors = vec![Problem { path, message }];
                        return Err(LoadError::Invalid { errors, warnings });
                    }
                }
            }
            config.read = budget.1.borrow().value();
            Ok(Loaded { config, warnings })
        }
        Err((errors, warnings)) => Err(LoadError::Invalid { errors, warnings }),
    }
}

/// Every `*.yml` / `*.yaml` file directly in `dir`, sorted by file name, with its text; at
/// most `MAX_INCLUDE_FILES` of them, each within `MAX_CONFIG_BYTES` and all within what is left
/// of the `budget`; `None` when `dir` does not exist.
fn read_include_dir(dir: &Path, budget: &Budget) -> Result<Option<Vec<(String, String)>>, Unread> {
    let Some(names) = yaml_names(dir)? else {
        return Ok(None);
    };
    names
        .into_iter()
        .map(|name| budget.read(&dir.join(&name)).map(|text| (name, text)))
        .collect::<Result<_, _>>()
        .map(Some)
}

/// The names of the `*.yml` / `*.yaml` files directly in `dir`, sorted; `None` when `dir`
/// does not exist; refused beyond `MAX_INCLUDE_FILES`.
fn yaml_names(dir: &Path) -> Result<Option<Vec<String>>, Unread> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Unread::Dir(dir.into(), e)),
    };
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Unread::List(dir.into(), e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_yaml = name.ends_with(".yml") || name.ends_with(".yaml");
        // A directory named `x.yaml` or a dangling link is not a config fragment; a FIFO or a
        // device named so is refused below, where it is read.
        if is_yaml && std::fs::metadata(entry.path()).is_ok_and(|m| !m.is_dir()) {
            names.push(name);
        }
        if names.len() > MAX_INCLUDE_FILES {
            return Err(Unread::TooMany(dir.into(), MAX_INCLUDE_FILES));
        }
    }
    names.sort();
    Ok(Some(names))
}

/// Entity files are often generated at run time (by an action, or `docker ps`), so a missing
/// one is not an error; but `--check-config` should still say so.
fn warn_missing_entity_files(config: &Config, warnings: &mut Vec<Problem>) {
    for (i, entity) in config.entities.iter().enumerate() {
        if !entity.file.exists() {
            warnings.push(Problem {
                path: format!("entities[{i}]"),
                message: format!(
                    "the file {} of entity type {:?} does not exist (yet): the type has no \
                     instances until it appears",
                    entity.file.display(),
                    entity.name
                ),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch directory under the system temp dir, removed when dropped.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let dir =
                std::env::temp_dir().join(format!("actiond-config-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("create scratch dir");
            Scratch(dir)
        }

        fn write(&self, relative: &str, text: &str) -> PathBuf {
            let path = self.0.join(relative);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).expect("create parent");
            }
            std::fs::write(&path, text).expect("write scratch file");
            path
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn embedded_default_is_valid_and_quiet() {
        let loaded = load(&Source::Embedded).unwrap_or_else(|e| panic!("{e}"));
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        let c = &loaded.config;
        assert_eq!(c.source, Source::Embedded);
        assert_eq!(c.page_title, "actiond");
        let ids: Vec<&str> = c.actions.iter().map(|a| a.id.as_str()).collect();
        assert_eq!(ids, vec!["date", "uptime", "disk", "sleep", "greet"]);
        let sleep = &c.actions[3];
        assert_eq!(sleep.timeout, std::time::Duration::from_secs(90));
        let greet = &c.actions[4];
        assert_eq!(greet.arguments.len(), 1);
        assert_eq!(greet.arguments[0].name, "name");
        assert_eq!(greet.arguments[0].rule, crate::arguments::ArgType::Ascii);
        assert_eq!(greet.arguments[0].default.as_deref(), Some("world"));
        assert!(!greet.template.placeholders().is_empty());
    }

    #[test]
    fn locate_prefers_the_explicit_path() {
        let path = Path::new("/nonexistent/actiond.yaml");
        assert_eq!(locate(Some(path)), Source::File(path.to_path_buf()));
    }

    #[test]
    fn load_reports_unreadable_and_invalid_files() {
        let scratch = Scratch::new("errors");
        let missing = scratch.0.join("missing.yaml");
        match load(&Source::File(missing.clone())) {
            Err(LoadError::Read { path, .. }) => assert_eq!(path, missing),
            other => panic!("expected a read error, got {other:?}"),
        }
        let bad = scratch.write("bad.yaml", "logLevel: loud\nmaxConnections: 0\nfoo: 1\n");
        match load(&Source::File(bad)) {
            Err(e @ LoadError::Invalid { .. }) => {
                let text = e.to_string();
                assert!(text.starts_with("the config has 2 errors:"), "{text}");
                assert!(text.contains("\n  logLevel: unknown log level"), "{text}");
                let LoadError::Invalid { warnings, .. } = e else {
                    unreachable!()
                };
                assert_eq!(warnings.len(), 1);
            }
            other => panic!("expected invalid, got {other:?}"),
        }
    }

    #[test]
    fn load_resolves_paths_against_the_config_directory() {
        let scratch = Scratch::new("paths");
        scratch.write("conf/entities/e.yaml", "- {title: one}\n");
        scratch.write("conf/work/.keep", "");
        let path = scratch.write(
            "conf/config.yaml",
            "entities:\n  - {file: entities/e.yaml, name: e}\n  - {file: nope.json, name: n}\nactions:\n  - {title: A, shell: pwd, workingDirectory: work}\n",
        );
        let loaded = load(&Source::File(path.clone())).unwrap_or_else(|e| panic!("{e}"));
        let dir = scratch.0.join("conf").canonicalize().expect("canonical");
        assert_eq!(loaded.config.base_dir, dir);
        assert_eq!(loaded.config.source, Source::File(path));
        assert_eq!(loaded.config.entities[0].file, dir.join("entities/e.yaml"));
        assert_eq!(
            loaded.config.actions[0].working_directory,
            Some(dir.join("work"))
        );
        assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
        assert_eq!(loaded.warnings[0].path, "entities[1]");
        assert!(loaded.warnings[0].message.contains("does not exist"));
    }

    #[test]
    fn includes_are_read_sorted_and_only_yaml() {
        let scratch = Scratch::new("include");
        scratch.write(
            "config.d/10-b.yaml",
            "actions:\n  - {title: B, shell: echo b}\n",
        );
        scratch.write(
            "config.d/00-a.yml",
            "actions:\n  - {title: A, shell: echo a}\n",
        );
        scratch.write("config.d/README.md", "not yaml\n");
        scratch.write("config.d/20-c.yaml.bak", "actions: [\n");
        scratch.write("config.d/30-bad.yml", "actions:\n  - {title: C}\n");
        let path = scratch.write(
            "config.yaml",
            "include: config.d\nactions:\n  - {title: Main, shell: echo m}\n",
        );
        // An action without a command is disabled where it is, in its included file; the
        // rest loads.
        let loaded = load(&Source::File(path.clone())).unwrap_or_else(|e| panic!("{e}"));
        let errors = loaded.config.action_errors();
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(errors[0].path, "config.d/30-bad.yml: actions[0]");
        assert_eq!(loaded.config.actions.len(), 4);

        std::fs::remove_file(scratch.0.join("config.d/30-bad.yml")).expect("remove");
        let loaded = load(&Source::File(path)).unwrap_or_else(|e| panic!("{e}"));
        let titles: Vec<&str> = loaded
            .config
            .actions
            .iter()
            .map(|a| a.title.as_str())
            .collect();
        assert_eq!(titles, vec!["Main", "A", "B"]);

        let missing = scratch.write("other.yaml", "include: nowhere\n");
        let Err(LoadError::Invalid { errors, .. }) = load(&Source::File(missing)) else {
            panic!("a missing include directory is an error");
        };
        assert_eq!(errors[0].path, "include");
        assert!(
            errors[0]
                .message
                .contains("cannot read the include directory")
        );
    }

    /// YAML of exactly `len` bytes: `head`, then comment lines.
    fn padded(head: &str, len: usize) -> String {
        let mut text = head.to_string();
        while text.len() < len {
            let line = (len - text.len()).min(100);
            text.push('#');
            text.push_str(&"x".repeat(line.saturating_sub(2)));
            text.push('\n');
            text.truncate(len);
        }
        text
    }

    #[test]
    fn the_config_and_its_includes_are_read_up_to_a_total_and_refused_beyond() {
        let scratch = Scratch::new("total");
        let main = "include: config.d\nactions:\n  - {title: Main, shell: echo m}\n";
        let path = scratch.write("config.yaml", main);
        let each = MAX_CONFIG_BYTES as usize;
        let rest = MAX_CONFIG_TOTAL_BYTES as usize - main.len() - each;
        let first = padded("actions:\n  - {title: A, shell: echo a}\n", each);
        scratch.write("config.d/00-a.yaml", &first);
        let second = padded("actions:\n  - {title: B, shell: echo b}\n", rest);
        scratch.write("config.d/10-b.yaml", &second);
        // At the bound: every file is read.
        let loaded = load(&Source::File(path.clone())).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(loaded.config.actions.len(), 3);
        // One byte more, and the file that brings it is refused, naming the total.
        scratch.write("config.d/10-b.yaml", &padded(&second, rest + 1));
        let Err(LoadError::Invalid { errors, .. }) = load(&Source::File(path)) else {
            panic!("a config over the total is an error");
        };
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            errors[0].message.contains("10-b.yaml")
                && errors[0].message.contains("more than 8 MiB together"),
            "{}",
            errors[0].message
        );
    }
}
