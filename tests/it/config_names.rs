//! fe30s: the name of a written file a value makes, a url or an upload picks, or an archive
//! carries (`template::filed::named`). Each attack is refused at its action's path with the
//! fix; the neighbours load: a data ending written after the value in a directory of one's
//! own, a name written out, an archive kept as a file, a media file downloaded. The helpers
//! are `config_check`'s (a file of its own: `config_attacks.rs` is near 1,000 lines).

use crate::config_check::assert_refusals;

/// The sixteenth attack's (fe30s) configs, each accepted before: a download directory named
/// with `wget -P` or `curl --output-dir` where the url picks the name (F1, F1b: `.` too), an
/// upload moved into a directory keeping its name (F1d), a url's archive piped into `tar
/// -x` (F3), a `git clone` into a hidden directory, a value inside `curl -o`'s path with no
/// data ending (F7: `.bash_profile`, `/etc/cron.d/`, `.sh`), and a value picking the file a
/// program prints into (F6: `journalctl >`, `find -fprint`, `git diff --output`, `ssh
/// -E`), or a value that may hold `/` inside a name the author fixed (it picks a hidden
/// directory below). The neighbours load, and the ordinary downloads refused before (a PDF,
/// a photo, a song) load now.
#[test]
fn the_sixteenth_attacks_configs_are_refused_and_their_neighbours_load() {
    let yaml = "\
actions:
  - title: wget home
    shell: wget -q -P /home/pi {{ url }}
    arguments: [{name: url, type: url}]
  - title: curl here
    shell: curl -fsS --output-dir . -O {{ url }}
    arguments: [{name: url, type: url}]
  - title: move uploads home
    shell: mv {{ filepath }} /home/pi/
    execOnFileCreatedInDir: /srv/inbox
  - title: restore home
    shell: curl -fsSL {{ url }} | tar -xz -C /home/pi
    arguments: [{name: url, type: url}]
  - title: vim plugin
    shell: git clone {{ url }} /home/pi/.vim/pack/plugins/start/x
    arguments: [{name: url, type: url}]
  - title: save download
    shell: curl -fsS -o /home/pi/{{ name }} {{ url }}
    arguments: [{name: name, type: ascii_identifier}, {name: url, type: url}]
  - title: cron download
    shell: curl -fsS -o /etc/cron.d/{{ name }}.txt {{ url }}
    arguments: [{name: name, type: ascii_identifier}, {name: url, type: url}]
  - title: script download
    shell: wget -qO /srv/dl/{{ name }}.sh {{ url }}
    arguments: [{name: name, type: ascii_identifier}, {name: url, type: url}]
  - title: journal
    shell: journalctl -n 100 -o cat > {{ path }}
    arguments: [{name: path, type: 'regex:^[A-Za-z0-9_./-]+$'}]
  - title: list
    shell: find /srv/music -name '*.mp3' -fprint {{ path }}
    arguments: [{name: path, type: 'regex:^[A-Za-z0-9_./-]+$'}]
  - title: diff
    shell: git -C /srv/repo diff --output={{ path }}
    arguments: [{name: path, type: 'regex:^[A-Za-z0-9_./-]+$'}]
  - title: ssh log
    shell: ssh -E {{ path }} nas uptime
    arguments: [{name: path, type: 'regex:^[A-Za-z0-9_./-]+$'}]
  - title: unzip upload
    shell: unzip -o {{ filepath }} -d /srv/site
    execOnFileCreatedInDir: /srv/inbox
  - title: report
    shell: curl -fsS -o /srv/downloads/report.pdf {{ url }}
    arguments: [{name: url, type: url}]
  - title: photo
    shell: curl -fsS -o /srv/downloads/photo.jpg {{ url }}
    arguments: [{name: url, type: url}]
  - title: song
    shell: wget -O /srv/music/{{ name }}.mp3 {{ url }}
    arguments: [{name: name, type: ascii_identifier}, {name: url, type: url}]
  - title: journal kept
    shell: journalctl -n 100 -o cat > /srv/logs/{{ name }}.log
    arguments: [{name: name, type: ascii_identifier}]
  - title: archive kept
    shell: curl -fsSL -o /srv/downloads/{{ name }}.tar.gz {{ url }}
    arguments: [{name: name, type: ascii_identifier}, {name: url, type: url}]
  - title: move uploads named
    shell: mv -- {{ filepath }} /srv/done/upload.pdf
    execOnFileCreatedInDir: /srv/inbox
  - title: clone below
    shell: git clone --depth 1 {{ url }} /srv/repos/site
    arguments: [{name: url, type: url}]
  - title: wget fixed
    shell: wget -q -P /srv/downloads https://example.com/manual.pdf
  - title: below
    shell: curl -fsS -o /home/pi/{{ path }}.txt {{ url }}
    arguments: [{name: path, type: 'regex:^[A-Za-z0-9_./-]+$'}, {name: url, type: url}]
";
    let url = "names its file after it";
    let named = "a value makes";
    assert_refusals(
        yaml,
        &[
            ("actions[0].shell", url),
            ("actions[0].shell", "-o /srv/downloads/{{ name }}.mp3"),
            ("actions[1].shell", url),
            ("actions[2].shell", "keeps the source's name"),
            ("actions[2].shell", "/srv/inbox/upload.pdf"),
            ("actions[3].shell", "the archive of an extraction"),
            ("actions[3].shell", "keep the archive as a file"),
            ("actions[4].shell", "`git clone URL DIR`"),
            ("actions[5].shell", named),
            ("actions[5].shell", "`/home/pi/…`"),
            ("actions[6].shell", "`/etc/cron.d/….txt`"),
            ("actions[7].shell", "`/srv/dl/….sh`"),
            ("actions[8].shell", named),
            ("actions[9].shell", named),
            ("actions[10].shell", named),
            ("actions[11].shell", named),
            ("actions[12].shell", "the archive of an extraction"),
            // A value that may hold `/` picks a directory below (`.bashrc.d/x.txt`).
            ("actions[21].shell", "below the one written"),
            ("actions[21].shell", "a type whose values hold no `/`"),
            // fe30u F8: the url picks the whole tree a later command may run.
            ("actions[19].shell", "the url (or remote) `git clone`"),
        ],
        &[
            "actions[13]",
            "actions[14]",
            "actions[15]",
            "actions[16]",
            "actions[17]",
            "actions[18]",
            "actions[20]",
        ],
    );
}
