//! fe30v: where a write lands (`template::filed`): names with a data ending run or loaded as
//! code by convention (F2), curl's `#N` output names a url fills (F3). Each attack is refused
//! at its action's path with the reason; the neighbours load.

use crate::config_check::assert_refusals;

/// F2 and F3: a value written into a file that a program runs or loads by its name (in any
/// case, wherever it is), and a url a value makes filling curl's `#1`.
#[test]
fn names_run_by_convention_and_curls_hash_names_are_refused() {
    let yaml = "\
actions:
  - title: flows
    shell: curl -fsS -o /srv/nodered/data/flows.json {{ url }}
    arguments: [{name: url, type: url}]
  - title: lock
    shell: printf '%s' \"$V\" > /srv/app/PACKAGE-LOCK.JSON
    arguments: [{name: v, type: ascii_sentence}]
  - title: netboot
    shell: echo {{ v }} >> /srv/tftp/e45f01ab/cmdline.txt
    arguments: [{name: v, type: ascii_sentence}]
  - title: docker
    shell: printf '%s' \"$V\" > /var/lib/docker/containers/abc/hostconfig.json
    arguments: [{name: v, type: ascii_sentence}]
  - title: hash
    shell: curl -fsS -o '/srv/dl/#1.txt' -- {{ v }}
    arguments: [{name: v, type: very_dangerous_raw_string}]
  - title: notes
    shell: printf '%s' \"$V\" > /srv/app/notes.json
    arguments: [{name: v, type: ascii_sentence}]
  - title: hash off
    shell: curl -g -fsS -o '/srv/dl/#1.txt' -- {{ v }}
    arguments: [{name: v, type: very_dangerous_raw_string}]
  - title: app data
    shell: echo {{ v }} >> /var/lib/app/notes.txt
    arguments: [{name: v, type: ascii_sentence}]
";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", "run as code by convention"),
            ("actions[1].shell", "run as code by convention"),
            ("actions[2].shell", "run as code by convention"),
            ("actions[3].shell", "run as code by convention"),
            ("actions[4].shell", "the url's `{…}`/`[…]` glob"),
            ("actions[4].shell", "`--globoff`"),
        ],
        &["actions[5]", "actions[6]", "actions[7]"],
    );
}

/// F10: a relative name written after `cd` (any `cd`: `..`, `-`, chained, to a variable
/// assigned plain text) or under `workingDirectory` lands in that directory; after a `cd` to
/// a directory the model cannot resolve it lands anywhere.
#[test]
fn a_relative_name_is_judged_where_it_lands() {
    let yaml = "\
actions:
  - title: cd rot
    shell: cd /etc/logrotate.d && echo {{ v }} > x.txt
    arguments: [{name: v, type: ascii_sentence}]
  - title: cd root
    shell: cd / && echo {{ v }} > etc/logrotate.d/x.txt
    arguments: [{name: v, type: ascii_sentence}]
  - title: cd hidden
    shell: cd /home/pi/.bashrc.d && echo {{ v }} > x.txt
    arguments: [{name: v, type: ascii_sentence}]
  - title: cd back
    shell: cd /etc/logrotate.d; cd /srv; cd -; echo {{ v }} > x.txt
    arguments: [{name: v, type: ascii_sentence}]
  - title: cd var
    shell: D=/etc/logrotate.d; cd \"$D\"; echo {{ v }} > x.txt
    arguments: [{name: v, type: ascii_sentence}]
  - title: working dir
    shell: echo {{ v }} > x.txt
    workingDirectory: /etc/logrotate.d
    arguments: [{name: v, type: ascii_sentence}]
  - title: cd unknown
    shell: cd -- \"$(cat /srv/dir.txt)\" && echo {{ v }} > x.txt
    arguments: [{name: v, type: ascii_sentence}]
  - title: cd notes
    shell: cd /srv/notes && echo {{ v }} > x.txt
    arguments: [{name: v, type: ascii_sentence}]
  - title: working notes
    shell: echo {{ v }} > x.txt
    workingDirectory: /srv
    arguments: [{name: v, type: ascii_sentence}]
  - title: cd whole path
    shell: cd -- \"$(cat /srv/dir.txt)\" && echo {{ v }} > /srv/notes/x.txt
    arguments: [{name: v, type: ascii_sentence}]
";
    let rot = "the file `/etc/logrotate.d/x.txt`";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", rot),
            ("actions[1].shell", rot),
            ("actions[2].shell", "the file `/home/pi/.bashrc.d/x.txt`"),
            ("actions[3].shell", rot),
            ("actions[4].shell", rot),
            ("actions[5].shell", rot),
            (
                "actions[6].shell",
                "a `cd` to a directory an expansion makes",
            ),
            ("actions[6].shell", "name the file by its whole path"),
        ],
        &["actions[7]", "actions[8]", "actions[9]"],
    );
}

/// F10 links and trees, F5: a write through a link the command made lands at its target; a
/// tree of data files copied, moved or synced into a directory whose files programs load, or
/// files whose names someone else chose into a home directory, are refused whatever the values.
#[test]
fn links_and_trees_land_where_they_lead() {
    let yaml = "\
actions:
  - title: link dir
    shell: ln -sfn /etc/logrotate.d /srv/notes/rot && echo {{ v }} > /srv/notes/rot/x.txt
    arguments: [{name: v, type: ascii_sentence}]
  - title: link file
    shell: ln -sf /etc/cron.d/job /srv/notes/job.txt; echo {{ v }} > /srv/notes/job.txt
    arguments: [{name: v, type: ascii_sentence}]
  - title: move tree
    shell: mv /srv/notes /etc/logrotate.d/
  - title: sync tree
    shell: rsync -a /srv/notes/ /etc/logrotate.d/
  - title: uploads home
    shell: mv /srv/inbox/* /home/pi/
  - title: sync home
    exec: [rsync, -a, /srv/inbox/, /home/pi/]
  - title: link own
    shell: ln -sfn /srv/notes/today.txt /srv/notes/now.txt; echo {{ v }} > /srv/notes/now.txt
    arguments: [{name: v, type: ascii_sentence}]
  - title: sync own
    shell: rsync -a /srv/notes/ /srv/archive/
  - title: pdfs home
    shell: mv /srv/inbox/*.pdf /home/pi/
  - title: inbox below home
    shell: cp -r /srv/inbox /home/pi/inbox/
  - title: tar pipe
    shell: tar -cf - -C /srv notes | tar -xf - -C /etc/logrotate.d
  - title: tar backup
    shell: tar -czf /srv/backup/notes.tgz -C /srv notes
";
    let tree = "the files of the tree, such as `/srv/notes/x.txt`";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", "the file `/etc/logrotate.d/x.txt`"),
            ("actions[1].shell", "the file `/etc/cron.d/job`"),
            ("actions[2].shell", tree),
            ("actions[2].shell", "copy data files by their own names"),
            ("actions[3].shell", tree),
            ("actions[4].shell", "into the home directory `/home/pi/`"),
            ("actions[5].exec", "into the home directory `/home/pi/`"),
            ("actions[10].shell", "the content of `notes/x.txt`"),
        ],
        &[
            "actions[6]",
            "actions[7]",
            "actions[8]",
            "actions[9]",
            "actions[11]",
        ],
    );
}

/// F4: the programs that write a named output file are one table: what `split`, `csplit`,
/// `xxd -r`, `openssl -out`, `curl -T … file://` and `docker cp` write lands in a file judged
/// as any other; `rename`, `mmv` and `run-parts --regex` on data files are refused.
#[test]
fn the_programs_that_write_a_named_file_are_judged_where_they_write() {
    let yaml = "\
actions:
  - title: split cron
    shell: split -l 100 /srv/notes/n.txt /etc/cron.d/job-
  - title: xxd bin
    shell: xxd -r /srv/notes/n.txt /usr/local/bin/job
  - title: openssl bin
    shell: openssl enc -d -base64 -in /srv/notes/n.txt -out /usr/local/bin/job
  - title: curl upload
    shell: curl -fsS -T /srv/notes/n.txt file:///etc/cron.d/job
  - title: docker cp
    shell: docker cp /srv/notes/{{ v }}.txt app:/etc/cron.d/job
    arguments: [{name: v, type: ascii_identifier}]
  - title: rename
    shell: rename 's/\\.txt$/.sh/' /srv/notes/*.txt
  - title: mmv
    shell: mmv '/srv/notes/*.txt' '/srv/bin/#1'
  - title: split parts
    shell: split -l 100 --additional-suffix=.txt /srv/notes/n.txt /srv/parts/n-
  - title: xxd hex
    shell: xxd /srv/notes/n.txt /srv/notes/n.hex.txt
  - title: docker out
    shell: docker cp app:/var/log/app.log /srv/logs/app.log
";
    let stored = "the content of `/srv/notes/n.txt`";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", stored),
            ("actions[1].shell", stored),
            ("actions[2].shell", stored),
            ("actions[3].shell", stored),
            ("actions[4].shell", "the file `/etc/cron.d/job`"),
            ("actions[5].shell", "renames, to names its expression makes"),
            ("actions[5].shell", "rename each file with `mv`"),
            ("actions[6].shell", "renames, to `/srv/bin/#1`"),
        ],
        &["actions[7]", "actions[8]", "actions[9]"],
    );
}

/// `exec:` as `shell:`: what a program writes into the file it names holds its values (`curl
/// -o F {{ url }}`), judged where it lands under `workingDirectory`, a shell it starts too;
/// and a wrapper that changes directory (`env -C`).
#[test]
fn exec_writes_land_under_the_working_directory() {
    let yaml = "\
actions:
  - title: exec curl cron
    exec: [curl, -fsS, -o, /etc/cron.d/job, '{{ url }}']
    arguments: [{name: url, type: url}]
  - title: exec curl relative
    exec: [curl, -fsS, -o, x.txt, '{{ url }}']
    workingDirectory: /etc/logrotate.d
    arguments: [{name: url, type: url}]
  - title: exec shell relative
    exec: [sh, -c, 'echo \"$1\" > x.txt', sh, '{{ v }}']
    workingDirectory: /etc/logrotate.d
    arguments: [{name: v, type: ascii_sentence}]
  - title: env chdir
    shell: printf %s {{ v }} | env -C /etc/logrotate.d tee x.txt
    arguments: [{name: v, type: ascii_sentence}]
  - title: exec curl notes
    exec: [curl, -fsS, -o, /srv/dl/page.txt, '{{ url }}']
    arguments: [{name: url, type: url}]
  - title: exec curl own dir
    exec: [curl, -fsS, -o, page.txt, '{{ url }}']
    workingDirectory: /srv/dl
    arguments: [{name: url, type: url}]
";
    assert_refusals(
        yaml,
        &[
            ("actions[0].exec", "the file `/etc/cron.d/job`"),
            ("actions[1].exec", "the file `/etc/logrotate.d/x.txt`"),
            ("actions[2].exec", "the file `/etc/logrotate.d/x.txt`"),
            ("actions[3].shell", "the file `/etc/logrotate.d/x.txt`"),
        ],
        &["actions[4]", "actions[5]"],
    );
}
