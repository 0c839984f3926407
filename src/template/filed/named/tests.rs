//! The tables of `filed::named`: which names a value makes are fixed as data, and, through
//! the whole model (`read_shell`, `read_exec`, `judge`), every writer a value may pick the
//! file of, a download the url names, a copy into a directory, an extraction.

use super::*;
use crate::template::judge::{Values, judge};
use crate::template::{read_exec, read_shell};

#[test]
fn a_name_a_value_makes_is_data_only_when_the_author_fixes_it() {
    let table: &[(&str, &str, bool)] = &[
        ("/srv/dl/", ".txt", true),
        ("/srv/dl/", ".mp3", true),
        ("/srv/dl/song-", ".flac", true),
        ("/srv/dl/", "/notes.txt", true),
        ("/home/pi/", ".pdf", true),
        ("out-", ".json", true),
        // No data ending after the value, or none in the last segment.
        ("/srv/dl/", "", false),
        ("/srv/dl/", ".sh", false),
        ("/srv/dl/", ".txt.sh", false),
        ("/srv/dl/", ".conf", false),
        ("/srv/dl/", ".html", false),
        ("/srv/", ".txt/x", false),
        ("/srv/", "/.bashrc", false),
        // The value starts the path, or the directory is one programs load every file of.
        ("", ".txt", false),
        ("/etc/cron.d/", ".txt", false),
        ("/etc/", ".json", false),
        ("/usr/local/bin/", ".txt", false),
        ("/var/spool/cron/", ".txt", false),
        ("/home/pi/.config/autostart/", ".txt", false),
        ("/home/pi/.", ".txt", false),
        ("/home/pi/.bashrc-", ".txt", false),
        ("/srv/../etc/", ".txt", false),
        ("-o", ".txt", false),
    ];
    for &(dir, tail, data) in table {
        assert_eq!(
            fixed(dir.as_bytes(), tail.as_bytes()),
            data,
            "{dir} … {tail}"
        );
    }
    assert!(matches(b"/srv/dl/*.txt", b"/srv/dl/a.txt"));
    assert!(matches(b"/srv/dl/x-*.txt", b"x-1.txt"));
    assert!(!matches(b"/srv/dl/*.txt", b"a.sh"));
    assert!(!matches(b"/srv/dl/x-*.txt", b"y.txt"));
}

/// Two arguments: `v`, text that holds no `/` (`ascii_identifier`), and `url`.
fn values() -> Values {
    let mut v = Values {
        any: true,
        ..Values::default()
    };
    v.no_slash.insert("v".into());
    for (var, name) in [("ACTIOND_ARG_V", "v"), ("ACTIOND_ARG_URL", "url")] {
        v.variables.insert(var.into(), (name.into(), false));
    }
    v
}

fn shell(text: &str) -> Result<(), String> {
    let (_, analysis) = read_shell(text).map_err(|e| e.message)?;
    judge(text, &analysis, &values()).map_err(|why| why.to_string())
}

fn exec(argv: &[&str]) -> Result<(), String> {
    let argv: Vec<String> = argv.iter().map(ToString::to_string).collect();
    judge("", &read_exec(&argv), &values()).map_err(|why| why.to_string())
}

/// Each row: a command and the words of its refusal (`None`: it loads).
fn check(table: &[(&str, Option<&str>)]) {
    for &(text, want) in table {
        match (shell(text), want) {
            (Ok(()), None) => {}
            (Err(why), Some(w)) => assert!(why.contains(w), "{text}: {why}"),
            (got, _) => panic!("{text}: {got:?}, wanted {want:?}"),
        }
    }
}

const NAME: &str = "a value makes";

#[test]
fn a_value_picks_the_file_of_any_writer_unless_the_author_fixes_its_name() {
    check(&[
        // F7: what curl or wget fetches, its headers, cookies, traces, log.
        ("curl -fsS -o /home/pi/{{ v }} {{ url }}", Some(NAME)),
        ("curl -fsS -o /etc/cron.d/{{ v }} {{ url }}", Some(NAME)),
        ("curl -fsS -o /srv/dl/{{ v }}.sh {{ url }}", Some(NAME)),
        ("curl -fsS -o /srv/dl/x-{{ v }} {{ url }}", Some(NAME)),
        ("curl -fsS -o \"/home/pi/{{ v }}\" {{ url }}", Some(NAME)),
        ("curl -o/home/pi/{{ v }} {{ url }}", Some(NAME)),
        ("curl --output=/home/pi/{{ v }} {{ url }}", Some(NAME)),
        ("wget -qO /home/pi/.bashrc-{{ v }} {{ url }}", Some(NAME)),
        ("curl -fsS -D /home/pi/{{ v }} {{ url }}", Some(NAME)),
        ("curl -fsS -c /home/pi/{{ v }} {{ url }}", Some(NAME)),
        (
            "curl -fsS --trace-ascii /home/pi/{{ v }} {{ url }}",
            Some(NAME),
        ),
        ("curl -fsS --stderr /home/pi/{{ v }} {{ url }}", Some(NAME)),
        (
            "wget -q -o /home/pi/{{ v }} -O /dev/null {{ url }}",
            Some(NAME),
        ),
        ("echo {{ url }} | sort -o /home/pi/{{ v }}", Some(NAME)),
        (
            "curl -fsS -o /srv/dl/{{ v }}.txt https://example.com/x",
            None,
        ),
        ("curl -fsS -o /srv/dl/{{ v }}.mp3 {{ url }}", None),
        ("wget -qO \"/srv/music/$ACTIOND_ARG_V.ogg\" {{ url }}", None),
        ("curl -o /etc/cron.d/{{ v }}.txt {{ url }}", Some(NAME)),
        // F6: whatever the program writes there.
        ("journalctl -n 100 > {{ v }}", Some(NAME)),
        ("journalctl -n 100 >> /home/pi/{{ v }}", Some(NAME)),
        ("ls -l /srv >| /srv/{{ v }}", Some(NAME)),
        ("ls -l /srv &> /srv/{{ v }}", Some(NAME)),
        ("ls -l /srv &>> /srv/{{ v }}", Some(NAME)),
        ("ls -l /srv 2> /home/pi/{{ v }}", Some(NAME)),
        ("exec 3> /home/pi/{{ v }}", Some(NAME)),
        ("cat > /home/pi/{{ v }} <<'EOF'\nx\nEOF", Some(NAME)),
        ("ls -l /srv 2>> /srv/logs/{{ v }}.log", None),
        ("find /srv/music -name '*.mp3' -fprint {{ v }}", Some(NAME)),
        ("find /srv/music -fls /srv/{{ v }}", Some(NAME)),
        ("git -C /srv/repo diff --output={{ v }}", Some(NAME)),
        ("git -C /srv/repo archive -o {{ v }} HEAD", Some(NAME)),
        (
            "git -C /srv/repo format-patch -o /srv/{{ v }} HEAD~3",
            Some(NAME),
        ),
        ("git -C /srv/repo bundle create {{ v }} HEAD", Some(NAME)),
        ("ssh -E {{ v }} nas uptime", Some(NAME)),
        ("ssh -o UserKnownHostsFile={{ v }} nas uptime", Some(NAME)),
        (
            "ssh -oUserKnownHostsFile=/home/pi/{{ v }} nas uptime",
            Some(NAME),
        ),
        (
            "ssh -o UserKnownHostsFile=/srv/ssh/{{ v }}.txt nas uptime",
            None,
        ),
        ("ssh -o ConnectTimeout=5 nas uptime; echo {{ v }}", None),
        ("date | tee /home/pi/{{ v }}", Some(NAME)),
        // (`split`'s files are also any name its content goes to: either refusal.)
        (
            "split -l 10 /srv/list.txt /etc/cron.d/{{ v }}",
            Some("reaches it"),
        ),
        (
            "split -l 10 /srv/list.txt /srv/parts/{{ v }}-",
            Some("reaches it"),
        ),
        ("tar -czf /home/pi/{{ v }} /srv/data", Some(NAME)),
        ("tar -c -f /etc/cron.d/{{ v }} /srv/data", Some(NAME)),
        ("tar -czf /srv/backup/{{ v }}.tgz /srv/data", None),
        ("tar czf /srv/backup/{{ v }}.tgz /srv/data", None),
        (
            "tar --create --file=/srv/backup/{{ v }}.tar /srv/data",
            None,
        ),
        ("date | dd of=/home/pi/{{ v }}", Some(NAME)),
        ("cp /srv/t.txt /home/pi/{{ v }}", Some(NAME)),
        ("ln -s /srv/t.txt /home/pi/{{ v }}", Some(NAME)),
        ("f=/home/pi/$ACTIOND_ARG_V; date > \"$f\"", Some(NAME)),
        ("journalctl -n 100 > /srv/logs/{{ v }}.log", None),
        (
            "git -C /srv/repo diff --output=/srv/diffs/{{ v }}.txt",
            None,
        ),
        ("find /srv/music -fprint /srv/lists/{{ v }}.txt", None),
        ("date | tee -a /srv/notes/{{ v }}.md", None),
        ("cp /srv/t.txt /srv/copies/{{ v }}.txt", None),
        ("echo {{ url }} > /srv/urls/{{ v }}.txt", None),
        ("journalctl > /var/log/app/$(date +%F).log", None),
        ("journalctl > /var/log/app/$(date +%F); echo {{ v }}", None),
        ("date > \"$HOME/last.txt\"", None),
    ]);
}

#[test]
fn a_url_or_an_upload_picks_no_name_in_any_directory() {
    let url = "the url of a download";
    check(&[
        ("wget -q -P /home/pi {{ url }}", Some(url)),
        ("wget -q -P /srv/downloads {{ url }}", Some(url)),
        ("wget -q --directory-prefix=/home/pi {{ url }}", Some(url)),
        ("wget --content-disposition -P /srv/dl {{ url }}", Some(url)),
        ("curl -fsS --output-dir . -O {{ url }}", Some(url)),
        ("curl -fsS --output-dir /srv/dl -O {{ url }}", Some(url)),
        ("curl -OJ --output-dir /home/pi {{ url }}", Some(url)),
        (
            "curl --remote-name-all --output-dir /srv/dl {{ url }}",
            Some(url),
        ),
        (
            "wget -q -P /srv/dl/{{ v }} https://example.com/a.txt",
            Some(NAME),
        ),
        (
            "curl --output-dir /home/pi/{{ v }} -O https://x/a.txt",
            Some(NAME),
        ),
        ("wget -q -O /srv/downloads/{{ v }}.mp3 {{ url }}", None),
        ("wget -q -P /srv/downloads https://example.com/a.pdf", None),
        (
            "curl --output-dir /srv/dl -O https://example.com/a.pdf",
            None,
        ),
        ("curl -fsS -o /srv/downloads/report.pdf {{ url }}", None),
    ]);
    let copied = "the source of a copy into a directory";
    check(&[
        ("mv {{ v }} /home/pi/", Some(copied)),
        ("mv {{ v }} /home/pi", Some(copied)),
        ("cp -- {{ v }} /srv/www/html/", Some(copied)),
        ("cp {{ v }} /etc/cron.d/", Some(copied)),
        ("install -m 644 {{ v }} /srv/in", Some(copied)),
        ("cp -t /srv/in {{ v }}", Some(copied)),
        ("mv {{ v }} /srv/inbox/upload.pdf", None),
        ("cp {{ v }} /srv/inbox/{{ v }}.pdf", None),
        // A value that may hold `/` may pick a hidden directory below (`.bashrc.d/x`).
        (
            "cp {{ v }} /srv/inbox/{{ url }}.pdf",
            Some("below the one written"),
        ),
        ("cp /srv/a.txt /srv/b/", None),
    ]);
}

#[test]
fn an_archive_a_value_picks_or_fills_is_not_extracted() {
    let unpacked = "the archive of an extraction";
    check(&[
        ("curl -fsSL {{ url }} | tar -xz -C /home/pi", Some(unpacked)),
        (
            "curl -fsSL {{ url }} | tar -xz -C /srv/www/themes",
            Some(unpacked),
        ),
        ("wget -qO- {{ url }} | tar xz -C /srv/app", Some(unpacked)),
        ("tar -xf /srv/in/{{ v }}", Some(unpacked)),
        (
            "tar --extract --file=/srv/in/{{ v }}.tar -C /srv/x",
            Some(unpacked),
        ),
        ("bsdtar -xf /srv/in/{{ v }}.zip", Some(unpacked)),
        ("busybox tar -xf /srv/in/{{ v }}.tar", Some(unpacked)),
        ("unzip -o /srv/in/{{ v }}.zip -d /srv/x", Some(unpacked)),
        ("curl -fsSL {{ url }} | cpio -idm", Some(unpacked)),
        ("7z x /srv/in/{{ v }}.7z", Some(unpacked)),
        // A kept archive named as data may hold what any press downloaded.
        (
            "tar -xzf /srv/dl/theme.tgz -C /srv/www",
            Some("/srv/dl/theme.tgz"),
        ),
        ("unzip /srv/dl/theme.zip", Some("/srv/dl/theme.zip")),
        // Kept, listed, or the author's own archive.
        ("curl -fsSL -o /srv/dl/{{ v }}.tar.gz {{ url }}", None),
        ("tar -tzf /srv/in/{{ v }}.tgz", None),
        ("tar -czf /srv/backup/{{ v }}.tgz /srv/data", None),
        (
            "tar -xzf /opt/app/theme.tgz -C /srv/www",
            Some("/opt/app/theme.tgz"),
        ),
        ("tar --lzip -xf /opt/app/theme.lz -C /srv/www", None),
    ]);
    // The url picks the whole tree, which a later command may run (fe30u F8): whatever the
    // directory, a value there is refused; a value in the directory is `named`'s.
    let url = "the url (or remote) `git clone`, `git pull`";
    // Into a directory programs load code from, that rule is named first.
    let either = "the url of `git clone";
    check(&[
        (
            "git clone {{ url }} /home/pi/.vim/pack/p/start/x",
            Some(either),
        ),
        ("git clone {{ url }} /home/pi", Some(either)),
        ("git clone {{ url }} /etc/app", Some(either)),
        ("git clone {{ url }} /srv/repos/app", Some(url)),
        ("git clone --depth 1 {{ url }} /home/pi/src/app", Some(url)),
        ("git submodule add {{ url }} vendor/x", Some(url)),
        (
            "git clone https://example.com/app.git /home/pi/{{ v }}",
            Some(NAME),
        ),
        ("git clone https://example.com/app.git /srv/repos/app", None),
        // fe30v F7: every subcommand that fetches a tree from a url or remote a value picks.
        ("git -C /srv/app pull {{ url }} main", Some(url)),
        ("git -C /srv/app pull --rebase -- {{ url }}", Some(url)),
        ("git -C /srv/app fetch --depth 1 {{ url }} main", Some(url)),
        (
            "git fetch {{ url }} && git reset --hard FETCH_HEAD",
            Some(url),
        ),
        ("git fetch --multiple origin {{ url }}", Some(url)),
        ("git -C /srv/app remote add x {{ url }}", Some(url)),
        ("git -C /srv/app remote set-url origin {{ url }}", Some(url)),
        ("git pull -- \"$(cat /srv/notes/url.txt)\"", Some(url)),
        // The author's remote and a branch of it; a value among fetch's own options.
        ("git -C /srv/app pull origin {{ v }}", None),
        ("git -C /srv/app fetch origin {{ v }}", None),
        ("git -C /srv/app pull", None),
        ("git -C /srv/app fetch --depth {{ v }} origin", None),
    ]);
    // fe30v's confusing message: `rsync SRC/ DIR/` copies what SRC holds and keeps no name
    // a value makes, into a directory programs load nothing from; into a home, or without
    // the `/`, or by `cp`, the name rule holds.
    let kept = "keeps the source's name";
    check(&[
        (
            "rsync -a /srv/photos/{{ v }}/ /backup/photos/{{ v }}/",
            None,
        ),
        ("rsync -a /srv/photos/{{ v }}/ /backup/photos/", None),
        ("rsync -a /srv/photos/{{ v }} /backup/photos/", Some(kept)),
        ("rsync -a /srv/photos/{{ v }}/ /home/pi/", Some(kept)),
        ("rsync -a /srv/photos/{{ v }}/ /etc/cron.d/", Some(kept)),
        ("rsync -a {{ url }}/ /home/pi/.config/", Some(kept)),
        ("cp -r /srv/photos/{{ v }}/ /backup/photos/", Some(kept)),
    ]);
    // fe30v F8: a decompressor writes next to its input under the name it derives, which
    // a value picks; to its output, or with the author's data ending, it loads.
    let derived = "a decompressor";
    check(&[
        ("gunzip {{ url }}", Some(derived)),
        ("gzip -d {{ v }}", Some(derived)),
        ("unxz -k -- \"$ACTIOND_ARG_V\"", Some(derived)),
        ("bzip2 --decompress /srv/in/{{ v }}", Some(derived)),
        ("gunzip /srv/in/{{ v }}.sh.gz", Some(derived)),
        ("gunzip /srv/in/{{ v }}.txt.gz", None),
        ("gunzip -c {{ v }} > /srv/out/x.txt", None),
        ("gunzip -t {{ v }}", None),
        ("gzip {{ v }}", None),
    ]);
}

#[test]
fn exec_words_name_files_as_shell_words_do() {
    let table: &[(&[&str], bool)] = &[
        (
            &["curl", "-fsS", "-o", "/home/pi/{{ v }}", "{{ url }}"],
            false,
        ),
        (
            &["curl", "-fsS", "-o", "/srv/dl/{{ v }}.mp3", "{{ url }}"],
            true,
        ),
        (&["wget", "-q", "-P", "/srv/dl", "{{ url }}"], false),
        (&["find", "/srv", "-fprint", "{{ v }}"], false),
        (&["mv", "{{ v }}", "/home/pi/"], false),
        (&["tar", "-xf", "/srv/in/{{ v }}.tar"], false),
        (&["tar", "-tf", "/srv/in/{{ v }}.tar"], true),
        // fe30v F7, F8 in `exec:` too.
        (&["git", "-C", "/srv/app", "pull", "{{ url }}"], false),
        (
            &["git", "-C", "/srv/app", "pull", "origin", "{{ v }}"],
            true,
        ),
        (&["gunzip", "{{ v }}"], false),
        (&["gunzip", "/srv/in/{{ v }}.txt.gz"], true),
    ];
    for &(argv, loads) in table {
        assert_eq!(exec(argv).is_ok(), loads, "{argv:?}: {:?}", exec(argv));
    }
}

/// fe30u F5, F6, F10 and its first low finding: `rsync` keeps an upload's name as `cp` does, a
/// value that starts a directory of the path may make it hidden, `ln -s` points every later
/// write at a file the value picks; a source whose data ending the author fixed keeps it.
#[test]
fn rsync_copies_hidden_directories_and_link_targets() {
    check(&[
        (
            "rsync -a {{ f }} /home/pi/",
            Some("keeps the source's name"),
        ),
        ("rsync -a --exclude {{ f }} /srv/a/ /srv/b/", None),
        (
            "printf '%s' x > /srv/notes/{{ f }}/notes.txt",
            Some("a directory in the name"),
        ),
        (
            "ln -sfn /home/pi/{{ f }} /srv/notes/current.txt",
            Some("every write through `ln -s`'s link"),
        ),
        (
            "ln -sfn /srv/notes/{{ v }}.txt /srv/notes/current.txt",
            None,
        ),
        ("cp /srv/photos/{{ v }}.jpg /srv/www/gallery/", None),
        (
            "cp /srv/photos/{{ v }}.jpg /etc/cron.d/",
            Some("keeps the source's name"),
        ),
    ]);
}

/// fe30v F3: curl fills `#1` in its output name with the text of the url's `{…}` glob.
#[test]
fn a_url_a_value_makes_fills_curls_hash_names() {
    const GLOB: &str = "replaces with the text of the url's";
    check(&[
        ("curl -fsS -o '/srv/dl/#1.txt' {{ url }}", Some(GLOB)),
        ("curl -fsS -o /srv/dl/page-#1.txt {{ url }}", Some(GLOB)),
        ("curl -fsS --output '/srv/dl/#2.txt' {{ url }}", Some(GLOB)),
        ("curl -fsS '--output=/srv/dl/#1.txt' {{ url }}", Some(GLOB)),
        (
            "curl -fsS -o '/srv/dl/#1.txt' -- \"$ACTIOND_ARG_URL\"",
            Some(GLOB),
        ),
        (
            "curl -fsS -o '/srv/dl/#1.txt' \"https://h/{{ v }}\"",
            Some(GLOB),
        ),
        // Told not to glob, no `#` and a digit, or the url is the author's.
        ("curl -g -fsS -o '/srv/dl/#1.txt' {{ url }}", None),
        ("curl -gfsS -o '/srv/dl/#1.txt' {{ url }}", None),
        ("curl --globoff -o '/srv/dl/#1.txt' {{ url }}", None),
        ("curl -fsS -o '/srv/dl/#a.txt' {{ url }}", None),
        ("curl -fsS -o /srv/dl/page.txt {{ url }}", None),
        (
            "curl -fsS -o '/srv/dl/#1.txt' 'https://example.com/{a,b}'",
            None,
        ),
    ]);
    let argv = ["curl", "-fsS", "-o", "/srv/dl/#1.txt", "{{ url }}"];
    assert!(exec(&argv).unwrap_err().contains(GLOB));
    assert!(exec(&["curl", "-g", "-o", "/srv/dl/#1.txt", "{{ url }}"]).is_ok());
}
