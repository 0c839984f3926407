//! fe30v F1, F6, F9, F11: the reader side of the data-file rule turned round. A file named as
//! data (`.txt`, `.json`, `.dat`, `.zip`, …) may hold a value any action wrote, so it may be
//! given only to a program known to read it as data (`template::filed::readers`), and never
//! put into a program's environment. Each attack below loaded before (no argument at all) and
//! is refused at its path with the fix; the neighbours (printing, playing, archiving, reading
//! with `jq`, a program the author vouches for with `allowUnknownProgram`) load. The helpers
//! are `config_check`'s.

use crate::config_check::assert_refusals;

/// The loaders fe30v gave a data file by name (`python3 -m pickle` ran `id` as root), through
/// a wrapper, a loop variable, `find -exec`, an option joined with `=`, an `exec:` argv, and
/// the environment; a pid file picking the process to signal; extractors not on the list.
#[test]
fn a_file_named_as_data_goes_only_to_a_program_known_to_read_it_as_data() {
    let yaml = "\
actions:
  - title: unpickle
    shell: python3 -m pickle /srv/cache/state.dat
  - title: vpn behind sudo
    shell: sudo -u pi openvpn --config /srv/notes/vpn.txt --daemon
  - title: sysctl
    shell: sysctl -p /srv/notes/sysctl.txt
  - title: loop of pickles
    shell: for f in /srv/cache/*.dat; do python3 -m pickle \"$f\"; done
  - title: install what find names
    shell: find /srv/dl -name '*.tar.gz' -exec pip3 install {} +
  - title: node env file
    shell: node --env-file=/srv/notes/env.txt /opt/app/server.js
  - title: pid file
    shell: pkill -F /srv/notes/pid.txt
  - title: extract with pax
    shell: pax -r -f /srv/dl/theme.tar
  - title: exec a loader
    exec: [insmod, /srv/dl/driver.gz]
  - title: node options
    shell: NODE_OPTIONS=--require=/srv/notes/n.txt node /opt/app/server.js
  - title: python path
    shell: env PYTHONPATH=/srv/dl/lib.zip python3 -m tool
  - title: exported wgetrc
    shell: export WGETRC=/srv/notes/w.txt; wget -O /srv/dl/x.txt https://example.com/
  - title: tar names from a list
    shell: tar -czf /srv/backup.tgz -T /srv/notes/list.txt
  - title: print a report
    shell: lp -d office /srv/reports/today.pdf
  - title: play the alarm
    shell: aplay -q /srv/sounds/alarm.wav
  - title: read state
    shell: jq -r .url /srv/state.json
  - title: archive notes
    shell: tar -czf /srv/backup.tgz /srv/notes/*.txt
  - title: own tool, vouched for
    shell: /usr/local/bin/report --in /srv/data.csv
    allowUnknownProgram: true
  - title: a name in a shell variable
    shell: F=/srv/notes/today.txt; cat \"$F\"
  - title: a locale for sort
    shell: LC_ALL=C sort -o /srv/sorted.txt /srv/notes.txt
";
    assert_refusals(
        yaml,
        &[
            (
                "actions[0].shell",
                "to `python3`, which actiond does not know",
            ),
            ("actions[1].shell", "to `openvpn`"),
            ("actions[2].shell", "to `sysctl`"),
            ("actions[3].shell", "to `python3`"),
            ("actions[4].shell", "to `pip3`"),
            (
                "actions[5].shell",
                "`/srv/notes/env.txt`, a file named as data, to `node`",
            ),
            ("actions[6].shell", "to `pkill`"),
            ("actions[7].shell", "to `pax`"),
            ("actions[8].exec", "to `insmod`"),
            ("actions[9].shell", "puts into a program's environment"),
            ("actions[10].shell", "puts into a program's environment"),
            ("actions[11].shell", "puts into a program's environment"),
            (
                "actions[12].shell",
                "`/srv/notes/list.txt`, a file named as data, to `tar`",
            ),
        ],
        &[
            "actions[13]",
            "actions[14]",
            "actions[15]",
            "actions[16]",
            "actions[17]",
            "actions[18]",
            "actions[19]",
        ],
    );
}

/// fe30u's third low finding: a value written into a file not known to hold data was refused
/// with the fix for shell code (`sh -c 'echo "$1"' sh {{ v }}`), which does not apply to a
/// file; the refusal says the file outlives the press and gives the fix for files.
#[test]
fn a_value_kept_in_a_file_not_known_to_hold_data_is_refused_with_the_fix_for_files() {
    let yaml = "\
actions:
  - title: kiosk url
    shell: echo {{ v }} > /srv/kiosk.conf
    arguments: [{name: v, type: ascii_sentence}]
";
    assert_refusals(
        yaml,
        &[(
            "actions[0].shell",
            "which outlives the press, and another program may read it as code or settings",
        )],
        &[],
    );
    let run = crate::config_check::check(yaml);
    let out = crate::config_check::output(&run);
    assert!(
        out.contains("write the value into a file known to hold data only"),
        "{out}"
    );
    assert!(!out.contains("positional parameter"), "{out}");
}

/// fe30w's attacks (each loaded before, three proven running a note as root): a command in
/// a reader's option (`tar -I`, `git -c core.fsmonitor=`, `rsync -e`), in any spelling GNU's
/// parser or a cluster takes (`--use-compress=`, `cfI`, `-oProxyCommand=`), a name the
/// shell builds (`"$d/note.txt"`, `note.$e`), a parameter of `sh -c`, the items of `xargs
/// sh`, a program `find -exec {}` picks, an export after the assignment, mawk's `-W exec`,
/// sed's second `-e`, `gunzip -S`, a link under a data name, a program text that loads one.
/// Their neighbours load.
#[test]
fn a_file_named_as_data_reaches_no_code_through_spellings_names_links_or_items() {
    let yaml = "\
actions:
  - title: fsmonitor
    shell: git -c core.fsmonitor='sh /srv/state/note.txt' -C /srv/repo status
  - title: compress program
    shell: tar --use-compress='sh /srv/state/note.txt' -cf /srv/b.tar /srv/d
  - title: old-style tar
    shell: tar cfI /srv/b.tar 'sh /srv/state/note.txt' /srv/d
  - title: proxy joined
    shell: ssh -oProxyCommand='sh /srv/state/note.txt' nas true
  - title: built name
    shell: d=/srv/state; sh \"$d/note.txt\"
  - title: built ending
    shell: e=txt; . /srv/state/note.$e
  - title: parameter
    shell: sh -c '. \"$1\"' sh /srv/state/note.txt
  - title: xargs items
    shell: ls /srv/state/*.txt | xargs -n1 sh
  - title: found program
    shell: find /srv/state -name '*.txt' -exec {} \\;
  - title: export later
    shell: BASH_ENV=/srv/state/note.txt; export BASH_ENV; bash -c true
  - title: mawk exec
    shell: awk -W exec /srv/state/prog.txt
  - title: second expression
    shell: sed -n -e p -e e /srv/state/note.txt
  - title: suffix
    shell: gunzip -S .txt /srv/state/job.txt
  - title: link under a data name
    shell: ln -sf /root/.bashrc /srv/state/today.log
  - title: program text
    shell: python3 -c 'import runpy; runpy.run_path(\"/srv/state/note.txt\")'
  - title: git log of a note
    shell: git -C /srv/repo add /srv/state/note.txt
  - title: archive the notes
    shell: tar -czf /srv/b.tgz -C /srv state/note.txt
  - title: link two data names
    shell: ln -sf /srv/state/today.log /srv/state/latest.log
  - title: a name built from a directory
    shell: d=/srv/state; cat \"$d/note.txt\"
";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", "to `git`"),
            ("actions[1].shell", "to `tar`"),
            ("actions[2].shell", "to `tar`"),
            ("actions[3].shell", "to `ssh`"),
            ("actions[4].shell", "runs as code `/srv/state/note.txt`"),
            ("actions[5].shell", "runs as code `/srv/state/note.txt`"),
            ("actions[6].shell", "to `sh`"),
            ("actions[7].shell", "runs each item `xargs` reads"),
            ("actions[8].shell", "runs as code `*.txt`"),
            ("actions[9].shell", "puts into a program's environment"),
            ("actions[10].shell", "to `awk`"),
            ("actions[11].shell", "whose script runs what it reads"),
            ("actions[12].shell", "decompresses, to `/srv/state/job`"),
            ("actions[13].shell", "makes a link to `/root/.bashrc`"),
            ("actions[14].shell", "to `python3`"),
        ],
        &["actions[15]", "actions[16]", "actions[17]", "actions[18]"],
    );
}

/// fe30w's ordinary actions refused before (a camera snapshot, an archive listed, a log
/// rotated, a state file replaced, sums, the newest scan printed, a container's log copied
/// out, a data file split into data parts) load; an extraction spelled with a prefix of
/// `--extract` is refused as the whole option is.
#[test]
fn ordinary_actions_on_data_files_load_and_an_abbreviated_extraction_does_not() {
    let yaml = "\
actions:
  - title: extract, abbreviated
    shell: tar --ext -f /srv/dl/theme.tar -C /home/pi
  - title: snapshot
    shell: rpicam-still -n -o /srv/cam/snap.jpg
  - title: list an archive
    shell: unzip -l /srv/dl/theme.zip
  - title: rotate a log
    shell: mv /srv/logs/app.log /srv/logs/app.log.1
  - title: replace state
    shell: jq '.count += 1' /srv/state.json > /srv/state.json.tmp && mv /srv/state.json.tmp /srv/state.json
  - title: sums
    shell: sha256sum /srv/backup/*.tgz > /srv/backup/SHA256SUMS
  - title: newest scan
    shell: lp -d office \"$(ls -t /srv/scans/*.pdf | head -n 1)\"
  - title: a container's log
    shell: docker cp app:/var/log/app.log /srv/logs/app.log
  - title: parts
    shell: split -l 100 --additional-suffix=.txt /srv/notes/n.txt /srv/parts/n-
";
    assert_refusals(
        yaml,
        &[("actions[0].shell", "the content of `/srv/dl/theme.tar`")],
        &[
            "actions[1]",
            "actions[2]",
            "actions[3]",
            "actions[4]",
            "actions[5]",
            "actions[6]",
            "actions[7]",
            "actions[8]",
        ],
    );
}

/// fe30x's attacks, each loaded at 125339d (seven proven end to end as root): an extraction
/// in a group fed by a pipe, `N<>FILE` and `>& FILE` as writes, bash's brace expansion on
/// the run side, `exec:` extractions and copies of a data file, sqlite3's archive mode,
/// `gunzip -N`, options that hold a command (`git send-email --to-cmd`, `wget
/// --use-askpass`, sox's `|CMD`), `iconv -o`, a link from a data directory into one where a
/// data file is not data. The neighbours load: a url of another host is no local file.
#[test]
fn fe30x_attacks_are_refused_and_their_neighbours_load() {
    let yaml = "\
actions:
  - title: extraction in a group
    shell: curl -s {{ url }} | (tar xzf - -C /)
    arguments: [{name: url, type: url}]
  - title: read-write redirection
    shell: echo {{ v }} 1<> /etc/logrotate.d/app
    arguments: [{name: v, type: ascii_sentence}]
  - title: both streams
    shell: echo {{ v }} >& /etc/cron.d/job
    arguments: [{name: v, type: ascii_sentence}]
  - title: braces
    shell: . /srv/n/x.{txt,}
  - title: exec extraction
    exec: [tar, -xzf, /srv/dl/theme.tgz, -C, /]
  - title: exec copy
    exec: [dd, if=/srv/n/x.txt, of=/etc/logrotate.d/app]
  - title: sqlite3 archive
    shell: sqlite3 /srv/dl/theme.zip \".archive -x -C /srv/www\"
  - title: header name
    shell: gunzip -N -f /home/pi/notes.txt.gz
  - title: send-email
    shell: git -C /srv/repo send-email --to-cmd=\"sh /srv/n/x.txt\" x
  - title: iconv
    shell: iconv -f utf8 -t utf8 -o /etc/logrotate.d/app /srv/n/x.txt
  - title: link into logrotate
    shell: ln -sfn /etc/logrotate.d /srv/n/rot
  - title: a release from a url
    shell: curl -o /opt/app/app.bin https://example.com/app.tgz
  - title: a release link
    shell: ln -sfn /srv/releases/v2 /srv/current
  - title: sqlite backup
    shell: sqlite3 /srv/db.sqlite \".backup /srv/b.sqlite\"
";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", "the archive of an extraction"),
            ("actions[1].shell", "`/etc/logrotate.d/app`"),
            ("actions[2].shell", "`/etc/cron.d/job`"),
            ("actions[3].shell", "runs as code `/srv/n/x.{txt,}`"),
            ("actions[4].exec", "the content of `/srv/dl/theme.tgz`"),
            ("actions[5].exec", "the content of `/srv/n/x.txt`"),
            ("actions[6].shell", "the content of `/srv/dl/theme.zip`"),
            ("actions[7].shell", "decompresses, to `*`"),
            ("actions[8].shell", "to `git`"),
            ("actions[9].shell", "the content of `/srv/n/x.txt`"),
            ("actions[10].shell", "makes a link to `/etc/logrotate.d`"),
        ],
        &["actions[11]", "actions[12]", "actions[13]"],
    );
}

/// fe30x F7, F13, F14: a value picking where a tree comes from (rsync's source host, a
/// recursive wget's url) shares `git clone`'s rule, and a value that may hold `/` inside an
/// MQTT topic picks a topic further down. Their neighbours load.
#[test]
fn a_value_picking_a_trees_host_or_a_topics_levels_is_refused() {
    let yaml = "\
actions:
  - title: rsync daemon host
    shell: rsync -a \"{{ v }}::site/\" /srv/site/ && /srv/site/deploy.sh
    arguments: [{name: v, type: ascii_identifier}]
  - title: rsync ssh host
    shell: rsync -a {{ v }}:/srv/site/ /srv/site/
    arguments: [{name: v, type: ascii_identifier}]
  - title: wget mirror
    shell: wget -q -r -np -nH -P /srv/site http://{{ v }}/ && sh /srv/site/deploy.sh
    arguments: [{name: v, type: ascii_identifier}]
  - title: topic levels
    shell: mosquitto_pub -h localhost -t \"zigbee2mqtt/{{ v }}\" -m 1
    arguments: [{name: v, type: url}]
  - title: album backup
    shell: rsync -a /srv/photos/{{ v }}/ /backup/photos/{{ v }}/
    arguments: [{name: v, type: ascii_identifier}]
  - title: one room
    shell: mosquitto_pub -h localhost -t \"home/{{ room }}/set\" -m 1
    arguments: [{name: room, type: ascii_identifier}]
  - title: a download
    shell: wget -q -O /srv/dl/x.txt https://example.com/{{ v }}
    arguments: [{name: v, type: ascii_identifier}]
";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", "the host or url of a tree"),
            ("actions[1].shell", "the host or url of a tree"),
            ("actions[2].shell", "the host or url of a tree"),
            ("actions[3].shell", "a part of the topic"),
        ],
        &["actions[4]", "actions[5]", "actions[6]"],
    );
}
