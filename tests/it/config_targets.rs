//! Configs from fe30v's hunt (a value as an option through a `regex:` pattern, as the tree git
//! fetches, as the image or container docker acts on, as an MQTT topic, and the trigger forms
//! that let an upload pick a name or become a program), each beside the forms that must still
//! load: the check refuses the attack at its action's path with the fix, and the neighbours
//! load (no error names them). The helpers are `config_check`'s.

use crate::config_check::assert_refusals;

/// fe30v F14 (proven: a value became `find -delete`): a `regex:` pattern that admits a
/// leading `-` where the program reads options is refused, through a variable and a copy too;
/// after `--` (not `find`'s), inside a word, with a pattern whose first character is no `-`,
/// or with `allowLeadingDash: true`, it loads.
#[test]
fn a_pattern_that_admits_a_leading_dash_where_options_are_read_is_refused() {
    let yaml = "\
actions:
  - title: clean
    shell: find {{ v }} -name '*.tmp' -delete
    arguments: [{name: v, type: 'regex:^[A-Za-z0-9._-]{1,255}$'}]
  - title: archive
    exec: [tar, -cf, /backup/x.tar, -C, /srv, '{{ v }}']
    arguments: [{name: v, type: 'regex:[A-Za-z0-9._-]+'}]
  - title: variable
    shell: rm -f \"$ACTIOND_ARG_V\"
    arguments: [{name: v, type: 'regex:[a-z-]+'}]
  - title: copy
    shell: x=$V; du -sh \"$x\"
    arguments: [{name: v, type: 'regex:(a|-b)'}]
  - title: find after dashes
    shell: find -- {{ v }} -delete
    arguments: [{name: v, type: 'regex:[a-z-]+'}]
  - title: after dashes
    shell: rm -f -- {{ v }}
    arguments: [{name: v, type: 'regex:^[A-Za-z0-9._-]{1,255}$'}]
  - title: first character
    shell: find {{ v }} -name '*.tmp' -delete
    arguments: [{name: v, type: 'regex:^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$'}]
  - title: inside
    shell: find /srv/{{ v }} -name '*.tmp' -delete
    arguments: [{name: v, type: 'regex:^[A-Za-z0-9._-]{1,255}$'}]
  - title: allowed
    shell: amixer set Master {{ v }}
    arguments: [{name: v, type: 'regex:^-?[0-9]{1,2}$', allowLeadingDash: true}]
  - title: dot slash
    shell: find ./{{ v }} -delete
    arguments: [{name: v, type: 'regex:[a-z-]+'}]
";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", "may match such a value"),
            ("actions[0].shell", "allowLeadingDash: true"),
            ("actions[1].exec", "before any `--`"),
            ("actions[2].shell", "\"$ACTIOND_ARG_V\" starts an argument"),
            ("actions[3].shell", "a copy of argument \"v\"'s value"),
            ("actions[4].shell", "`find` reads an argument after `--`"),
        ],
        &[
            "actions[5]",
            "actions[6]",
            "actions[7]",
            "actions[8]",
            "actions[9]",
        ],
    );
}

/// fe30v F7: every git subcommand that fetches a tree from a url or remote a value picks
/// (`pull`, `fetch` then `reset --hard FETCH_HEAD`, `remote add`, `submodule add`, as `clone`
/// was) is refused, and so is a data file's content there; the author's remote with a branch
/// a value picks, and a url from `choices:`, load.
#[test]
fn a_value_never_picks_the_url_git_fetches_a_tree_from() {
    let yaml = "\
actions:
  - title: pull
    shell: git -C /srv/app pull {{ url }} main
    arguments: [{name: url, type: url}]
  - title: fetch reset
    shell: git -C /srv/app fetch {{ url }} main && git -C /srv/app reset --hard FETCH_HEAD
    arguments: [{name: url, type: url}]
  - title: remote add
    shell: git -C /srv/app remote add x {{ url }}
    arguments: [{name: url, type: url}]
  - title: submodule
    shell: git -C /srv/app submodule add {{ url }} lib
    arguments: [{name: url, type: url}]
  - title: data file
    shell: git -C /srv/app pull -- \"$(cat /srv/notes/url.txt)\"
  - title: branch
    shell: git -C /srv/app pull origin {{ branch }}
    arguments: [{name: branch, type: ascii_identifier}]
  - title: chosen
    shell: git -C /srv/app pull {{ url }} main
    arguments: [{name: url, choices: [{value: 'https://example.com/app.git'}]}]
  - title: plain
    shell: git -C /srv/app pull --ff-only
";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", "`git pull`"),
            ("actions[0].shell", "give the argument `choices:`"),
            ("actions[1].shell", "FETCH_HEAD"),
            ("actions[2].shell", "`git remote add NAME URL`"),
            ("actions[3].shell", "fetches a whole tree"),
            ("actions[4].shell", "`/srv/notes/url.txt`"),
        ],
        &["actions[5]", "actions[6]", "actions[7]"],
    );
}

/// fe30v F12 and F13: a value never picks the image, container or tag docker acts on (`pull`,
/// `tag`, `cp`, `restart`, `load -i`, an archive on `docker load`'s input), nor the topic an
/// MQTT message goes to, nor fills a Home Assistant discovery config; a subcommand not known to
/// run no program (`kube play`, a CLI plugin) is a program actiond does not know. The
/// author's choices, a value inside a name the author wrote, the commands that only show, and
/// a message to an ordinary topic load.
#[test]
fn a_value_never_picks_the_image_container_or_topic_a_trusted_program_acts_on() {
    let yaml = "\
actions:
  - title: pull
    shell: docker pull {{ v }}
    arguments: [{name: v, type: 'regex:^[a-z0-9./:_-]+$'}]
  - title: tag
    shell: docker tag {{ v }} homeassistant:latest
    arguments: [{name: v, type: ascii_identifier}]
  - title: copy into
    shell: docker cp /srv/notes/x.txt {{ v }}:/etc/cron.d/job
    arguments: [{name: v, type: ascii_identifier}]
  - title: restart
    shell: docker restart {{ v }}
    arguments: [{name: v, type: ascii_identifier}]
  - title: load upload
    shell: docker load -i {{ filepath }}
    execOnFileCreatedInDir: /srv/inbox
  - title: kube
    shell: podman kube play {{ v }}
    arguments: [{name: v, type: ascii_identifier}]
  - title: topic
    shell: mosquitto_pub -h localhost -t {{ v }} -m on
    arguments: [{name: v, type: 'regex:^[a-z/]+$'}]
  - title: discovery
    shell: mosquitto_pub -h localhost -r -t homeassistant/switch/x/config -m {{ v }}
    arguments: [{name: v, type: ascii_sentence}]
  - title: load piped
    shell: cat {{ filepath }} | docker load
    execOnFileCreatedInDir: /srv/inbox
  - title: restart chosen
    shell: docker restart {{ v }}
    arguments: [{name: v, choices: [{value: kodi}, {value: plex}], rejectNull: true}]
  - title: pull tag
    shell: docker pull example/app:{{ v }}
    arguments: [{name: v, type: ascii_identifier}]
  - title: logs
    shell: docker logs --tail 50 {{ v }}
    arguments: [{name: v, type: ascii_identifier}]
  - title: light
    shell: mosquitto_pub -h localhost -t home/{{ v }}/set -m on
    arguments: [{name: v, type: ascii_identifier}]
  - title: message
    shell: mosquitto_pub -h localhost -t home/kitchen/say -m {{ v }}
    arguments: [{name: v, type: ascii_sentence}]
";
    let target = "a `docker`/`podman` verb acts on";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", target),
            ("actions[1].shell", target),
            ("actions[1].shell", "give the argument `choices:`"),
            ("actions[2].shell", target),
            ("actions[3].shell", target),
            ("actions[4].shell", "`docker load -i`"),
            (
                "actions[5].shell",
                "a program actiond does not know `podman`",
            ),
            ("actions[6].shell", "the topic `mosquitto_pub -t`"),
            ("actions[7].shell", "discovery topic"),
            ("actions[8].shell", "the image archive `docker load`"),
        ],
        &[
            "actions[9]",
            "actions[10]",
            "actions[11]",
            "actions[12]",
            "actions[13]",
        ],
    );
}

/// fe30v F8: trigger forms where the dropped file picks a name or becomes a program: a
/// decompressor writing next to the upload under the name it derives (`job.sh.gz` makes
/// `job.sh`), `chmod +x` of the upload, `docker load -i` (above). To the decompressor's
/// output, with no execute bit, or on the author's own file, they load.
#[test]
fn an_upload_never_picks_a_decompressed_name_or_becomes_a_program() {
    let yaml = "\
actions:
  - title: gunzip
    shell: gunzip {{ filepath }}
    execOnFileCreatedInDir: /srv/inbox
  - title: executable
    shell: chmod +x {{ filepath }}
    execOnFileCreatedInDir: /srv/inbox
  - title: xz
    exec: [gunzip, --, '{{ filepath }}']
    execOnFileCreatedInDir: /srv/inbox
  - title: mode
    shell: chmod {{ mode }} /srv/share/notes.txt
    arguments: [{name: mode, type: ascii_identifier}]
  - title: gunzip out
    shell: gunzip -c {{ filepath }} > /srv/out/latest.txt
    execOnFileCreatedInDir: /srv/inbox
  - title: readable
    shell: chmod 644 {{ filepath }}
    execOnFileCreatedInDir: /srv/inbox
  - title: own program
    shell: chmod +x /usr/local/bin/report
";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", "a decompressor"),
            ("actions[1].shell", "the file `chmod` makes executable"),
            ("actions[1].shell", "give it no execute bit"),
            ("actions[2].exec", "a decompressor"),
            ("actions[3].shell", "the mode `chmod` sets"),
        ],
        &["actions[4]", "actions[5]", "actions[6]"],
    );
}

/// fe30v's confusing messages: an album backup `rsync -a SRC/ DIR/` copies what the album
/// holds and keeps no name the value makes, so it loads into a directory programs load
/// nothing from (into a home the name rule holds); `echo /usr/local/bin/report | at
/// {{ when }}` pipes the author's own script, so a `datetime` loads there (the script is read:
/// a value in it is refused).
#[test]
fn an_album_backup_and_a_constant_at_job_load() {
    let yaml = "\
actions:
  - title: album into home
    shell: rsync -a /srv/photos/{{ v }}/ /home/pi/
    arguments: [{name: v, type: ascii_identifier}]
  - title: album kept name
    shell: rsync -a /srv/photos/{{ v }} /backup/photos/
    arguments: [{name: v, type: ascii_identifier}]
  - title: at with a value
    shell: echo \"/usr/local/bin/report {{ v }}\" | at now
    arguments: [{name: v, type: ascii_identifier}]
  - title: album backup
    shell: rsync -a /srv/photos/{{ v }}/ /backup/photos/{{ v }}/
    arguments: [{name: v, type: ascii_identifier}]
  - title: report later
    shell: echo /usr/local/bin/report | at {{ when }}
    arguments: [{name: when, type: datetime}]
";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", "keeps the source's name"),
            ("actions[1].shell", "an album's"),
            ("actions[2].shell", "the commands `at` reads"),
        ],
        &["actions[3]", "actions[4]"],
    );
}
