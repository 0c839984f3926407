//! The watcher's digests against the loaders': what a load read and the files as they read
//! now must digest alike while nothing changed (or every look would reload again), and apart
//! after any edit, however soon after the load (or the edit would be taken for the baseline).

use std::path::{Path, PathBuf};

use super::{Kind, Targets, digest, load_entities};
use crate::config::{self, Source};

/// A scratch directory under the system temp dir, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("actiond-watcher-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create scratch dir");
        Scratch(dir)
    }

    fn write(&self, relative: &str, text: &str) -> PathBuf {
        let path = self.0.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).expect("create parent");
        std::fs::write(&path, text).expect("write scratch file");
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A change made to the scratch directory.
type Edit = dyn Fn(&Path);

fn now(targets: &Targets, kind: Kind) -> u64 {
    digest(targets, kind, false).0
}

#[test]
fn the_loaders_digests_are_the_files_as_they_read_and_any_edit_changes_them() {
    let s = Scratch::new("digest");
    let config = s.write(
        "config.yaml",
        "board: board.yaml\ninclude: inc.d\noverlay: over.d\n\
         entities:\n  - {file: servers.yaml, name: server}\n\
         actions:\n  - {id: a, title: A, shell: 'true'}\n",
    );
    s.write("board.yaml", "pageTitle: Board\n");
    s.write(
        "inc.d/10-b.yaml",
        "actions:\n  - {id: b, title: B, shell: 'true'}\n",
    );
    // Names the loader reads (a hidden `.yaml`, `.yml`) and one it skips (a directory named
    // like a fragment): the watcher must list the same, or each look would differ.
    s.write("inc.d/.yaml", "actions: []\n");
    s.write(
        "inc.d/20-c.yml",
        "actions:\n  - {id: c, title: C, shell: 'true'}\n",
    );
    std::fs::create_dir_all(s.0.join("inc.d/30-dir.yaml")).unwrap();
    s.write("inc.d/notes.txt", "not read\n");
    s.write("over.d/50-o.yaml", "pageTitle: Overlay\n");
    s.write("servers.yaml", "- {key: one}\n- {key: two}\n");

    let loaded = config::load(&Source::File(config.clone())).expect("valid config");
    let cfg = loaded.config;
    assert_ne!(cfg.read, 0);
    let (_, entities_read) = load_entities(&cfg, None);
    let targets = Targets::of(&cfg, &config);
    assert_eq!(now(&targets, Kind::Config), cfg.read, "config digest");
    assert_eq!(
        now(&targets, Kind::Entities),
        entities_read,
        "entities digest"
    );

    // Each file of the config, a file added to or removed from a config directory, and the
    // entity file: an edit made right after the load differs from what the load read.
    let edits: [(&str, &Edit); 6] = [
        ("config", &|d| append(&d.join("config.yaml"))),
        ("board", &|d| append(&d.join("board.yaml"))),
        ("include", &|d| append(&d.join("inc.d/20-c.yml"))),
        ("overlay", &|d| append(&d.join("over.d/50-o.yaml"))),
        ("new include", &|d| {
            std::fs::write(d.join("inc.d/40-new.yaml"), "actions: []\n").unwrap()
        }),
        ("removed include", &|d| {
            std::fs::remove_file(d.join("inc.d/10-b.yaml")).unwrap()
        }),
    ];
    let mut seen = vec![cfg.read];
    for (what, edit) in edits {
        edit(&s.0);
        let after = now(&targets, Kind::Config);
        assert!(!seen.contains(&after), "{what}: the edit is not seen");
        seen.push(after);
    }
    append(&s.0.join("servers.yaml"));
    assert_ne!(
        now(&targets, Kind::Entities),
        entities_read,
        "entity file edit"
    );
}

fn append(path: &Path) {
    let mut text = std::fs::read_to_string(path).unwrap();
    text.push_str("# edited\n");
    std::fs::write(path, text).unwrap();
}
