//! The config in layers: a config file may start from a board file (`board: PATH`, read
//! before it) and have the YAML files of an overlay directory (`overlay: DIR`, read after it,
//! in name order) put on top. That is how a packaged install keeps the package's board panel,
//! the admin's own settings and local additions in separate files (docs/configuration.md,
//! "The config in layers").
//!
//! The rules, lowest layer first (board, the file itself, overlay files):
//!
//! - a setting (any top-level key but `actions`, `dashboards` and `entities`) is taken whole
//!   from the last file that writes it; a key written empty sets the default back;
//! - `actions`, `dashboards` and `entities` are gathered from every file, the board's first;
//!   an action whose `id` is configured in an earlier file replaces that one, in its place;
//! - `board`, `overlay` and `include` are read from the main file only.
//!
//! This module owns those rules and the list of files a config came from, with which file
//! each action was written in. It reads nothing itself: the files arrive through the
//! [`Files`] closures, as includes do.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::actions::Draft;
use super::checker::{Checker, Fields};
use super::includes::{self, IncludeReader, Unread};
use super::schema::Schema;
use super::tree::{self, Node};

/// Reads one file (a `board:`), given its path resolved against the config's directory: its
/// text, or why it could not.
pub type FileReader<'a> = dyn Fn(&Path) -> Result<String, Unread> + 'a;

/// How the config reaches the files it names: a directory's YAML files (`include:` and
/// `overlay:`) and a single file (`board:`).
pub struct Files<'a> {
    pub dir: &'a IncludeReader<'a>,
    pub file: &'a FileReader<'a>,
}

/// What a file is to the config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Named by `board:`: read first, everything may be overridden.
    Board,
    /// The config file itself (or the embedded default).
    Main,
    /// A file of the `include:` directory: only its lists are read (OliveTin's rule).
    Include,
    /// A file of the `overlay:` directory: read last, it overrides.
    Overlay,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Board => "board",
            Role::Main => "config",
            Role::Include => "include",
            Role::Overlay => "overlay",
        }
    }
}

/// One file the config was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFile {
    /// The path, resolved against the config's directory (or "embedded default config").
    pub name: String,
    pub role: Role,
}

/// The keys that say where the other files are: only the main file's count.
const STRUCTURE: [&str; 3] = ["board", "overlay", "include"];

/// A board or overlay file as read: where it is, how problems in it are labelled, its tree.
pub(super) struct Layer {
    pub file: ConfigFile,
    pub label: String,
    pub node: Node,
}

/// The file named by the main file's `board:` (`field`), read and parsed; `None` when there
/// is none or it cannot be read (an error then: the panel would silently be missing).
pub(super) fn board(
    c: &mut Checker<'_>,
    top: &Fields<'_>,
    files: &Files<'_>,
) -> Option<(PathBuf, Layer)> {
    let field = top.get("board");
    let written = c.text(field).filter(|p| !p.trim().is_empty())?;
    let path = c.resolve(&written);
    let at = field.map_or("board", |(_, p)| p);
    let text = match (files.file)(&path) {
        Ok(text) => text,
        Err(why) => {
            c.error(at, why.to_string());
            return None;
        }
    };
    let layer = parse(c, &text, written, &path, Role::Board)?;
    Some((path, layer))
}

/// The files of the main file's `overlay:` directory, in name order; a directory that does
/// not exist has none.
pub(super) fn overlays(
    c: &mut Checker<'_>,
    top: &Fields<'_>,
    files: &Files<'_>,
) -> (Option<PathBuf>, Vec<Layer>) {
    let field = top.get("overlay");
    let Some(dir) = c.text(field).filter(|d| !d.trim().is_empty()) else {
        return (None, Vec::new());
    };
    let resolved = c.resolve(&dir);
    let at = field.map_or("overlay", |(_, p)| p);
    let read = includes::texts(c, &dir, at, files.dir, false);
    let layers = read
        .into_iter()
        .filter_map(|(name, label, text)| {
            parse(c, &text, label, &resolved.join(&name), Role::Overlay)
        })
        .collect();
    (Some(resolved), layers)
}

/// Parses one layer file and fills in its `${{ VAR }}`; a YAML error is reported at its label.
fn parse(c: &mut Checker<'_>, text: &str, label: String, path: &Path, role: Role) -> Option<Layer> {
    match tree::parse_yaml(text) {
        Ok(mut node) => {
            c.problems.warnings.extend(tree::tab_warning(text, &label));
            tree::interpolate_env(&mut node, &format!("{label}: "), c.env, &mut c.pending);
            Some(Layer {
                file: ConfigFile {
                    name: path.display().to_string(),
                    role,
                },
                label,
                node,
            })
        }
        Err(mut problem) => {
            problem.path = label;
            c.problems.errors.push(problem);
            None
        }
    }
}

/// The top-level keys of a board or overlay file, read against the main file's table; the
/// keys that name other files are warned about and left out.
pub(super) fn fields<'n>(c: &mut Checker<'_>, layer: &'n Layer, schema: Schema) -> Fields<'n> {
    let prefix = format!("{}: ", layer.label);
    let entries: &[(String, Node)] = match &layer.node {
        Node::Map(entries) => entries,
        Node::Null => &[],
        other => {
            c.error(
                &layer.label,
                format!(
                    "a config file is a mapping of keys to values, found {}",
                    other.describe()
                ),
            );
            &[]
        }
    };
    let mut fields = c.fields(entries, &prefix, schema);
    fields.found.retain(|(name, path, _)| {
        let structural = STRUCTURE.contains(name);
        if structural {
            c.warn(
                path,
                format!("`{name}` is read from the main config file only; here it is ignored"),
            );
        }
        !structural
    });
    fields
}

/// The settings in force: for each key, the entry of the last layer that writes it (even
/// empty, which sets the default back). `layers` go lowest first.
pub(super) fn settings<'f, 'n: 'f>(layers: impl IntoIterator<Item = &'f Fields<'n>>) -> Fields<'n> {
    let mut merged = Fields::new();
    for layer in layers {
        for (name, path, node) in &layer.found {
            merged.found.retain(|(earlier, _, _)| earlier != name);
            merged.found.push((name, path.clone(), node));
        }
    }
    merged
}

/// Lets an action replace one of the same configured id in an earlier file: of the drafts
/// sharing an id across files, those of the last file stay, the first of them in the place of
/// the earliest draft. `origins[i]` is the file of `drafts[i]` (files go lowest layer first).
/// Two actions with one id in the same file are left for `settle_ids`, which refuses the
/// second. The errors of a replaced action no longer count: it is not part of the config.
///
/// Two passes with a map by id, so that a config of thousands of actions (which an overlay
/// may override one by one) is read in time linear in their number.
pub(super) fn override_by_id(
    c: &mut Checker<'_>,
    drafts: &mut Vec<Draft>,
    origins: &mut Vec<usize>,
) {
    // Id → the last file that configures it, and the first draft of that file.
    let mut last: HashMap<String, (usize, usize)> = HashMap::new();
    for (j, draft) in drafts.iter().enumerate() {
        if let Some(id) = &draft.configured_id {
            let entry = last.entry(id.clone()).or_insert((origins[j], j));
            if origins[j] > entry.0 {
                *entry = (origins[j], j);
            }
        }
    }
    let mut slots: Vec<Option<Draft>> = std::mem::take(drafts).into_iter().map(Some).collect();
    let files = std::mem::take(origins);
    // The ids whose earliest place has been filled.
    let mut placed: HashSet<String> = HashSet::new();
    for i in 0..slots.len() {
        // Empty: a winner already moved to an earlier place.
        let Some(draft) = slots[i].take() else {
            continue;
        };
        let Some((id, &(last_file, winner))) = draft
            .configured_id
            .clone()
            .and_then(|id| last.get(&id).map(|l| (id, l)))
        else {
            drafts.push(draft);
            origins.push(files[i]);
            continue;
        };
        let earliest = placed.insert(id);
        if files[i] == last_file {
            drafts.push(draft);
            origins.push(files[i]);
            continue;
        }
        // A draft of an earlier file goes; the earliest one's place is taken by the first
        // draft of the last file.
        forget_errors(c, &draft);
        if earliest && let Some(replacement) = slots[winner].take() {
            drafts.push(replacement);
            origins.push(last_file);
        }
    }
}

/// Takes the errors of a draft that is no longer part of the config out of the count.
fn forget_errors(c: &mut Checker<'_>, draft: &Draft) {
    for error in &draft.errors {
        if let Some(at) = c.problems.errors.iter().position(|e| e == error) {
            c.problems.errors.remove(at);
            c.problems.confined -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::fixtures::*;
    use crate::config::{Config, Parsed, Problem, Source, parse_with_files};

    /// A reader over a fixed set of files: `(path, text)`, directories by prefix.
    fn world(files: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Parsed {
        move |text: &str| {
            let dir = |d: &Path| -> Result<Option<Vec<(String, String)>>, Unread> {
                let prefix = format!("{}/", d.display());
                let mut found: Vec<(String, String)> = files
                    .iter()
                    .filter_map(|(p, t)| {
                        p.strip_prefix(prefix.as_str())
                            .map(|name| (name.to_string(), (*t).to_string()))
                    })
                    .collect();
                if found.is_empty() {
                    return Ok(None);
                }
                found.sort();
                Ok(Some(found))
            };
            let file = |p: &Path| -> Result<String, Unread> {
                files
                    .iter()
                    .find(|(name, _)| Path::new(name) == p)
                    .map(|(_, t)| (*t).to_string())
                    .ok_or_else(|| Unread::File(p.into(), std::io::ErrorKind::NotFound.into()))
            };
            let files = Files {
                dir: &dir,
                file: &file,
            };
            parse_with_files(text, Source::Embedded, base(), &no_env, &files)
        }
    }

    const BOARD: &str = "\
pageTitle: Board
killGracePeriod: 5
defaultPermissions: {view: true, exec: false}
accessControlLists:
  - {name: status, matchUsergroups: [guest], permissions: {view: true, exec: true}}
actions:
  - {id: uptime, title: Uptime, acls: [status], exec: [uptime]}
  - {id: restart, title: Restart, exec: [systemctl, restart, ssh]}
  - {id: reboot, title: Reboot, exec: [systemctl, reboot]}
";

    fn loaded(parsed: Parsed) -> (Config, Vec<Problem>) {
        parsed.unwrap_or_else(|(e, w)| panic!("errors {e:#?}, warnings {w:#?}"))
    }

    fn ids_and_files(c: &Config) -> Vec<(String, String)> {
        c.actions
            .iter()
            .enumerate()
            .map(|(i, a)| (a.id.clone(), c.file_of(i).name.clone()))
            .collect()
    }

    #[test]
    fn settings_come_from_the_last_file_that_writes_them_and_lists_from_all() {
        let parse = world(&[
            ("/usr/share/actiond/board/b/config.yaml", BOARD),
            (
                "/srv/actiond/config.d/10-local.yaml",
                "pageTitle: Mine\nbannerMessage:\nactions:\n  - {id: backup, title: Backup, exec: [true]}\n",
            ),
            (
                "/srv/actiond/config.d/20-more.yml",
                "pageTitle: Mine at last\nactions:\n  - {id: restart, title: Restart more, exec: [systemctl, restart, cron]}\n",
            ),
        ]);
        let (c, warnings) = loaded(parse(
            "board: /usr/share/actiond/board/b/config.yaml\noverlay: config.d\n\
             pageTitle: Main\nbannerMessage: hello\nkillGracePeriod: 7\n\
             authLocalUsers: {enabled: true}\n\
             actions:\n  - {id: local, title: Local, exec: [true]}\n",
        ));
        assert!(warnings.is_empty(), "{warnings:?}");
        // The overlay's last file wins; the main file over the board; an empty key is the
        // default again.
        assert_eq!(c.page_title, "Mine at last");
        assert_eq!(c.banner_message, "");
        assert_eq!(c.limits.kill_grace_period.as_secs(), 7);
        // The board's settings hold where nobody overrides them.
        assert!(!c.auth.default_permissions.exec);
        assert_eq!(c.auth.access_control_lists.len(), 1);
        assert!(c.auth.local_users_enabled);
        // The board's actions first; `restart` replaced in its place by the overlay's.
        let board = "/usr/share/actiond/board/b/config.yaml";
        assert_eq!(
            ids_and_files(&c),
            [
                ("uptime", board),
                ("restart", "/srv/actiond/config.d/20-more.yml"),
                ("reboot", board),
                ("local", "embedded default config"),
                ("backup", "/srv/actiond/config.d/10-local.yaml"),
            ]
            .map(|(a, b)| (a.to_string(), b.to_string()))
        );
        assert_eq!(c.actions[1].title, "Restart more");
        let roles: Vec<Role> = c.files.iter().map(|f| f.role).collect();
        assert_eq!(
            roles,
            [Role::Board, Role::Main, Role::Overlay, Role::Overlay]
        );
        assert_eq!(
            c.board_file.as_deref(),
            Some(Path::new("/usr/share/actiond/board/b/config.yaml"))
        );
        assert_eq!(
            c.overlay_dir.as_deref(),
            Some(Path::new("/srv/actiond/config.d"))
        );
    }

    #[test]
    fn problems_name_their_file() {
        let parse = world(&[
            (
                "/srv/actiond/board.yaml",
                "logLevel: loud\nactions:\n  - {id: a, title: A, exec: [true], timeout: 99999}\n",
            ),
            (
                "/srv/actiond/config.d/x.yaml",
                "include: elsewhere\nactions:\n  - {id: b, title: B}\n",
            ),
        ]);
        let Err((errors, warnings)) = parse(
            "board: board.yaml\noverlay: config.d\nactions:\n  - {id: a, title: A2, exec: [true]}\n",
        ) else {
            panic!("a bad logLevel in the board refuses the config");
        };
        let paths: Vec<&str> = errors.iter().map(|p| p.path.as_str()).collect();
        // The board's broken `a` is replaced by the main file's, so its error is gone.
        assert_eq!(
            paths,
            ["board.yaml: logLevel", "config.d/x.yaml: actions[0]"]
        );
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(warnings[0].path, "config.d/x.yaml: include");
        assert!(warnings[0].message.contains("main config file only"));
    }

    #[test]
    fn the_same_id_twice_in_one_file_is_still_refused() {
        let parse = world(&[(
            "/srv/actiond/board.yaml",
            "actions:\n  - {id: a, title: A, exec: [true]}\n",
        )]);
        let (c, _) = parse(
            "board: board.yaml\nactions:\n  - {id: a, title: First, exec: [true]}\n  - {id: a, title: Second, exec: [true]}\n",
        )
        .unwrap_or_else(|(e, _)| panic!("{e:?}"));
        let titles: Vec<(&str, bool)> = c
            .actions
            .iter()
            .map(|a| (a.title.as_str(), a.disabled.is_some()))
            .collect();
        assert_eq!(titles, [("First", false), ("Second", true)]);
        assert!(c.action_errors()[0].message.contains("duplicate id"));
    }

    #[test]
    fn a_missing_board_refuses_and_a_missing_overlay_is_empty() {
        let parse = world(&[]);
        let Err((errors, _)) = parse("board: nowhere.yaml\n") else {
            panic!("a missing board file refuses the config");
        };
        assert_eq!(errors[0].path, "board");
        assert!(errors[0].message.contains("not found"), "{errors:?}");
        let (c, warnings) = loaded(parse("overlay: config.d\n"));
        assert!(warnings.is_empty());
        assert_eq!(c.files.len(), 1);
        // A board file that is not a mapping.
        let parse = world(&[("/srv/actiond/b.yaml", "- a\n")]);
        let Err((errors, _)) = parse("board: b.yaml\n") else {
            panic!("a list is no config");
        };
        assert_eq!(errors[0].path, "b.yaml");
    }

    #[test]
    fn without_file_access_board_and_overlay_cannot_be_honoured() {
        assert_error(
            "board: b.yaml\n",
            "board",
            "only read when the config is loaded",
        );
        let errors = fatal("overlay: config.d\n");
        assert_eq!(errors[0].path, "overlay", "{errors:?}");
    }
}
