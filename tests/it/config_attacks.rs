//! Configs from attacks on the shell model, each beside the forms that must still load: the
//! check refuses the attack at its action's path with the fix, and the neighbours load
//! without a word. The helpers are `config_check`'s.

use crate::config_check::assert_refusals;

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
