//! The tables of `filed::lands`: where a write by a relative name lands after `cd` and under
//! `workingDirectory`, through the whole model (`read_shell_in`, `judge`).

use super::*;
use crate::template::judge::{Values, judge};
use crate::template::read_shell_in;

/// One argument, `v`, text that holds no `/`.
fn values() -> Values {
    let mut v = Values {
        any: true,
        ..Values::default()
    };
    v.no_slash.insert("v".into());
    v.variables
        .insert("ACTIOND_ARG_V".into(), ("v".into(), false));
    v
}

fn shell_in(text: &str, dir: Option<&str>) -> Result<(), String> {
    let (_, analysis) = read_shell_in(text, dir.map(str::as_bytes)).map_err(|e| e.message)?;
    judge(text, &analysis, &values()).map_err(|why| why.to_string())
}

/// Each row: a command, its `workingDirectory`, and the words of its refusal (`None`: it
/// loads).
fn check(table: &[(&str, Option<&str>, Option<&str>)]) {
    let mut wrong = Vec::new();
    for &(text, dir, want) in table {
        match (shell_in(text, dir), want) {
            (Ok(()), None) => {}
            (Err(why), Some(w)) if why.contains(w) => {}
            (got, _) => wrong.push(format!("{text} in {dir:?}: {got:?}, wanted {want:?}")),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

const ROT: &str = "/etc/logrotate.d/x.txt`";
const UNKNOWN: &str = "a `cd` to a directory an expansion makes";

#[test]
fn a_relative_name_lands_where_cd_or_the_working_directory_leads() {
    check(&[
        (
            "cd /etc/logrotate.d && echo {{ v }} > x.txt",
            None,
            Some(ROT),
        ),
        (
            "cd / && echo {{ v }} > etc/logrotate.d/x.txt",
            None,
            Some(ROT),
        ),
        (
            "cd /srv && cd ../etc/logrotate.d && echo {{ v }} > x.txt",
            None,
            Some(ROT),
        ),
        // Every `cd` before counts (the model does not follow branches): `/etc/x.txt` first.
        (
            "cd /srv; cd ../etc; cd logrotate.d; echo {{ v }} > x.txt",
            None,
            Some("/etc/"),
        ),
        (
            "D=/etc/logrotate.d; cd \"$D\"; echo {{ v }} > x.txt",
            None,
            Some(ROT),
        ),
        (
            "D=/etc/logrotate.d; cd ${D}; echo {{ v }} > x.txt",
            None,
            Some(ROT),
        ),
        (
            "cd /etc/logrotate.d; cd /srv; cd -; echo {{ v }} > x.txt",
            None,
            Some(ROT),
        ),
        (
            "pushd /etc/logrotate.d; echo {{ v }} > x.txt",
            None,
            Some(ROT),
        ),
        (
            "if true; then cd /etc/logrotate.d; else cd /srv; fi; echo {{ v }} > x.txt",
            None,
            Some(ROT),
        ),
        (
            "(cd /etc/logrotate.d && echo {{ v }} > x.txt)",
            None,
            Some(ROT),
        ),
        (
            "cd /etc/logrotate.d && printf %s {{ v }} | tee x.txt",
            None,
            Some(ROT),
        ),
        (
            "cd /etc/logrotate.d && cp /srv/notes/n.txt x.txt",
            None,
            None,
        ),
        (
            "cd /home/pi/.bashrc.d && echo {{ v }} > x.txt",
            None,
            Some("`/home/pi/.bashrc.d/x.txt`"),
        ),
        (
            "cd ~/.config/autostart && echo {{ v }} > a.txt",
            None,
            Some("`~/.config/autostart/a.txt`"),
        ),
        (
            "cd && cd .config && echo {{ v }} > a.txt",
            None,
            Some("`~/.config/a.txt`"),
        ),
        ("echo {{ v }} > x.txt", Some("/etc/logrotate.d"), Some(ROT)),
        ("echo {{ v }} > logrotate.d/x.txt", Some("/etc"), Some(ROT)),
        (
            "cd logrotate.d && echo {{ v }} > x.txt",
            Some("/etc"),
            Some("/etc/"),
        ),
        (
            "sh -c 'echo \"$0\" > x.txt' {{ v }}",
            Some("/etc/logrotate.d"),
            Some(ROT),
        ),
        // A directory the model cannot resolve: a relative name lands anywhere.
        ("cd \"$1\" && echo {{ v }} > x.txt", None, Some(UNKNOWN)),
        (
            "read D; cd \"$D\"; echo {{ v }} > x.txt",
            None,
            Some(UNKNOWN),
        ),
        (
            "D=/srv/notes; read D; cd \"$D\"; echo {{ v }} > x.txt",
            None,
            Some(UNKNOWN),
        ),
        (
            "D=/srv; D+=x; cd \"$D\"; echo {{ v }} > x.txt",
            None,
            Some(UNKNOWN),
        ),
        (
            "for d in /srv/*; do cd \"$d\"; echo {{ v }} > x.txt; done",
            None,
            Some(UNKNOWN),
        ),
        (
            "cd \"$(cat /srv/dir)\" && echo {{ v }} > x.txt",
            None,
            Some(UNKNOWN),
        ),
        // Neighbours: a directory of one's own, a whole path, a value that is no content.
        ("cd /srv/notes && echo {{ v }} > x.txt", None, None),
        ("cd /srv && cd notes && echo {{ v }} > x.txt", None, None),
        ("D=/srv/notes; cd \"$D\"; echo {{ v }} > x.txt", None, None),
        (
            "for d in /srv/a /srv/b; do cd \"$d\"; echo {{ v }} > x.txt; done",
            None,
            None,
        ),
        ("cd \"$1\" && echo {{ v }} > /srv/notes/x.txt", None, None),
        (
            "cd /etc/logrotate.d && echo {{ v }} > /srv/notes/x.txt",
            None,
            None,
        ),
        ("cd /etc/logrotate.d && echo ok > x.txt", None, None),
        ("cd && echo {{ v }} > notes.txt", None, None),
        ("echo {{ v }} > notes.txt", Some("/srv/app"), None),
        ("echo {{ v }} > notes.txt", None, None),
        ("cd /tmp-books/ && ./split.sh >> logs.txt", None, None),
    ]);
}

#[test]
fn directories_are_made_normal_as_cd_does() {
    let table: &[(&str, &str)] = &[
        ("/srv/../etc/x", "/etc/x"),
        ("/srv/./a//b/", "/srv/a/b/"),
        ("/../../etc", "/etc"),
        ("a/../b", "b"),
        ("../a", "../a"),
        ("~/..", "~/.."),
        ("/", "/"),
        (".", "."),
    ];
    for &(name, want) in table {
        assert_eq!(normal(name.as_bytes()), want.as_bytes(), "{name}");
    }
}
