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
        (
            "printf %s {{ v }} | env -C /etc/logrotate.d tee x.txt",
            None,
            Some(ROT),
        ),
        (
            "printf %s {{ v }} | env --chdir=/etc/logrotate.d tee x.txt",
            None,
            Some(ROT),
        ),
        (
            "printf %s {{ v }} | sudo -D /etc/logrotate.d tee x.txt",
            None,
            Some(ROT),
        ),
        (
            "printf %s {{ v }} | env -C \"$1\" tee x.txt",
            None,
            Some(UNKNOWN),
        ),
        (
            "printf %s {{ v }} | env -C /srv/notes tee x.txt",
            None,
            None,
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
fn a_write_through_a_link_the_command_made_lands_at_its_target() {
    check(&[
        (
            "ln -sfn /etc/logrotate.d /srv/notes/rot && echo {{ v }} > /srv/notes/rot/x.txt",
            None,
            Some(ROT),
        ),
        (
            "ln -sf /etc/cron.d/job /srv/notes/job.txt; echo {{ v }} > /srv/notes/job.txt",
            None,
            Some("`/etc/cron.d/job`"),
        ),
        (
            "ln -s /etc/logrotate.d /srv/notes/; echo {{ v }} > /srv/notes/logrotate.d/x.txt",
            None,
            Some(ROT),
        ),
        (
            "ln -s -t /srv/notes /etc/logrotate.d; echo {{ v }} > /srv/notes/logrotate.d/x.txt",
            None,
            Some(ROT),
        ),
        (
            "ln -s ../../etc/logrotate.d /srv/notes/rot; echo {{ v }} > /srv/notes/rot/x.txt",
            None,
            Some(ROT),
        ),
        (
            "cd /srv/notes && ln -s /etc/logrotate.d rot && echo {{ v }} > rot/x.txt",
            None,
            Some(ROT),
        ),
        (
            "ln -s /etc/logrotate.d /srv/a; ln -s /srv/a /srv/b; echo {{ v }} > /srv/b/x.txt",
            None,
            Some(ROT),
        ),
        (
            "ln /etc/cron.d/job /srv/notes/job.txt; echo {{ v }} >> /srv/notes/job.txt",
            None,
            Some("`/etc/cron.d/job`"),
        ),
        (
            "ln -sf \"$1\" /srv/notes/job.txt; echo {{ v }} > /srv/notes/job.txt",
            None,
            Some("every write through"),
        ),
        (
            "ln -sf /etc/cron.d/job /srv/notes/job.txt; printf %s {{ v }} | tee -a /srv/notes/job.txt",
            None,
            Some("`/etc/cron.d/job`"),
        ),
        // Neighbours: a link to a data file of one's own, a write beside the link.
        (
            "ln -sfn /srv/notes/today.txt /srv/notes/now.txt; echo {{ v }} > /srv/notes/now.txt",
            None,
            None,
        ),
        (
            "ln -sfn /etc/logrotate.d /srv/notes/rot && echo {{ v }} > /srv/notes/rotx.txt",
            None,
            None,
        ),
        (
            "ln -sfn /srv/archive /srv/notes/old && echo {{ v }} > /srv/notes/old/x.txt",
            None,
            None,
        ),
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

/// What `config::command` refuses whatever the values (`Analysis::runs_data`), as one text.
fn refused(text: &str) -> Option<String> {
    let (_, analysis) = read_shell_in(text, None).ok()?;
    let all: Vec<String> = analysis
        .runs_data
        .iter()
        .map(|(n, _, does)| format!("{does} `{}`", String::from_utf8_lossy(n)))
        .collect();
    (!all.is_empty()).then(|| all.join("; "))
}

#[test]
fn a_tree_copied_keeps_names_the_model_cannot_see() {
    const NOT_DATA: &str = "where a file it holds is not data";
    const HOME: &str = "into the home directory";
    let table: &[(&str, Option<&str>)] = &[
        // F10: a directory of data files into one whose files programs load.
        ("mv /srv/notes /etc/logrotate.d/", Some(NOT_DATA)),
        ("mv /srv/notes /etc/logrotate.d", Some(NOT_DATA)),
        ("rsync -a /srv/notes/ /etc/logrotate.d/", Some(NOT_DATA)),
        ("cp -r /srv/notes/ /etc/logrotate.d/", Some(NOT_DATA)),
        ("cp -a /srv/notes/. /etc/logrotate.d", Some(NOT_DATA)),
        ("cp --archive /srv/notes /home/pi/.bashrc.d", Some(NOT_DATA)),
        ("sudo cp -R /srv/notes /etc/cron.d/", Some(NOT_DATA)),
        ("cp /srv/notes/* /etc/logrotate.d/", Some(NOT_DATA)),
        ("cd /etc && cp -r /srv/notes logrotate.d", Some(NOT_DATA)),
        (
            "cp -r /srv/notes \"$1\"",
            Some("a directory an expansion makes"),
        ),
        // F5: names someone else chose, into a home directory.
        ("mv /srv/inbox/* /home/pi/", Some(HOME)),
        ("rsync -a /srv/inbox/ /home/pi/", Some(HOME)),
        ("cp -r /srv/inbox/. /home/pi/", Some(HOME)),
        ("cp /srv/inbox/* ~", Some(HOME)),
        ("scp -r nas:/srv/inbox/ /root", Some(HOME)),
        // Neighbours: a tree of one's own below, a file by its name, a system tree.
        ("rsync -a /srv/notes/ /srv/archive/", None),
        ("cp -r /srv/inbox /home/pi/inbox/", None),
        ("mv /srv/inbox/*.pdf /home/pi/", None),
        ("cp /srv/notes/a.txt /srv/archive/", None),
        ("cp /tmp/app.new /usr/local/bin/app", None),
        ("install -m 755 /tmp/app.new /usr/local/bin/app", None),
        ("cp -r /etc/skel/. /home/pi/", None),
        ("mv /etc/app.conf.new /etc/app.conf", None),
        ("rsync -a /srv/site/ /var/www/html/", None),
    ];
    let mut wrong = Vec::new();
    for &(text, want) in table {
        match (refused(text), want) {
            (None, None) => {}
            (Some(why), Some(w)) if why.contains(w) => {}
            (got, _) => wrong.push(format!("{text}: {got:?}, wanted {want:?}")),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// fe30v F4: the programs that write a named output file (`outputs::output_at`) and rename
/// or run a directory's files: what they write lands in a file judged as any other, and the
/// content of a file named as data (`Read::Stored`) or a value written there is refused.
#[test]
fn the_programs_that_write_a_named_file_are_one_table() {
    const STORED: &str = "the content of `/srv/notes/n.txt`";
    check(&[
        (
            "split -l 100 /srv/notes/n.txt /etc/cron.d/job-",
            None,
            Some(STORED),
        ),
        (
            "echo {{ v }} | split -l 1 - /etc/cron.d/job-",
            None,
            Some("`/etc/cron.d/job-*`"),
        ),
        (
            "csplit -f /etc/cron.d/job- /srv/notes/n.txt 1",
            None,
            Some(STORED),
        ),
        (
            "csplit --prefix=/etc/cron.d/job- /srv/notes/n.txt 1",
            None,
            Some(STORED),
        ),
        (
            "xxd -r /srv/notes/n.txt /usr/local/bin/job",
            None,
            Some(STORED),
        ),
        (
            "echo {{ v }} | xxd -r - /usr/local/bin/job",
            None,
            Some("`/usr/local/bin/job`"),
        ),
        (
            "openssl enc -d -base64 -in /srv/notes/n.txt -out /usr/local/bin/job",
            None,
            Some(STORED),
        ),
        (
            "echo {{ v }} | openssl enc -d -base64 -out /usr/local/bin/job",
            None,
            Some("/usr/local/bin/job"),
        ),
        (
            "curl -fsS -T /srv/notes/n.txt file:///etc/cron.d/job",
            None,
            Some(STORED),
        ),
        (
            "curl -fsS -T /srv/notes/n.txt file://localhost/etc/cron.d/job",
            None,
            Some(STORED),
        ),
        (
            "docker cp /srv/notes/n.txt app:/etc/cron.d/job",
            None,
            Some(STORED),
        ),
        (
            "docker cp /srv/notes/{{ v }}.txt app:/etc/cron.d/job",
            None,
            Some("`/etc/cron.d/job`"),
        ),
        (
            "echo {{ v }} | docker cp - app:/etc/cron.d/",
            None,
            Some("`/etc/cron.d/`"),
        ),
        (
            "curl -fsS -o /home/pi/x.txt -T /srv/notes/n.txt file:///home/pi/{{ v }}",
            None,
            Some("a value makes"),
        ),
        (
            "echo {{ v }} | xxd -r - /home/pi/{{ v }}",
            None,
            Some("a value makes"),
        ),
        // Neighbours: into data files of one's own, out of a container, a split kept as data.
        (
            "split -l 100 --additional-suffix=.txt /srv/notes/n.txt /srv/parts/n-",
            None,
            None,
        ),
        (
            "csplit -f /srv/parts/n- -b '%02d.txt' /srv/notes/n.txt 1",
            None,
            None,
        ),
        ("xxd /srv/notes/n.txt /srv/notes/n.hex.txt", None, None),
        (
            "openssl enc -base64 -in /srv/notes/n.txt -out /srv/notes/n.b64.txt",
            None,
            None,
        ),
        (
            "curl -fsS -T /srv/notes/n.txt file:///srv/archive/n.txt",
            None,
            None,
        ),
        (
            "docker cp app:/var/log/app.log /srv/logs/app.log",
            None,
            None,
        ),
        (
            "echo {{ v }} | split -l 1 --additional-suffix=.txt - /srv/parts/p-",
            None,
            None,
        ),
    ]);
    let table: &[(&str, Option<&str>)] = &[
        (
            "rename 's/\\.txt$/.sh/' /srv/notes/*.txt",
            Some("renames, to names its expression"),
        ),
        ("rename -v 's/x/y/' /srv/notes/a.txt", Some("renames")),
        (
            "mmv '/srv/notes/*.txt' '/srv/bin/#1'",
            Some("renames, to `/srv/bin/#1`"),
        ),
        (
            "run-parts --regex '.*' /srv/notes",
            Some("every file of the directory"),
        ),
        ("mmv '/srv/notes/*.txt' '/srv/old/#1.txt'", None),
        ("rename 's/x/y/' /srv/bin/*.sh", None),
        ("run-parts /srv/notes", None),
        ("run-parts --regex '.*' /etc/actiond/parts", None),
    ];
    let mut wrong = Vec::new();
    for &(text, want) in table {
        match (refused(text), want) {
            (None, None) => {}
            (Some(why), Some(w)) if why.contains(w) => {}
            (got, _) => wrong.push(format!("{text}: {got:?}, wanted {want:?}")),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// fe30v F10: a tree archived onto a pipe and unpacked carries its data files.
#[test]
fn a_tree_archived_and_unpacked_carries_its_data_files() {
    const STORED: &str = "the content of `notes/x.txt`";
    check(&[
        (
            "tar -cf - -C /srv notes | tar -xf - -C /etc/logrotate.d",
            None,
            Some(STORED),
        ),
        (
            "tar cf - /srv/notes | tar -x -C /etc/cron.d",
            None,
            Some("`/srv/notes/x.txt`"),
        ),
        (
            "tar -c /srv/notes > /etc/cron.d/job",
            None,
            Some("`/srv/notes/x.txt`"),
        ),
        ("tar -czf /srv/backup/notes.tgz -C /srv notes", None, None),
        (
            "tar -cf - -C /etc logrotate.d | gzip > /srv/backup/rot.tgz",
            None,
            None,
        ),
        (
            "tar -cf - /etc/logrotate.d | tar -xf - -C /srv/copy",
            None,
            None,
        ),
    ]);
}
