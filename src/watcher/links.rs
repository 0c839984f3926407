//! Where a watched path leads when symlinks are on the way: every link met, component by
//! component (a linked directory, a chain's middle link), and the file it names in the end,
//! made yet or not; and the YAML links of a config directory that lead nowhere yet. Only
//! metadata, directory entries and links are read, never a file opened; blocking, so the
//! watcher calls it off the event loop. It decides nothing about watching.

use std::path::{Path, PathBuf};

use tracing::{info, warn};

/// Where `path` leads when a symlink is on the way: every link met (a directory's or the
/// file's own, each link of a chain), named by its own path, since repointing it is an event
/// in its directory under its name; and the file it names in the end, or would name once
/// made (`ln -s ../available/x.yaml` before `x.yaml` is written: its making is then an event
/// of a watched directory under a watched name). Empty when no link is on the way. A link
/// that leads nowhere is said at warn level. Only metadata and links are read (no file is
/// opened), so it cannot wait on a FIFO.
pub(super) fn links_of(path: &Path) -> Vec<PathBuf> {
    let absolute = match std::env::current_dir() {
        Ok(cwd) => cwd.join(path),
        Err(_) => path.to_path_buf(),
    };
    let (links, real) = resolve(&absolute);
    if links.is_empty() {
        return links;
    }
    let mut found = links;
    match real {
        End::Found(real) => {
            info!(
                "{} leads through a symlink to {}: the directories of its links and of the \
                 file are watched too, and the links are followed again after each reload",
                path.display(),
                real.display()
            );
            found.push(real);
        }
        End::Missing(to_be) => {
            warn!(
                "{} is reached through a symlink that leads nowhere yet: {} is watched for, \
                 and applied once it is made",
                path.display(),
                to_be.display()
            );
            found.push(to_be);
        }
        End::Lost => warn!(
            "{} is reached through symlinks that cannot be followed (a loop, too many, or \
             one unreadable): an edit of the file they name is not noticed until the config \
             is reloaded again",
            path.display()
        ),
    }
    found
}

/// Where a path resolved to.
#[derive(Debug, PartialEq, Eq)]
enum End {
    /// The file it names.
    Found(PathBuf),
    /// The path it names, where nothing is yet: a component from here on is missing.
    Missing(PathBuf),
    /// Nowhere to be told: a link that cannot be read, or too many.
    Lost,
}

/// Most links leading nowhere listed per config directory: each is a watched name.
const MAX_DANGLING: usize = 64;

/// The YAML names of the config directory `dir` that are symlinks leading nowhere yet: the
/// loader skips them, but the file each names may be made later, which is then a change
/// (`links_of` gives where each would lead). At most `MAX_DANGLING`. Blocking.
pub(super) fn dangling_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            (name.ends_with(".yaml") || name.ends_with(".yml"))
                && e.file_type().is_ok_and(|t| t.is_symlink())
                && std::fs::metadata(e.path()).is_err()
        })
        .map(|e| e.path())
        .take(MAX_DANGLING)
        .collect()
}

/// The most links one path may go through, as the kernel allows (`MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// The symlinks met resolving the absolute `path`, component by component, and where it
/// ends.
fn resolve(path: &Path) -> (Vec<PathBuf>, End) {
    use std::path::Component;
    let mut links = Vec::new();
    let mut current = PathBuf::from("/");
    let mut rest: Vec<std::ffi::OsString> = path
        .components()
        .rev()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect();
    while let Some(name) = rest.pop() {
        if name == ".." {
            current.pop();
            continue;
        }
        let next = current.join(&name);
        let Ok(meta) = std::fs::symlink_metadata(&next) else {
            // What it would name: the rest taken as written.
            let mut to_be = next;
            for name in rest.iter().rev() {
                if name == ".." {
                    to_be.pop();
                } else {
                    to_be.push(name);
                }
            }
            return (links, End::Missing(to_be));
        };
        if !meta.file_type().is_symlink() {
            current = next;
            continue;
        }
        if links.len() == MAX_LINKS {
            return (links, End::Lost);
        }
        let Ok(target) = std::fs::read_link(&next) else {
            return (links, End::Lost);
        };
        links.push(next);
        if target.is_absolute() {
            current = PathBuf::from("/");
        }
        for c in target.components().rev() {
            match c {
                Component::Normal(n) => rest.push(n.to_os_string()),
                Component::ParentDir => rest.push("..".into()),
                _ => {}
            }
        }
    }
    (links, End::Found(current))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A link made before its target leads to where the target will be, through a missing
    /// directory too; a loop leads nowhere to be told; and only such YAML links of a
    /// directory are listed as dangling.
    #[test]
    fn a_link_leading_nowhere_yet_names_where_its_target_will_be() {
        let dir = std::env::temp_dir().join(format!("actiond-links-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("conf.d")).unwrap();
        std::fs::create_dir_all(dir.join("available")).unwrap();
        // As the kernel names it, so that no link of the temp dir's own is met.
        let dir = dir.canonicalize().unwrap();
        let ln = |to: &str, at: &str| std::os::unix::fs::symlink(to, dir.join(at)).unwrap();
        ln("../available/x.yaml", "conf.d/x.yaml");
        ln("../later/y.yaml", "conf.d/y.yml");
        ln("../conf.d/z.yaml", "conf.d/z.yaml");
        std::fs::write(dir.join("available/w.yaml"), "{}\n").unwrap();
        ln("../available/w.yaml", "conf.d/w.yaml");
        ln("../available/none.txt", "conf.d/notes.txt");

        let link = dir.join("conf.d/x.yaml");
        assert_eq!(
            links_of(&link),
            [link.clone(), dir.join("available/x.yaml")]
        );
        let link = dir.join("conf.d/y.yml");
        assert_eq!(links_of(&link), [link.clone(), dir.join("later/y.yaml")]);
        let (links, end) = resolve(&dir.join("conf.d/z.yaml"));
        assert_eq!((links.len(), end), (MAX_LINKS, End::Lost));
        let link = dir.join("conf.d/w.yaml");
        assert_eq!(
            links_of(&link),
            [link.clone(), dir.join("available/w.yaml")]
        );

        let mut dangling = dangling_in(&dir.join("conf.d"));
        dangling.sort();
        assert_eq!(
            dangling,
            ["x.yaml", "y.yml", "z.yaml"].map(|n| dir.join("conf.d").join(n))
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
