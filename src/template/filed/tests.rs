//! The tables of `filed`: what a command writes a value into, what it runs, copies and
//! lists, and which files are known to hold data.

use super::*;

fn words<'a>(w: &[&'a str]) -> Vec<Option<&'a [u8]>> {
    w.iter()
        .map(|w| (*w != "$").then_some(w.as_bytes()))
        .collect()
}

#[test]
fn only_a_file_known_to_hold_data_may_hold_a_value() {
    let table: &[(&str, bool)] = &[
        ("notes.txt", true),
        ("/srv/urls.txt", true),
        ("/var/log/presses.log", true),
        ("out.json", true),
        ("/tmp/urls", false),
        // A rotated, kept or temporary copy keeps the ending inside (fe30w FR2, FR3).
        ("/srv/logs/app.log.1", true),
        ("/srv/logs/app.log.2.gz", true),
        ("/srv/state.json.tmp", true),
        ("/srv/notes.txt.bak", true),
        ("/srv/job.sh.1", false),
        ("/srv/job.1", false),
        ("/tmp/radio.conf", false),
        ("/var/tmp/x", false),
        ("/dev/null", true),
        ("/dev/stderr", true),
        ("/dev/fd/3", true),
        // Run by convention, wherever it is.
        ("/tmp/job.sh", false),
        ("/tmp/../etc/profile.d/x.txt", false),
        ("/etc/profile.d/proxy.sh", false),
        // Not known to hold data: anything may source or run it.
        ("/etc/default/backup", false),
        ("/etc/sysconfig/x", false),
        ("file", false),
        ("job", false),
        (".txt", false),
        ("/dev/sda", false),
        ("/etc/aliases", false),
        ("/home/pi/.bash_aliases", false),
        ("/etc/logrotate.d/app.txt", false),
        ("/etc/docker/daemon.json", false),
        ("/boot/firmware/config.txt", false),
        ("/home/pi/.config/app/state.json", false),
        ("/srv/app/.git/hooks/x.txt", false),
        ("/var/lib/actiond-run/notes.txt", true),
        ("./notes.txt", true),
        ("/srv/photos/IMG_0001.JPG", true),
        ("/srv/notes.TXT", true),
        // fe30v F2: run or loaded as code by their name, in any case, wherever they are.
        ("/srv/nodered/data/flows.json", false),
        ("/srv/nodered/data/flows_raspberrypi.json", false),
        ("/srv/homebridge/config.json", false),
        ("/srv/app/package-lock.json", false),
        ("/srv/app/npm-shrinkwrap.json", false),
        ("/srv/app/nodemon.json", false),
        ("/srv/app/deno.json", false),
        ("/srv/app/project.json", false),
        ("/srv/app/PACKAGE.JSON", false),
        ("/srv/app/Requirements.TXT", false),
        ("/srv/tftp/e45f01ab/config.txt", false),
        ("/media/pi/bootfs/cmdline.txt", false),
        ("/media/pi/bootfs/CMDLINE.TXT", false),
        ("/var/lib/docker/containers/abc/hostconfig.json", false),
        ("/var/lib/homebridge/accessories.json", false),
        ("/srv/app/config.json", true),
        ("/srv/app/flows-notes.json", true),
        ("/srv/app/project-notes.txt", true),
    ];
    for &(name, data) in table {
        assert_eq!(data_file(name.as_bytes()), data, "{name}");
    }
}

#[test]
fn a_copy_into_a_target_directory_is_a_copy() {
    let filed = [Filed {
        name: Some(b"/tmp/x.txt".to_vec()),
        line: 1,
        reads: vec![Read::Variable("A".into())],
    }];
    let table: &[(&[&str], &[&str])] = &[
        (
            &["cp", "/tmp/x.txt", "/etc/cron.d/"],
            &["/etc/cron.d/", "/etc/cron.d/x.txt"],
        ),
        (
            &["cp", "-t", "/etc/cron.d", "/tmp/x.txt"],
            &["/etc/cron.d/", "/etc/cron.d/x.txt"],
        ),
        (
            &["mv", "-t/etc/cron.d", "/tmp/x.txt"],
            &["/etc/cron.d/", "/etc/cron.d/x.txt"],
        ),
        (
            &["cp", "--target-directory=/etc/cron.d", "/tmp/x.txt"],
            &["/etc/cron.d/", "/etc/cron.d/x.txt"],
        ),
        (
            &["ln", "-st", "/etc/cron.d", "/tmp/x.txt"],
            &["/etc/cron.d/", "/etc/cron.d/x.txt"],
        ),
        (&["cp", "/srv/y", "/etc/cron.d/"], &[]),
    ];
    for (w, want) in table {
        let got: Vec<String> = copies(&words(w), &filed)
            .into_iter()
            .map(|(n, _)| String::from_utf8_lossy(&n.unwrap_or_default()).into_owned())
            .collect();
        assert_eq!(&got, want, "{w:?}");
    }
}

#[test]
fn the_files_a_program_writes_what_it_fetches_or_sorts_into() {
    let table: &[(&[&str], &[Option<&str>])] = &[
        (&["curl", "-o", "F", "u"], &[Some("F")]),
        (&["curl", "-fsSLo", "F", "u"], &[Some("F")]),
        (&["curl", "-oF", "u"], &[Some("F")]),
        (&["curl", "--output=F", "u"], &[Some("F")]),
        (&["curl", "--output", "F", "u"], &[Some("F")]),
        (&["wget", "-qO", "F", "u"], &[Some("F")]),
        (
            &["sort", "-u", "-o", "/etc/cron.d/x"],
            &[Some("/etc/cron.d/x")],
        ),
        (&["uniq", "-", "/etc/cron.d/x"], &[Some("/etc/cron.d/x")]),
        (&["uniq", "in.txt"], &[]),
        (&["split", "-", "/etc/cron.d/x"], &[Some("/etc/cron.d/x*")]),
        (&["split", "-l", "1", "in.txt"], &[Some("x*")]),
        (&["split", "-", "$"], &[None]),
        (
            &["split", "--additional-suffix=.txt", "-", "/srv/p-"],
            &[Some("/srv/p-*.txt")],
        ),
        (
            &["csplit", "-f", "/srv/p-", "in.txt", "1"],
            &[Some("/srv/p-*")],
        ),
        (&["csplit", "in.txt", "1"], &[Some("xx*")]),
        (
            &["csplit", "-b", "%02d.txt", "-f", "p-", "in.txt", "1"],
            &[Some("p-*.txt")],
        ),
        (
            &["xxd", "-r", "-", "/usr/local/bin/job"],
            &[Some("/usr/local/bin/job")],
        ),
        (&["xxd", "-c", "16", "in.txt", "out"], &[Some("out")]),
        (&["openssl", "enc", "-out", "/srv/o"], &[Some("/srv/o")]),
        (&["docker", "cp", "-", "app:/etc/x"], &[Some("/etc/x")]),
        (&["docker", "cp", "app:/etc/x", "/srv/x.txt"], &[]),
        (
            &["curl", "-T", "in.txt", "file:///etc/cron.d/j"],
            &[Some("/etc/cron.d/j")],
        ),
        (&["curl", "file:///etc/cron.d/j"], &[]),
        (&["curl", "-fsS", "u"], &[]),
    ];
    assert_written(table);
}

#[test]
fn tee_writes_behind_any_wrapper() {
    let table: &[(&[&str], &[usize])] = &[
        (&["tee", "-a", "x"], &[2]),
        (&["sudo", "tee", "/etc/x"], &[2]),
        (&["nice", "-n", "5", "tee", "x"], &[4]),
        (&["runuser", "-u", "root", "--", "tee", "x"], &[5]),
        (&["echo", "tee", "x"], &[]),
        (&["grep", "tee", "x"], &[]),
    ];
    for (w, want) in table {
        assert_eq!(&tee_targets(&words(w)), want, "{w:?}");
    }
}

#[test]
fn the_files_a_command_reads_as_more_than_data() {
    let table: &[(&[&str], &[usize])] = &[
        (&["sh", "job.sh"], &[1]),
        (&["bash", "-e", "./job.sh", "x"], &[2]),
        (&["nice", "sh", "job.sh"], &[2]),
        (&[".", "./s.sh"], &[1]),
        (&["source", "s.sh"], &[1]),
        (&["./f"], &[0]),
        (&["/tmp/job", "x"], &[0]),
        (&["xargs", "-a", "list", "rm"], &[2]),
        (&["xargs", "-alist", "rm"], &[1]),
        (&["xargs", "--arg-file=list", "rm"], &[1]),
        (&["sh", "-c", "echo x"], &[]),
        (&["cat", "job.sh"], &[]),
        (&["xargs", "rm"], &[]),
        (&["chmod", "+x", "f"], &[]),
    ];
    for (w, want) in table {
        let got: Vec<usize> = runs(&words(w)).into_iter().map(|(i, _)| i).collect();
        assert_eq!(&got, want, "{w:?}");
    }
}

#[test]
fn a_program_not_known_to_read_files_as_data_may_read_any_word_as_code() {
    let table: &[(&[&str], &[usize])] = &[
        (&["python3", "p.py"], &[1]),
        // A reader's options that read a file as code (`readers`).
        (&["awk", "-f", "a.awk", "x"], &[2]),
        (&["gawk", "-l", "ext", "x"], &[2]),
        (&["sed", "-f", "s", "x"], &[2]),
        (&["nice", "curl", "-K", "k"], &[3]),
        (&["tar", "-cT", "l", "x"], &[2]),
        (&["cat", "f"], &[]),
        (&["cp", "f", "g"], &[]),
        (&["grep", "-c", "x", "f"], &[]),
        (&["sudo", "rm", "-f", "f"], &[]),
        // A shell's script file is `runs`' (any file); its `-c` script is read itself.
        (&["sh", "job.sh", "x"], &[1]),
        (&["sh", "-c", ". ./f"], &[]),
    ];
    for (w, want) in table {
        let mut got: Vec<usize> = reads_again(&words(w))
            .into_iter()
            .map(|(i, ..)| i)
            .collect();
        got.sort_unstable();
        assert_eq!(&got, want, "{w:?}");
    }
}

#[test]
fn tee_writes_its_operands_and_names_match_without_dot_slash() {
    assert_eq!(tee_targets(&words(&["tee", "-a", "s.sh", "t"])), vec![2, 3]);
    assert_eq!(tee_targets(&words(&["tee", "--", "-x"])), vec![2]);
    assert!(tee_targets(&words(&["cat", "s.sh"])).is_empty());
    assert!(same(Some(b"./job.sh"), Some(b"job.sh")));
    assert!(same(None, Some(b"x")));
    assert!(!same(Some(b"out.txt"), Some(b"./deploy.sh")));
    assert_eq!(file_of(b"-alist"), b"list");
    assert_eq!(file_of(b"--arg-file=l"), b"l");
    assert_eq!(file_of(b"list"), b"list");
}

#[test]
fn a_substitution_that_names_a_written_file_prints_what_was_written() {
    let value = vec![Read::Variable("NAME".into())];
    let written = |name: Option<&str>| Filed {
        name: name.map(|n| n.as_bytes().to_vec()),
        line: 1,
        reads: value.clone(),
    };
    let filed = [written(Some("f")), written(Some("out.log"))];
    let table: &[(&str, bool)] = &[
        ("cat f", true),
        ("cat ./f", true),
        ("< f", true),
        ("<f", true),
        ("tr _ - <f", true),
        ("head -n1 'f'", true),
        ("cat f.bak", false),
        ("date +%F", false),
        // By its last segment: the command may have changed directory.
        ("cat /srv/f", true),
    ];
    for (text, want) in table {
        let got = named_in(text.as_bytes(), &filed);
        assert_eq!(!got.is_empty(), *want, "{text}");
    }
    let any = [written(None)];
    assert!(!named_in(b"cat \"$F\"", &any).is_empty());
    assert!(named_in(b"date", &any).is_empty());
}

#[test]
fn writers_inside_awk_sed_and_cp_from_stdin() {
    let table: &[(&[&str], &[Option<&str>])] = &[
        (
            &["awk", "{print > \"/etc/default/g\"}"],
            &[Some("/etc/default/g")],
        ),
        (&["awk", "{print >> \"out.txt\"}"], &[Some("out.txt")]),
        (&["awk", "{print > $2}"], &[None]),
        (&["awk", "$1 > 5 {print}"], &[]),
        (&["awk", "{if ($1 > 5) print}"], &[]),
        (
            &["sed", "-n", "w /etc/default/g"],
            &[Some("/etc/default/g")],
        ),
        (&["sed", "s/a/b/w /etc/cron.d/x"], &[Some("/etc/cron.d/x")]),
        (&["sed", "s/new w/x/"], &[]),
        (&["sed", "-e", "p;w out.txt"], &[Some("out.txt")]),
        // After an address (fe30r's last read): a line, `$`, a pattern, a range, `!`.
        (
            &["sed", "-n", "1w /etc/default/g"],
            &[Some("/etc/default/g")],
        ),
        (&["sed", "-n", "$ w /etc/x"], &[Some("/etc/x")]),
        (&["sed", "-n", "/^URL=/w /etc/x"], &[Some("/etc/x")]),
        (&["sed", "-n", r"\%a/b%w /etc/x"], &[Some("/etc/x")]),
        (&["sed", "-n", "1,/end/ !w /etc/x"], &[Some("/etc/x")]),
        (&["sed", "-n", "0~2W /etc/x"], &[Some("/etc/x")]),
        (&["sed", "-n", r"/a\/w/p"], &[]),
        (&["uniq", "-f", "1", "in.txt", "/etc/x"], &[Some("/etc/x")]),
        (&["uniq", "-f", "1", "in.txt"], &[]),
        (
            &["cp", "/dev/stdin", "/etc/default/g"],
            &[Some("/etc/default/g")],
        ),
        (&["cp", "a", "b"], &[]),
    ];
    assert_written(table);
}

/// Each row: a command's words, and the files `written` finds it writes (`None`: any).
fn assert_written(table: &[(&[&str], &[Option<&str>])]) {
    for (w, want) in table {
        let got: Vec<Option<String>> = written(&words(w), &[], &[])
            .into_iter()
            .map(|n| n.map(|n| String::from_utf8_lossy(&n).into_owned()))
            .collect();
        let want: Vec<Option<String>> = want.iter().map(|n| n.map(String::from)).collect();
        assert_eq!(got, want, "{w:?}");
    }
}

/// `scripts::script_files`: the words naming a file a program reads as its own program, by
/// option (bundled, attached, long, `=`), subcommand or operand.
#[test]
fn the_files_a_program_reads_as_its_program() {
    let table: &[(&[&str], &[&str])] = &[
        (&["sed", "-f", "e.txt", "in.csv"], &["e.txt"]),
        (&["sed", "-nf", "e.txt"], &["e.txt"]),
        (&["sed", "--file=e.txt"], &["e.txt"]),
        (&["awk", "-fprog.txt", "in.csv"], &["prog.txt"]),
        (&["gawk", "--include", "lib.txt"], &["lib.txt"]),
        (&["make", "--makefile=jobs.txt"], &["jobs.txt"]),
        (&["vim", "-S", "s.txt", "notes.txt"], &["s.txt"]),
        (&["ssh", "-F", "c.txt", "host"], &["c.txt"]),
        (&["bash", "--rcfile", "rc.txt"], &["rc.txt"]),
        (&["sqlite3", "-init", "i.txt", "db"], &["i.txt"]),
        (&["tmux", "source-file", "t.txt"], &["t.txt"]),
        (&["bc", "-q", "calc.txt"], &["calc.txt"]),
        (&["sed", "s/a/b/", "in.txt"], &[]),
        (&["awk", "{print}", "in.txt"], &[]),
        (&["ssh", "host", "--", "-F", "x"], &[]),
        (&["tmux", "new-session", "-d"], &[]),
    ];
    for (w, want) in table {
        let words = words(w);
        let got: Vec<&str> = scripts::script_files(&words, 0)
            .into_iter()
            .map(|(_, n)| std::str::from_utf8(n).unwrap())
            .collect();
        assert_eq!(&got, want, "{w:?}");
    }
}

/// `scripts::behind_any` and `scripts::run_operands`: a shell's script behind a wrapper
/// actiond does not know, and the operands of an awk or sed program that runs what it reads.
#[test]
fn scripts_behind_unknown_wrappers_and_programs_that_run_what_they_read() {
    let behind: &[(&[&str], &[usize])] = &[
        (&["systemd-run", "--wait", "sh", "f.txt"], &[3]),
        (&["runuser", "-u", "root", "--", "sh", "f.txt"], &[5]),
        (&["systemd-run", "sh", "-c", "cat f.txt"], &[]),
        (&["systemd-run", "python3", "-m", "http.server"], &[]),
        (&["grep", "sh", "notes.txt"], &[]),
    ];
    for (w, want) in behind {
        assert_eq!(&scripts::behind_any(&words(w)), want, "{w:?}");
    }
    let runs: &[(&[&str], &[usize])] = &[
        (&["awk", "{ system(\"ping \" $1) }", "h.txt"], &[2]),
        (
            &["awk", "-F:", "{ print | \"sh\" }", "a.txt", "b.txt"],
            &[3, 4],
        ),
        (&["awk", "$1 > 5 || $2 < 3", "n.txt"], &[]),
        (&["awk", "{ print $1 }", "h.txt"], &[]),
        (&["sed", "e", "f.txt"], &[2]),
        (&["sed", "-n", "s/^/echo /e", "f.txt"], &[3]),
        (&["sed", "-e", "1e date", "f.txt"], &[3]),
        (&["sed", "s/e/x/", "f.txt"], &[]),
        (&["sed", "-n", "/x/p", "f.txt"], &[]),
    ];
    for (w, want) in runs {
        let got: Vec<usize> = scripts::run_operands(&words(w), 0)
            .into_iter()
            .map(|(i, _)| i)
            .collect();
        assert_eq!(&got, want, "{w:?}");
    }
    // A file an awk program that runs commands names in its own text.
    let w = words(&["awk", "BEGIN { getline l < \"/srv/v.txt\"; system(l) }"]);
    assert_eq!(scripts::run_operands(&w, 0), vec![(1, &b"/srv/v.txt"[..])]);
}

#[test]
fn a_file_named_as_data_given_to_a_program_not_known_to_read_it_as_data_is_found() {
    // (command, the files found, each with the program)
    type Found<'a> = &'a [(&'a str, Option<&'a str>)];
    let table: &[(&[&str], Found)] = &[
        (
            &["python3", "-m", "pickle", "state.dat"],
            &[("state.dat", Some("python3"))],
        ),
        (
            &["sudo", "-u", "pi", "sysctl", "-p", "/srv/s.txt"],
            &[("/srv/s.txt", Some("sysctl"))],
        ),
        (
            &["node", "--env-file=/srv/e.txt", "app.js"],
            &[("/srv/e.txt", Some("node"))],
        ),
        (&["$", "/srv/n.txt"], &[("/srv/n.txt", None)]),
        (
            &["find", "/srv", "-exec", "mytool", "{}", ";"],
            &[("*", Some("mytool"))],
        ),
        (&["mytool", "--remove-chars", ":%-?"], &[]),
        (
            &["mytool", "/srv/jobs/*"],
            &[("/srv/jobs/*", Some("mytool"))],
        ),
        (&["cat", "/srv/n.txt"], &[]),
        (&["lp", "/srv/r.pdf"], &[]),
        (
            &["tar", "-czf", "b.tgz", "-T", "l.txt"],
            &[("l.txt", Some("tar"))],
        ),
        // A shell's script is read as one, but which of its parameters names a data file
        // is not followed (fe30w F5).
        (
            &["sh", "-c", ". \"$1\"", "sh", "/srv/n.txt"],
            &[("/srv/n.txt", Some("sh"))],
        ),
        (
            &["sh", "-ec", "sh \"$0\"", "/srv/n.txt"],
            &[("/srv/n.txt", Some("sh"))],
        ),
        (&["su", "pi", "-c", "cat > /tmp/x.txt"], &[]),
        // fe30w F1-F4, F7: a reader's option that reads code, in every spelling.
        (
            &["tar", "-I", "sh /srv/n.txt", "-cf", "x.tar", "d"],
            &[("/srv/n.txt", Some("tar"))],
        ),
        (
            &["tar", "--use-compress=/srv/n.txt", "-cf", "x"],
            &[("/srv/n.txt", Some("tar"))],
        ),
        (
            &["tar", "cfI", "x.tar", "/srv/n.txt", "d"],
            &[("/srv/n.txt", Some("tar"))],
        ),
        (
            &["rsync", "-ae", "sh /srv/n.txt", "a", "b:"],
            &[("/srv/n.txt", Some("rsync"))],
        ),
        (
            &["rsync", "-aesh /srv/n.txt", "a", "b:"],
            &[("/srv/n.txt", Some("rsync"))],
        ),
        (
            &["git", "-c", "core.fsmonitor=sh /srv/n.txt", "status"],
            &[("/srv/n.txt", Some("git"))],
        ),
        (
            &["git", "ls-remote", "ext::sh /srv/n.txt"],
            &[("/srv/n.txt", Some("git"))],
        ),
        (
            &["ssh", "-oProxyCommand=sh /srv/n.txt", "nas"],
            &[("/srv/n.txt", Some("ssh"))],
        ),
        (
            &["awk", "-W", "exec", "/srv/p.txt"],
            &[("/srv/p.txt", Some("awk"))],
        ),
        (
            &["awk", "@include \"/srv/p.txt\"", "/etc/hostname"],
            &[("/srv/p.txt", Some("awk"))],
        ),
        (
            &["mpv", "-include=/srv/x.txt", "/srv/a.mp3"],
            &[("/srv/x.txt", Some("mpv"))],
        ),
        (
            &[
                "ffmpeg",
                "-f",
                "concat",
                "-safe",
                "0",
                "-i",
                "/srv/l.txt",
                "o.mp3",
            ],
            &[("/srv/l.txt", Some("ffmpeg")), ("o.mp3", Some("ffmpeg"))],
        ),
        (
            &[
                "python3",
                "-c",
                "import runpy; runpy.run_path('/srv/n.txt')",
            ],
            &[("/srv/n.txt", Some("python3"))],
        ),
        // A file the command writes is the writer side's, but only the file itself: a word
        // that merely ends in its name is another file.
        (
            &["tar", "-cf", "x.txt", "-T", "/srv/x.txt"],
            &[("/srv/x.txt", Some("tar"))],
        ),
        (
            &["mytool", "-o", "/srv/out.txt"],
            &[("/srv/out.txt", Some("mytool"))],
        ),
        // What they read as data loads.
        (&["tar", "-czf", "/srv/b.tgz", "/srv/notes.txt"], &[]),
        (&["awk", "{ print $1 }", "/srv/in.csv"], &[]),
        (&["git", "commit", "-F", "/srv/msg.txt"], &[]),
    ];
    for (command, expected) in table {
        let w = words(command);
        let found: Vec<(String, Option<String>)> = unknown_readers(&w, &data_uses_of(&w))
            .into_iter()
            .map(|(_, f, p)| {
                let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
                (text(&f), p.as_deref().map(text))
            })
            .collect();
        let expected: Vec<(String, Option<String>)> = expected
            .iter()
            .map(|(f, p)| (f.to_string(), p.map(str::to_string)))
            .collect();
        assert_eq!(found, expected, "{command:?}");
    }
}

#[test]
fn a_file_named_as_data_in_a_programs_environment_is_found() {
    let table: &[(&str, Option<&str>)] = &[
        ("NODE_OPTIONS=--require=/srv/n.txt", Some("/srv/n.txt")),
        ("PYTHONPATH=/opt/lib:/srv/dl/x.zip", Some("/srv/dl/x.zip")),
        ("WGETRC=./w.txt", Some("w.txt")),
        ("BASH_ENV=notes.txt", Some("notes.txt")),
        ("LC_ALL=C", None),
        ("OUT=/srv/report", None),
        // Not an environment variable: an operand (`dd if=`) or an option.
        ("--config=/srv/c.txt", None),
        ("include.path=/srv/c.txt", None),
    ];
    for &(word, expected) in table {
        let found = environment_file(word.as_bytes()).map(|(f, _)| f);
        assert_eq!(found, expected.map(str::as_bytes), "{word}");
    }
}

#[test]
fn a_file_named_as_data_linked_run_by_xargs_or_derived_is_found() {
    // (command, the names `data_uses_of` finds)
    let table: &[(&[&str], &[&str])] = &[
        // fe30w F10: a link under a data name to a file not known to hold data.
        (
            &["ln", "-sf", "/root/.bashrc", "/srv/today.log"],
            &["/srv/today.log"],
        ),
        (
            &["cp", "-s", "/etc/cron.d/job", "/srv/job.txt"],
            &["/srv/job.txt"],
        ),
        (&["ln", "/srv/a.txt", "/srv/b.txt"], &[]),
        (&["cp", "/etc/hostname", "/srv/host.txt"], &[]),
        // fe30w F5: the items `xargs` reads run as script files.
        (&["xargs", "-n1", "sh"], &["*"]),
        (&["xargs", "sh", "-c", "echo \"$1\"", "sh"], &[]),
        (&["xargs", "rm", "--"], &[]),
        // fe30w F5: a program a pattern picks.
        (
            &["find", "/srv", "-name", "*.txt", "-exec", "{}", ";"],
            &["*.txt"],
        ),
        // fe30w F7, F8: every `-e` of sed; the suffix gunzip drops.
        (
            &["sed", "-n", "-e", "p", "-e", "e", "/srv/n.txt"],
            &["/srv/n.txt"],
        ),
        (&["gunzip", "-S", ".txt", "/srv/job.txt"], &["/srv/job.txt"]),
        (&["gunzip", "/srv/notes.txt.gz"], &[]),
    ];
    for (command, expected) in table {
        let found: Vec<String> = data_uses_of(&words(command))
            .into_iter()
            .map(|(_, name, _)| String::from_utf8_lossy(&name).into_owned())
            .collect();
        assert_eq!(found, *expected, "{command:?}");
    }
}

#[test]
fn a_program_that_prints_names_sums_or_counts_prints_no_content() {
    let table: &[(&str, &[&str])] = &[
        ("ls -t /srv/scans/*.pdf | head -n 1", &[]),
        ("sha256sum /srv/b.tgz", &[]),
        ("cat /srv/n.txt", &["/srv/n.txt"]),
        ("ls /srv/a.txt; cat /srv/n.txt", &["/srv/n.txt"]),
        ("X=1 stat /srv/n.txt", &[]),
    ];
    for (text, expected) in table {
        assert_eq!(data_printed(text.as_bytes()), *expected, "{text}");
    }
    let sums = words(&["sha256sum", "/srv/b.tgz", "/srv/c.txt"]);
    assert!(named_by(&sums, &[]).is_empty());
    let cat = words(&["cat", "/srv/c.txt"]);
    assert_eq!(named_by(&cat, &[]).len(), 1);
}
