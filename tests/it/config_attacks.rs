//! Configs from attacks on the shell model and from its audits, each beside the forms that must
//! still load: the check refuses the attack at its action's path with the fix, and the
//! neighbours load (no error names them). The helpers are `config_check`'s.

use crate::config_check::{assert_exit, assert_refusals, check, output};

/// The audited forms of the programs actiond trusts (`template::audit`): a value as the file
/// curl uploads or reads its options from, the unit a `systemctl` verb acts on, the
/// environment `systemctl set-environment` gives every service, tar's archive (`HOST:FILE`
/// runs a remote shell), a whole `ssh -o` setting, `mpc`'s command, and `ffmpeg`, which is
/// trusted no more. Each is refused at load naming the place; the safe forms load (the
/// author's choices, a value inside a name the author wrote, a number, a `url`).
#[test]
fn a_value_in_an_audited_form_of_a_trusted_program_is_refused_at_load() {
    let yaml = "\
actions:
  - title: upload
    shell: curl -fsS -T {{ file }} https://nas.local/upload/
    arguments: [{name: file, type: ascii_sentence}]
  - title: profile
    exec: [curl, -sK, '{{ profile }}', 'https://nas.local/']
    arguments: [{name: profile, type: ascii_identifier}]
  - title: restart
    shell: sudo systemctl restart {{ service }}
    arguments: [{name: service, type: ascii_identifier}]
  - title: mode
    shell: systemctl set-environment APP_MODE={{ mode }}
    arguments: [{name: mode, type: ascii_identifier}]
  - title: archive
    shell: tar -czf {{ archive }} /srv/data
    arguments: [{name: archive, type: ascii_sentence}]
  - title: ssh option
    shell: ssh -o {{ opt }} pi@backup uptime
    arguments: [{name: opt, type: ascii_sentence}]
  - title: mpc
    shell: mpc {{ cmd }}
    arguments: [{name: cmd, type: ascii_identifier}]
  - title: ffmpeg
    shell: ffmpeg -i {{ src }} /tmp/out.mp4
    arguments: [{name: src, type: ascii_sentence}]
  - title: restart chosen
    shell: sudo systemctl restart {{ service }}
    arguments: [{name: service, choices: [{value: kodi}, {value: mosquitto}]}]
  - title: upload written
    shell: curl -fsS -T /srv/reports/today.pdf https://nas.local/upload/{{ name }}
    arguments: [{name: name, type: ascii_identifier}]
  - title: instance
    shell: systemctl restart app@{{ inst }}.service
    arguments: [{name: inst, type: ascii_identifier}]
  - title: archive named
    shell: tar -czf /backup/{{ name }}.tgz /srv/data
    arguments: [{name: name, type: ascii_identifier}]
  - title: volume
    shell: mpc volume {{ n }}
    arguments: [{name: n, type: int}]
  - title: ffmpeg url
    shell: ffmpeg -i {{ src }} /tmp/out.mp4
    arguments: [{name: src, type: url}]
  - title: ssh timeout
    shell: ssh -o ConnectTimeout={{ n }} pi@backup uptime
    arguments: [{name: n, type: int}]
";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", "a file curl sends"),
            ("actions[0].shell", "write the file's name out"),
            ("actions[1].exec", "`curl -K`"),
            ("actions[2].shell", "the unit a `systemctl` verb acts on"),
            ("actions[2].shell", "debug-shell.service"),
            ("actions[3].shell", "`systemctl set-environment`"),
            ("actions[4].shell", "`tar -f`"),
            ("actions[5].shell", "`ssh -o`"),
            ("actions[6].shell", "the command of `mpc`"),
            (
                "actions[7].shell",
                "a program actiond does not know `ffmpeg`",
            ),
            // A url too: ffmpeg follows a playlist's `file:` entries, and no program
            // actiond does not know takes a url as data on its word alone.
            (
                "actions[13].shell",
                "a program actiond does not know `ffmpeg`",
            ),
        ],
        &[
            "actions[8]",
            "actions[9]",
            "actions[10]",
            "actions[11]",
            "actions[12]",
            "actions[14]",
            "actions[17]",
        ],
    );
}

/// A value inside an interpreter's program text (`python3 -c`, `perl -e`, `node -e`, `php
/// -r`) is code, whatever its type (a `url` may hold `'` and `(`): refused at load with the
/// safe forms; the value as an argument after the text loads.
#[test]
fn a_value_in_an_interpreters_program_text_is_refused_at_load() {
    let yaml = "\
actions:
  - title: python
    shell: python3 -c \"print('{{ u }}')\"
    arguments: [{name: u, type: url}]
  - title: perl
    exec: [perl, -e, \"print '{{ u }}'\"]
    arguments: [{name: u, type: url}]
  - title: node
    exec: [node, -e, 'console.log(\"{{ u }}\")']
    arguments: [{name: u, type: url}]
  - title: safe
    shell: python3 -c 'import sys; print(sys.argv[1])' {{ u }}
    arguments: [{name: u, type: url}]
";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", "the program text an interpreter runs"),
            ("actions[0].shell", "sys.argv[1]"),
            ("actions[1].exec", "the program text an interpreter runs"),
            ("actions[2].exec", "the program text an interpreter runs"),
        ],
        &["actions[3]"],
    );
}

/// The same class, wider: a file written by a here-document that expands a value (the body
/// read after the line, so also a command later on that line), and a written file given to
/// a program not known to read it as data only (`python3 FILE`, `awk -f`, `curl -K`, or on
/// its input: `python3 < FILE`, `curl -K -`). A file handled as data (`cat`, `cp`, `grep`,
/// `rm`) and a here-document that expands nothing load.
#[test]
fn a_value_written_by_a_here_document_or_given_to_a_code_reader_is_refused_at_load() {
    let yaml = "\
actions:
  - title: heredoc
    shell: |
      cat > job.sh <<EOF
      echo $NAME
      EOF
      sh job.sh
    arguments: [{name: name, type: ascii_sentence}]
  - title: heredoc same line
    shell: |
      tee job.sh > /dev/null <<EOF; sh job.sh
      echo $NAME
      EOF
    arguments: [{name: name, type: ascii_sentence}]
  - title: python
    shell: printf '%s\\n' \"$NAME\" > prog.txt; python3 prog.txt
    arguments: [{name: name, type: ascii_sentence}]
  - title: awk
    shell: printf '%s\\n' \"$NAME\" > a.awk; awk -f a.awk /etc/hosts
    arguments: [{name: name, type: ascii_sentence}]
  - title: stdin
    shell: printf '%s\\n' \"$NAME\" > prog.txt; python3 < prog.txt
    arguments: [{name: name, type: ascii_sentence}]
  - title: curl config
    shell: printf '%s\\n' \"$NAME\" | curl -K - https://example.com
    arguments: [{name: name, type: ascii_sentence}]
  - title: data
    shell: printf '%s\\n' \"$NAME\" > out.txt; cat out.txt; cp out.txt /srv/o.txt; grep -c x out.txt; rm -f out.txt
    arguments: [{name: name, type: ascii_sentence}]
  - title: static
    shell: |
      cat > job.sh <<EOF
      echo hello
      EOF
      sh job.sh \"$NAME\"
    arguments: [{name: name, type: ascii_sentence}]
";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", "the file `job.sh`, which line 1 writes"),
            ("actions[1].shell", "the file `job.sh`"),
            (
                "actions[2].shell",
                "the file `prog.txt`, which line 1 writes a value into and a program this \
                 command runs is given, which may read it as code",
            ),
            ("actions[3].shell", "the file `a.awk`"),
            ("actions[4].shell", "the standard input of"),
            ("actions[5].shell", "the standard input of"),
        ],
        &["actions[6]", "actions[7]"],
    );
}

/// A program actiond does not know may read any argument as more than data: `make` pastes a
/// variable into a recipe, `mail` pipes to a `|command` recipient, a downloader may treat a
/// value as a file of options. So a `url` or an `email` among its arguments is refused as the
/// text types are, unless the argument says the program takes it as data only; a known
/// program (`curl`), program text written out (`python3 -c TEXT {{ v }}`), a `datetime` and
/// a `checkbox` load.
#[test]
fn a_url_or_an_email_reaches_only_a_program_known_to_take_it_as_data() {
    let yaml = "\
actions:
  - title: mail
    shell: mail -s report {{ to }} < /srv/report
    arguments: [{name: to, type: email}]
  - title: download
    shell: yt-dlp -o '/srv/media/%(title)s.%(ext)s' {{ video }}
    arguments: [{name: video, type: url}]
  - title: wrapped
    shell: chrt -i 0 /usr/local/bin/fetch {{ video }}
    arguments: [{name: video, type: url}]
  - title: mail allowed
    shell: mail -s report {{ to }} < /srv/report
    arguments: [{name: to, type: email, allowUnknownProgram: true}]
  - title: curl
    shell: curl -fsS -- {{ video }}
    arguments: [{name: video, type: url}]
  - title: program text
    shell: python3 -c 'import sys; print(sys.argv[1])' {{ video }}
    arguments: [{name: video, type: url}]
  - title: at
    shell: schedule-it {{ when }} {{ on }}
    arguments: [{name: when, type: datetime}, {name: on, type: checkbox}]
";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", "a program actiond does not know `mail`"),
            ("actions[0].shell", "allowUnknownProgram: true"),
            (
                "actions[1].shell",
                "a program actiond does not know `yt-dlp`",
            ),
            ("actions[2].shell", "a program actiond does not know `chrt`"),
        ],
        &["actions[3]", "actions[4]", "actions[5]", "actions[6]"],
    );
}

/// fe30o F1, F3-F6: a value written into a file that outlives the press, which another
/// program reads as code: a service's `/etc/default` file, a profile reached through a
/// temporary file and `mv`, a path kept in a variable or made by `$HOME`, `tee` behind `sudo`
/// or `nice`, and a bare name in the working directory. Only a file known to hold data may
/// hold a value; those load.
#[test]
fn a_value_is_written_only_into_a_file_known_to_hold_data() {
    let yaml = "\
actions:
  - title: default file
    shell: echo \"WEBHOOK_URL={{ url }}\" > /etc/default/backup
    arguments: [{name: url, type: url}]
  - title: moved into place
    shell: echo \"export http_proxy={{ url }}\" > /tmp/proxy.txt && mv /tmp/proxy.txt /etc/profile.d/proxy.sh
    arguments: [{name: url, type: url}]
  - title: path in a variable
    shell: |
      conf=/etc/profile.d/proxy.sh
      echo \"export http_proxy={{ url }}\" > \"$conf\"
    arguments: [{name: url, type: url}]
  - title: home profile
    shell: echo \"export http_proxy={{ url }}\" >> $HOME/.profile
    arguments: [{name: url, type: url}]
  - title: sudo tee
    shell: echo \"export http_proxy={{ url }}\" | sudo tee /etc/profile.d/proxy.sh > /dev/null
    arguments: [{name: url, type: url}]
  - title: nice tee
    shell: echo \"{{ address }}\" | nice tee -a /etc/aliases > /dev/null
    arguments: [{name: address, type: email}]
  - title: textarea
    shell: 'echo \"{{ content }}\" > file'
    arguments: [{name: content, type: raw_string_multiline}]
  - title: text file
    shell: 'echo \"{{ content }}\" > notes.txt'
    arguments: [{name: content, type: raw_string_multiline}]
  - title: temporary then data
    shell: printf '%s\\n' {{ url }} > /tmp/urls.txt && cp /tmp/urls.txt /srv/urls.txt
    arguments: [{name: url, type: url}]
  - title: log
    shell: echo \"pressed with {{ url }}\" | tee -a /var/log/presses.log
    arguments: [{name: url, type: url}]
  - title: a number anywhere
    shell: echo \"LEVEL={{ n }}\" > /etc/default/level
    arguments: [{name: n, type: int}]
";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", "the file `/etc/default/backup`"),
            ("actions[0].shell", "not known to hold data"),
            ("actions[1].shell", "`/etc/profile.d/proxy.sh`"),
            ("actions[2].shell", "a file whose name an expansion makes"),
            ("actions[3].shell", "a file whose name an expansion makes"),
            ("actions[4].shell", "`/etc/profile.d/proxy.sh`"),
            ("actions[5].shell", "`/etc/aliases`"),
            ("actions[6].shell", "the file `file`"),
        ],
        &["actions[7]", "actions[8]", "actions[9]", "actions[10]"],
    );
}

/// fe30p F1: an argument with `choices:` and neither a default nor `rejectNull` accepts an
/// empty value too (as SPEC says), so `systemctl restart {{ service }}` runs with none; the
/// check says so with the fix, and is silent where the author required a choice, gave a
/// default, listed an empty choice, or the argument is a checklist.
#[test]
fn choices_that_also_accept_an_empty_value_are_warned_of() {
    let yaml = "\
actions:
  - title: a
    shell: systemctl restart {{ service }}
    arguments: [{name: service, choices: [{value: ssh}, {value: cron}]}]
  - title: b
    shell: systemctl restart {{ service }}
    arguments: [{name: service, choices: [{value: ssh}, {value: cron}], rejectNull: true}]
  - title: c
    shell: systemctl restart {{ service }}
    arguments: [{name: service, choices: [{value: ssh}, {value: cron}], default: ssh}]
  - title: d
    shell: systemctl restart ssh {{ also }}
    arguments: [{name: also, choices: [{value: ''}, {value: cron}]}]
  - title: e
    shell: echo {{ items }}
    arguments: [{name: items, type: checklist, choices: [{value: a}, {value: b}]}]
";
    let run = check(yaml);
    assert_exit(&run, 0);
    let out = output(&run);
    assert!(
        out.contains("actions[0].arguments[0]: argument \"service\" also accepts an empty value")
            && out.contains("set `rejectNull: true`"),
        "{out}"
    );
    for path in ["actions[1]", "actions[2]", "actions[3]", "actions[4]"] {
        assert!(!out.contains(path), "{path} was warned of:\n{out}");
    }
}

/// fe30o F2: `curl -o {{ name }}` with a bare name wrote actiond's own config in the working
/// directory (the config's), and the next reload ran what the download held. A value that
/// starts the path of a file a trusted program writes is refused; under a directory the
/// author wrote, it loads (a `..` in it is refused when a press starts).
#[test]
fn a_value_never_names_the_whole_path_of_a_file_a_program_writes() {
    let yaml = "\
actions:
  - title: download named
    shell: curl -fsSL -o {{ name }} {{ url }}
    arguments: [{name: name, type: ascii_identifier}, {name: url, type: url}]
  - title: wget named
    shell: wget -qO {{ name }} {{ url }}
    arguments: [{name: name, type: ascii_identifier}, {name: url, type: url}]
  - title: download below
    shell: curl -fsSL -o /srv/downloads/{{ name }} {{ url }}
    arguments: [{name: name, type: ascii_identifier}, {name: url, type: url}]
  - title: chosen
    shell: curl -fsSL -o {{ name }} https://example.com/feed.xml
    arguments: [{name: name, choices: [{value: /srv/feed.xml}], rejectNull: true}]
  - title: download below with an ending
    shell: curl -fsSL -o /srv/downloads/{{ name }}.pdf {{ url }}
    arguments: [{name: name, type: ascii_identifier}, {name: url, type: url}]
";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", "a value makes"),
            (
                "actions[0].shell",
                "write a directory of your own before the value",
            ),
            ("actions[1].shell", "a value makes"),
            // No data ending after the value (`filed::named`): `.bash_profile` below it.
            ("actions[2].shell", "`/srv/downloads/…`"),
        ],
        &["actions[3]", "actions[4]"],
    );
}

/// The eleventh attack's (fe30k) configs, each accepted before: a global option of `docker`
/// that hid `exec` (F2), an interpreter or `docker` named by a path outside the system's
/// directories (F5), `sshpass` in front of `ssh` (F9), the processes `kill` and `pkill` pick
/// (F3: `-1` and `.` are every one, `int` or not), a copy of a written file run (F6),
/// sqlite3's `.read FILE` and `sh -s < FILE` of a written file (F1), an inherited variable
/// set by `for`, `read` or `printf -v`, `jq`'s filter (`env` prints the environment) and a
/// branch's remote in git's settings (a URL `git pull` fetches from), and `psql` behind
/// `docker exec -i` reading a value on its input (`\\!` runs commands). Each refused at its path; the forms next to them
/// load: the author's script behind the venv's interpreter, `docker logs`, a script of one's
/// own, `pkill` of a choice, a `for` over the author's words.
#[test]
fn the_eleventh_attacks_configs_are_refused_and_their_neighbours_load() {
    let yaml = "\
actions:
  - title: docker context
    shell: docker --context nas exec web {{ task }}
    arguments: [{name: task, type: ascii_identifier}]
  - title: venv module
    shell: /opt/app/venv/bin/python -m {{ module }}
    arguments: [{name: module, type: ascii_identifier}]
  - title: local docker
    exec: [/usr/local/bin/docker, exec, web, '{{ task }}']
    arguments: [{name: task, type: ascii_identifier}]
  - title: sshpass
    shell: sshpass -f /etc/nas.pw ssh admin@nas /usr/local/bin/mail-report {{ to }}
    arguments: [{name: to, type: email}]
  - title: kill
    shell: kill -9 {{ pid }}
    arguments: [{name: pid, type: int}]
  - title: pkill
    shell: pkill {{ name }}
    arguments: [{name: name, type: ascii_identifier}]
  - title: copy run
    shell: |
      printf '%s\\n' \"$V\" > /tmp/j.sh
      cp /tmp/j.sh /tmp/run.sh
      sh /tmp/run.sh
    arguments: [{name: v, type: ascii_sentence}]
  - title: sqlite read
    shell: printf '%s\\n' \"$V\" > /tmp/q.sql; sqlite3 /srv/n.db \".read /tmp/q.sql\"
    arguments: [{name: v, type: url}]
  - title: sh stdin
    shell: printf '%s\\n' \"$V\" > /tmp/job.txt; sh -s < /tmp/job.txt
    arguments: [{name: v, type: url}]
  - title: for TZ
    shell: for TZ in \"$V\"; do date; done
    arguments: [{name: v, type: ascii_identifier}]
  - title: jq filter
    shell: jq -r \"$V\" /srv/data.json
    arguments: [{name: v, type: ascii_identifier}]
  - title: git remote
    shell: git -C /srv/app config branch.main.remote {{ r }} && git -C /srv/app pull
    arguments: [{name: r, type: url}]
  - title: psql in a container
    shell: printf '%s\\n' \"$V\" | docker exec -i db psql -U app
    arguments: [{name: v, type: ascii_sentence}]
  - title: venv script
    shell: /opt/app/venv/bin/python /opt/app/manage.py {{ task }}
    arguments: [{name: task, type: ascii_identifier}]
  - title: docker logs
    shell: /usr/local/bin/docker logs --tail 50 {{ task }}
    arguments: [{name: task, type: ascii_identifier}]
  - title: own script
    shell: /usr/local/bin/backup.sh {{ task }}
    arguments: [{name: task, type: ascii_identifier}]
  - title: pkill choice
    shell: pkill -x {{ name }}
    arguments: [{name: name, choices: [{value: kodi}, {value: firefox}]}]
  - title: for words
    shell: for HOST in a b; do ping -c1 \"$HOST\"; done; echo \"$V\"
    arguments: [{name: v, type: ascii_identifier}]
  - title: jq arg
    shell: jq -r --arg v \"$V\" '.[$v]' /srv/data.json
    arguments: [{name: v, type: ascii_identifier}]
";
    let unknown = "a program actiond does not know";
    let signalled = "the processes `kill`, `pkill`, `pgrep` or `killall` picks";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", unknown),
            ("actions[1].shell", unknown),
            ("actions[2].exec", unknown),
            (
                "actions[3].shell",
                "the command `ssh` runs on the other host",
            ),
            ("actions[4].shell", signalled),
            ("actions[5].shell", signalled),
            ("actions[6].shell", "the file `/tmp/"),
            ("actions[7].shell", "the file `/tmp/q.sql`"),
            (
                "actions[8].shell",
                "the script a shell reads from its standard input",
            ),
            ("actions[9].shell", "the environment variable `TZ`"),
            ("actions[10].shell", "the filter of `jq`"),
            ("actions[11].shell", "a git setting"),
            (
                "actions[12].shell",
                "the standard input of a program not known",
            ),
        ],
        &[
            "actions[13]",
            "actions[14]",
            "actions[15]",
            "actions[16]",
            "actions[17]",
            "actions[18]",
        ],
    );
}

/// The twelfth attack's (fe30m) configs, each accepted before: a written file run by another
/// name (after `cd`, with `./` or `//` in its path), written by `dd of=` or through `cat >`
/// (F1-F4); `sed` behind `find -exec` and behind a wrapper the model has no entry for
/// (`taskset`, `runuser -u`), an interpreter's `-c` there (F6-F8), and a value as the
/// program behind `find -exec nice`; `git remote set-url` (F9); a copy of `${V#*.}` that
/// starts an argument (F10); `readonly` of an inherited name (F11); `sudo -s` reading a
/// value on its input (F12); `tar -T -` (F14); the items of `xargs -0` for `sed` and `kill`
/// (F15); `exec: [env, NAME=…]` (F16); a block's redirection (F18); `psql -c` (F19). The
/// forms next to them load.
#[test]
fn the_twelfth_attacks_configs_are_refused_and_their_neighbours_load() {
    let yaml = "\
actions:
  - title: cd then path
    shell: cd /srv/jobs && printf '%s\\n' \"$V\" > job.sh; sh /srv/jobs/job.sh
    arguments: [{name: v, type: ascii_sentence}]
  - title: dot slash
    shell: printf '%s\\n' \"$V\" > /srv/jobs/job.sh; sh /srv/jobs/./job.sh
    arguments: [{name: v, type: ascii_sentence}]
  - title: dd
    shell: printf '%s\\n' \"$V\" | dd of=/srv/jobs/job.sh status=none; sh /srv/jobs/job.sh
    arguments: [{name: v, type: ascii_sentence}]
  - title: cat copy
    shell: printf '%s\\n' \"$V\" > /tmp/job.txt; cat /tmp/job.txt > /tmp/job.sh; sh /tmp/job.sh
    arguments: [{name: v, type: ascii_sentence}]
  - title: find sed
    shell: find /srv/conf -name '*.conf' -exec sed -i \"s#^u=.*#u={{ v }}#\" {} +
    arguments: [{name: v, type: url}]
  - title: taskset sed
    shell: taskset -c 0 sed -i \"s#^u=.*#u={{ v }}#\" /srv/app.conf
    arguments: [{name: v, type: url}]
  - title: chrt python
    exec: [chrt, -i, '0', python3, -c, 'print(\"{{ v }}\")']
    arguments: [{name: v, type: url}]
  - title: find nice
    shell: find /srv -maxdepth 0 -exec nice -n 19 {{ v }} \\;
    arguments: [{name: v, type: ascii_sentence}]
  - title: remote set-url
    shell: git -C /srv/app remote set-url origin {{ v }}
    arguments: [{name: v, type: url}]
  - title: stripped copy
    shell: host=${V#*.}; ssh -o BatchMode=yes \"$host\" uptime
    arguments: [{name: v, type: ascii_sentence}]
  - title: readonly
    shell: readonly https_proxy=\"$V\"; curl -s https://example.org/
    arguments: [{name: v, type: url}]
  - title: sudo shell
    shell: |
      sudo -u nobody -s <<EOF
      curl -fsS -O \"$V\"
      EOF
    arguments: [{name: v, type: url}]
  - title: tar list
    shell: printf '%s\\n' \"$V\" | tar czf /srv/b.tgz -T -
    arguments: [{name: v, type: ascii_sentence}]
  - title: xargs sed
    shell: printf '%s\\0' \"$V\" | xargs -0 -I{} sed -i 's#^u=.*#u={}#' /srv/app.conf
    arguments: [{name: v, type: url}]
  - title: xargs kill
    shell: printf '%s\\0' \"$V\" | xargs -0 kill -TERM
    arguments: [{name: v, type: int}]
  - title: exec env
    exec: [env, 'GIT_SSH_COMMAND={{ v }}', git, -C, /srv/app, pull]
    arguments: [{name: v, type: ascii_sentence}]
  - title: block
    shell: |
      { echo '#!/bin/sh'; printf '%s\\n' \"$V\"; } > /tmp/s.sh
      sh /tmp/s.sh
    arguments: [{name: v, type: ascii_sentence}]
  - title: psql
    shell: psql -d app -c \"UPDATE config SET hook='{{ v }}'\"
    arguments: [{name: v, type: url}]
  - title: find rm
    shell: find /srv/cache -name \"{{ v }}\" -exec rm -f {} +
    arguments: [{name: v, type: ascii_identifier}]
  - title: xargs rm
    shell: printf '%s\\0' \"$V\" | xargs -0 rm -f --
    arguments: [{name: v, type: ascii_sentence}]
  - title: written elsewhere
    shell: printf '%s\\n' \"$V\" > /tmp/note.txt; sh /srv/jobs/job.sh
    arguments: [{name: v, type: ascii_sentence}]
  - title: stripped after dashes
    shell: host=${V#*.}; ssh -o BatchMode=yes -- \"$host\" uptime
    arguments: [{name: v, type: ascii_sentence}]
";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", "the file `/srv/jobs/job.sh`"),
            ("actions[1].shell", "the file `/srv/jobs/job.sh`"),
            ("actions[2].shell", "the file `/srv/jobs/job.sh`"),
            ("actions[3].shell", "the file `/tmp/job.sh`"),
            ("actions[4].shell", "the script of `sed`"),
            ("actions[5].shell", "the script of `sed`"),
            ("actions[6].exec", "the program text an interpreter runs"),
            ("actions[7].shell", "the program the command runs"),
            (
                "actions[8].shell",
                "`git remote add NAME URL` and `set-url`",
            ),
            ("actions[9].shell", "$host holds a part of a value"),
            (
                "actions[10].shell",
                "the environment variable `https_proxy`",
            ),
            ("actions[11].shell", "the shell of `sudo -s`"),
            (
                "actions[12].shell",
                "the standard input of a program not known",
            ),
            ("actions[13].shell", "the items `xargs -0` reads"),
            ("actions[14].shell", "the items `xargs -0` reads"),
            (
                "actions[15].exec",
                "the environment variable `GIT_SSH_COMMAND`",
            ),
            ("actions[16].shell", "the file `/tmp/s.sh`"),
            ("actions[17].shell", "the SQL of `psql -c`"),
        ],
        &["actions[18]", "actions[19]", "actions[20]", "actions[21]"],
    );
}

/// The thirteenth attack's (fe30n) configs: a `url` in a variable `make` sets from its
/// command line (it pastes the value into a recipe's shell), and a value written into a file
/// something else runs by convention (a login shell's `/etc/profile.d`, cron's `/etc/cron.d`),
/// a value that may start with `@` as curl's data (`@/etc/shadow` posts that file), and a
/// dropped file's name in `-F name=@…` (`a.pdf,config.yaml` sends both). Data files,
/// `--data-raw`, a type that cannot start with `@` and the file on curl's input load.
#[test]
fn the_thirteenth_attacks_configs_are_refused_and_their_neighbours_load() {
    let yaml = "\
actions:
  - title: make
    shell: make -C /srv/site deploy URL={{ url }}
    arguments: [{name: url, type: url}]
  - title: make exec
    exec: [make, -C, /srv/site, deploy, 'URL={{ url }}']
    arguments: [{name: url, type: url}]
  - title: profile
    shell: echo \"export http_proxy={{ url }}\" > /etc/profile.d/proxy.sh
    arguments: [{name: url, type: url}]
  - title: cron
    shell: echo \"*/5 * * * * root curl -fsS {{ url }}\" > /etc/cron.d/health
    arguments: [{name: url, type: url}]
  - title: data
    shell: echo \"{{ url }}\" > /var/lib/app/url.txt
    arguments: [{name: url, type: url}]
  - title: curl data
    shell: curl -fsS -d \"$MESSAGE\" http://127.0.0.1:9/notes
    arguments: [{name: message, type: raw_string_multiline}]
  - title: curl data exec
    exec: [curl, -fsS, --data-binary, '{{ message }}', 'http://127.0.0.1:9/notes']
    arguments: [{name: message, type: raw_string_multiline}]
  - title: curl raw
    shell: curl -fsS --data-raw \"$MESSAGE\" http://127.0.0.1:9/notes
    arguments: [{name: message, type: raw_string_multiline}]
  - title: curl text
    shell: curl -fsS -d \"$MESSAGE\" http://127.0.0.1:9/notes
    arguments: [{name: message, type: ascii_sentence}]
  - title: curl form file
    shell: curl -fsS -F \"document=@{{ filepath }}\" http://127.0.0.1:9/post
    execOnFileCreatedInDir: /srv/inbox
  - title: curl form input
    shell: curl -fsS -F 'document=@-;filename=scan.pdf' http://127.0.0.1:9/post < {{ filepath }}
    execOnFileCreatedInDir: /srv/inbox
";
    let by_convention = "run as code by convention";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", "a variable `make` sets"),
            ("actions[1].exec", "a variable `make` sets"),
            ("actions[2].shell", by_convention),
            ("actions[3].shell", by_convention),
            ("actions[5].shell", "the data of `curl -d`"),
            ("actions[6].exec", "the data of `curl -d`"),
            ("actions[9].shell", "the file name of a form field"),
        ],
        &["actions[4]", "actions[7]", "actions[8]", "actions[10]"],
    );
}

/// A value written into a file that the command then runs or splits (fe30i F01, F14): refused
/// at load naming the file and the line that wrote it; a value written to one file and another
/// file run loads.
#[test]
fn a_value_written_into_a_file_the_command_runs_is_refused_at_load() {
    let yaml = "\
actions:
  - title: sh
    shell: printf '%s\\n' {{ x }} > job.sh && sh job.sh
    arguments: [{name: x, type: ascii_sentence}]
  - title: dot
    shell: echo {{ x }} > s.sh; . ./s.sh
    arguments: [{name: x, type: ascii_sentence}]
  - title: xargs
    shell: printf '%s\\n' {{ files }} > list; xargs -a list rm -f
    arguments: [{name: files, type: ascii_sentence}]
  - title: safe
    shell: printf '%s\\n' {{ x }} > out.txt; sh ./deploy.sh
    arguments: [{name: x, type: ascii_sentence}]
";
    assert_refusals(
        yaml,
        &[
            (
                "actions[0].shell",
                "the file `job.sh`, which line 1 writes a value into",
            ),
            ("actions[1].shell", "the file `s.sh`"),
            ("actions[2].shell", "the file `list`"),
        ],
        &["actions[3]"],
    );
}

/// fe30q (after the data-file, audit and flow rules): a value written into a `.conf` under
/// `/tmp` another action sources (F2), copied with `cp -t`/`mv -t`/`ln -st` into cron's
/// directory (F3), `curl --data-urlencode` with an address, whose `name@FILE` form sends the
/// file (F4), a group sorted or `uniq`ed into a cron table (F5), a download run (F8), and a
/// download that names its file after the url in the working directory, the config's (F1,
/// F6: `curl -O`, `wget URL`, `git clone URL` wrote `config.yaml` or an overlay's file), and
/// a file named as data that an action runs, which another action or an earlier press may
/// have written a value into (F2, F2b). The safe forms beside them load.
#[test]
fn the_fourteenth_attacks_configs_are_refused_and_their_neighbours_load() {
    let yaml = "\
actions:
  - title: radio state
    shell: echo \"STREAM_URL={{ url }}\" > /tmp/radio.conf
    arguments: [{name: url, type: url}]
  - title: cp -t
    shell: printf '%s\\n' \"0 7 * * * curl {{ url }}\" > /tmp/x.txt && cp -t /etc/cron.d /tmp/x.txt
    arguments: [{name: url, type: url}]
  - title: urlencode
    shell: curl -fsS --data-urlencode {{ to }} https://example.com/notify
    arguments: [{name: to, type: email}]
  - title: sort -o
    shell: '{ cat /etc/cron.d/radio; echo \"0 7 * * * curl {{ url }}\"; } | sort -u -o /etc/cron.d/radio'
    arguments: [{name: url, type: url}]
  - title: uniq
    shell: 'echo \"0 7 * * * curl {{ url }}\" | uniq - /etc/cron.d/radio'
    arguments: [{name: url, type: url}]
  - title: download run
    shell: curl -fsSL -o /tmp/f {{ url }} && sh /tmp/f
    arguments: [{name: url, type: url}]
  - title: urlencode named
    shell: curl -fsS --data-urlencode \"to={{ to }}\" https://example.com/notify
    arguments: [{name: to, type: email}]
  - title: state as text
    shell: echo \"{{ url }}\" > /tmp/radio.txt
    arguments: [{name: url, type: url}]
  - title: download kept
    shell: curl -fsSL -o /srv/page.txt {{ url }}
    arguments: [{name: url, type: url}]
  - title: remote name
    shell: curl -fsSLO {{ url }}
    arguments: [{name: url, type: url}]
  - title: wget here
    shell: wget -N {{ url }}
    arguments: [{name: url, type: url}]
  - title: clone here
    shell: git clone --depth 1 {{ url }}
    arguments: [{name: url, type: url}]
  - title: remote name below
    shell: curl -fsSL --output-dir /srv/downloads -O {{ url }}
    arguments: [{name: url, type: url}]
  - title: wget below
    shell: wget -q -P /srv/downloads {{ url }}
    arguments: [{name: url, type: url}]
  - title: clone below
    shell: git clone --depth 1 {{ url }} /srv/repos/site
    arguments: [{name: url, type: url}]
  - title: source state
    shell: . /tmp/radio.txt && mpc play
  - title: python state
    shell: python3 /srv/state.json
  - title: read state
    shell: cat /tmp/radio.txt; jq -r .url /srv/state.json
";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", "the file `/tmp/radio.conf`"),
            ("actions[1].shell", "/etc/cron.d"),
            ("actions[2].shell", "`curl --data-urlencode`"),
            ("actions[3].shell", "`/etc/cron.d/radio`"),
            ("actions[4].shell", "`/etc/cron.d/radio`"),
            ("actions[5].shell", "`/tmp/f`"),
            ("actions[9].shell", "names its file after it"),
            ("actions[10].shell", "names its file after it"),
            ("actions[11].shell", "names its file after it"),
            // fe30s F1: a directory of its own does not stop the url picking the name.
            ("actions[12].shell", "names its file after it"),
            ("actions[13].shell", "names its file after it"),
            (
                "actions[15].shell",
                "runs as code `/tmp/radio.txt`, a file named as data",
            ),
            ("actions[16].shell", "runs as code `/srv/state.json`"),
            // fe30u F8: the url picks the whole tree a later command may run.
            ("actions[14].shell", "the url (or remote) `git clone`"),
        ],
        &["actions[6]", "actions[7]", "actions[8]"],
    );
}

/// fe30r (after the data-file rule): a file named as data is the one place a value may be
/// written, so no action may take one for more than data: copy it under a name a value picks
/// (`cp notes.txt {{ name }}` made `config.yaml`, F3) or a name not known to hold data
/// (`~/.bashrc`, F3b, `.curlrc`, F6), fetch its urls into the working directory (`wget -i`,
/// F5), give it to a program that reads its input as code (`sh <`, `. /dev/stdin <`, F2), or
/// read curl's settings from it; writers inside awk, sed and `cp /dev/stdin` (F4); and what
/// `envsubst` prints of the environment, which holds the values (F1).
/// Reading it as data, or copying it under a data name, loads.
#[test]
fn the_fifteenth_attacks_configs_are_refused_and_their_neighbours_load() {
    let yaml = "\
actions:
  - title: copy named
    shell: cp notes.txt {{ name }}
    arguments: [{name: name, type: ascii_identifier}]
  - title: copy to bashrc
    shell: cp /home/pi/todo.txt /home/pi/.bashrc
  - title: queue
    shell: wget -q -N -i queue.txt
  - title: shell input
    shell: sh < /tmp/radio.txt
  - title: sourced input
    shell: . /dev/stdin < /tmp/radio.txt
  - title: curl settings
    shell: curl -K /tmp/curl.txt https://example.com
  - title: save
    shell: printf '%s\\n' \"{{ note }}\" >> notes.txt
    arguments: [{name: note, type: raw_string_multiline}]
  - title: backup
    shell: cp notes.txt /srv/backup/notes.txt && cp notes.txt /srv/backup/
  - title: count
    shell: grep -c x < /tmp/radio.txt; jq -r .url /srv/state.json
  - title: queue below
    shell: wget -q -P /srv/downloads -i queue.txt
  - title: awk writes
    shell: echo \"GREETING={{ msg }}\" | awk '{print > \"/etc/default/greeter\"}'
    arguments: [{name: msg, type: ascii_sentence}]
  - title: sed writes
    shell: echo \"GREETING={{ msg }}\" | sed -n 'w /etc/default/greeter'
    arguments: [{name: msg, type: ascii_sentence}]
  - title: cp from stdin
    shell: echo \"GREETING={{ msg }}\" | cp /dev/stdin /etc/default/greeter
    arguments: [{name: msg, type: ascii_sentence}]
  - title: awk compares
    shell: echo {{ n }} | awk '$1 > 5 {print \"big\"}'
    arguments: [{name: n, type: int}]
  - title: envsubst
    shell: envsubst '$ACTIOND_ARG_URL' < /srv/kiosk.env.in > /etc/default/kiosk
    arguments: [{name: url, type: url}]
  - title: envsubst to data
    shell: envsubst '$ACTIOND_ARG_URL' < /srv/kiosk.in > /srv/kiosk.txt
    arguments: [{name: url, type: url}]
";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", "under a name an expansion makes"),
            ("actions[1].shell", "to `/home/pi/.bashrc`"),
            ("actions[2].shell", "the urls in `queue.txt`"),
            ("actions[3].shell", "the content of `/tmp/radio.txt`"),
            ("actions[4].shell", "the content of `/tmp/radio.txt`"),
            (
                "actions[5].shell",
                "reads curl's settings from `/tmp/curl.txt`",
            ),
            ("actions[10].shell", "`/etc/default/greeter`"),
            ("actions[11].shell", "`/etc/default/greeter`"),
            ("actions[12].shell", "`/etc/default/greeter`"),
            // fe30s F1: `-P` does not stop the urls picking the names.
            ("actions[9].shell", "the urls in `queue.txt`"),
            ("actions[14].shell", "prints of the environment"),
        ],
        &[
            "actions[6]",
            "actions[7]",
            "actions[8]",
            "actions[13]",
            "actions[15]",
        ],
    );
}

/// fe30r F2's last form, and its class: what a file named as data holds (any action, or an
/// earlier press, may have written a value into it) is refused wherever a value would be, in
/// an action with no argument too: `eval` of its `$( )`, a copy of it in a variable later
/// evaluated, `export` of it, a pipe of it into a shell, on the input of `mail` (which is not
/// known to read its input as data), or copied into a file not known to hold data. Read as
/// data (printed, counted, looped over with `while read`), it loads. With them, the last
/// read's parser gaps: `crontab -u USER FILE`, sed's `w` after an address, `uniq -f N`; and
/// fe30s F2's script-file forms: a data file as `sed -f`, `awk -f`, `vim -S`, and a value
/// picking sed's script file; fe30t's: an `exec:` that runs one, a `while read` loop that
/// evaluates its lines, an awk program that runs its input, what it holds starting an
/// argument (an option: `ssh "$(cat host.txt)"`) or split outside quotes.
#[test]
fn what_a_data_file_holds_is_refused_as_code_in_an_action_without_values() {
    let yaml = "\
actions:
  - title: eval station
    shell: eval \"$(cat /tmp/radio.txt)\"; echo \"playing $STATION\"
  - title: copy then eval
    shell: s=$(cat radio.txt); eval \"$s\"
  - title: export
    shell: export $(cat radio.txt); mpc play
  - title: pipe into a shell
    shell: grep -v '^#' notes.txt | sh
  - title: mail a report
    shell: mail -s report me@example.com < /var/log/report.txt
  - title: kiosk settings
    shell: cat /srv/kiosk.txt > /etc/default/kiosk
  - title: show
    shell: echo \"$(cat notes.txt)\"; wc -l < notes.txt
  - title: loop
    shell: while read -r h; do ping -c1 -- \"$h\"; done < hosts.txt
  - title: backup
    shell: cat notes.txt > /srv/backup/notes.txt
  - title: crontab for pi
    shell: crontab -u pi /srv/cron.txt
  - title: sed after an address
    shell: echo \"URL={{ url }}\" | sed -n '1w /etc/default/kiosk'
    arguments: [{name: url, type: url}]
  - title: uniq skipping a field
    shell: uniq -f 1 /srv/in.txt /srv/out.txt; echo {{ n }}
    arguments: [{name: n, type: ascii_identifier}]
  - title: sed script from a data file
    shell: sed -f /srv/edit.txt /srv/in.csv
  - title: awk program from a data file
    shell: awk -f /srv/prog.txt /srv/in.csv
  - title: vim sourcing a data file
    shell: vim -es -S /srv/cmds.txt /srv/notes.txt
  - title: sed script a value picks
    shell: sed -f {{ script }} /srv/in.csv
    arguments: [{name: script, type: ascii_sentence}]
  - title: sed over a data file
    shell: sed -n 's/^url=//p' /srv/radio.txt
  - title: exec a data file
    exec: [sh, /srv/note.txt]
  - title: while read eval
    shell: cat /srv/note.txt | while read -r l; do eval \"$l\"; done
  - title: awk system over a data file
    shell: awk '{ system(\"ping -c1 \" $1) }' /srv/hosts.txt
  - title: ssh to a stored host
    shell: ssh \"$(cat /srv/host.txt)\" uptime
  - title: remove what a list names
    shell: rm -f $(cat /srv/cleanup.txt)
  - title: ssh to a stored host after --
    shell: ssh -- \"$(cat /srv/host.txt)\" uptime
";
    assert_refusals(
        yaml,
        &[
            ("actions[9].shell", "runs as code `/srv/cron.txt`"),
            ("actions[12].shell", "reads as its program `/srv/edit.txt`"),
            ("actions[13].shell", "reads as its program `/srv/prog.txt`"),
            ("actions[14].shell", "reads as its program `/srv/cmds.txt`"),
            ("actions[15].shell", "the script of `sed`"),
            ("actions[17].exec", "runs as code `/srv/note.txt`"),
            ("actions[18].shell", "the content of `/srv/note.txt`"),
            ("actions[19].shell", "whose script runs what it reads"),
            ("actions[20].shell", "starts an argument before any `--`"),
            ("actions[21].shell", "stands outside quotes"),
            ("actions[10].shell", "`/etc/default/kiosk`"),
            ("actions[0].shell", "the content of `/tmp/radio.txt`"),
            ("actions[1].shell", "the content of `radio.txt`"),
            ("actions[2].shell", "the content of `radio.txt`"),
            ("actions[3].shell", "the content of `notes.txt`"),
            ("actions[4].shell", "the content of `/var/log/report.txt`"),
            ("actions[5].shell", "`/etc/default/kiosk`"),
        ],
        &[
            "actions[6]",
            "actions[7]",
            "actions[8]",
            "actions[11]",
            "actions[16]",
        ],
    );
}
