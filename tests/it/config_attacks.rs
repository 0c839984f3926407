//! Configs from attacks on the shell model, each beside the forms that must still load: the
//! check refuses the attack at its action's path with the fix, and the neighbours load
//! without a word. The helpers are `config_check`'s.

use crate::config_check::{assert_exit, assert_refusals, check, output};

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
    shell: mail -s report {{ to }} < /var/log/report.txt
    arguments: [{name: to, type: email}]
  - title: download
    shell: yt-dlp -o '/srv/media/%(title)s.%(ext)s' {{ video }}
    arguments: [{name: video, type: url}]
  - title: wrapped
    shell: chrt -i 0 /usr/local/bin/fetch {{ video }}
    arguments: [{name: video, type: url}]
  - title: mail allowed
    shell: mail -s report {{ to }} < /var/log/report.txt
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
    shell: echo \"export http_proxy={{ url }}\" > /tmp/proxy && mv /tmp/proxy /etc/profile.d/proxy.sh
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
    shell: printf '%s\\n' {{ url }} > /tmp/urls && cp /tmp/urls /srv/urls.txt
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
";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", "a file curl writes"),
            (
                "actions[0].shell",
                "write a directory of your own before the value",
            ),
            ("actions[1].shell", "a file or directory wget writes"),
        ],
        &["actions[2]", "actions[3]"],
    );
}
