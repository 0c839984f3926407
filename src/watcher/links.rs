//! Where a watched path leads when symlinks are on the way: every link met, component by
//! component (a linked directory, a chain's middle link), and the file it names in the end.
//! Only metadata and links are read, never a file opened; blocking, so the watcher calls it
//! off the event loop. It decides nothing about watching.

use std::path::{Path, PathBuf};

use tracing::{info, warn};

/// Where `path` leads when a symlink is on the way: every link met (a directory's or the
/// file's own, each link of a chain), named by its own path, since repointing it is an event
/// in its directory under its name; and the file it names in the end. Empty when no link is
/// on the way. A link that leads nowhere is said at warn level, since an edit of what it will
/// point to is then not noticed until the next reload. Only metadata and links are read (no
/// file is opened), so it cannot wait on a FIFO.
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
        Some(real) => {
            info!(
                "{} leads through a symlink to {}: the directories of its links and of the \
                 file are watched too, and the links are followed again after each reload",
                path.display(),
                real.display()
            );
            found.push(real);
        }
        None => warn!(
            "{} is reached through a symlink that leads nowhere: an edit of the file it \
             names is not noticed until the config is reloaded again",
            path.display()
        ),
    }
    found
}

/// The most links one path may go through, as the kernel allows (`MAXSYMLINKS`).
const MAX_LINKS: usize = 40;

/// The symlinks met resolving the absolute `path`, component by component, and the file it
/// names (`None` when a link leads nowhere or there are too many).
fn resolve(path: &Path) -> (Vec<PathBuf>, Option<PathBuf>) {
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
            return (links, None);
        };
        if !meta.file_type().is_symlink() {
            current = next;
            continue;
        }
        if links.len() == MAX_LINKS {
            return (links, None);
        }
        let Ok(target) = std::fs::read_link(&next) else {
            return (links, None);
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
    (links, Some(current))
}
