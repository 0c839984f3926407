//! The table of `audit`: each dangerous form in every way it can be written (a separate
//! word, attached, bundled, `--name=`, a prefix of the name), what stays data beside it,
//! and the forms the audit found harmless.

use super::super::judge::{Values, judge};
use super::super::{read_exec, read_shell};

/// One argument `a`, of `type: int`, with `choices:`, or text.
fn values(int: bool, chosen: bool) -> Values {
    let mut v = Values {
        any: !int,
        ..Values::default()
    };
    if int {
        v.int.insert("a".into());
    }
    if chosen {
        v.chosen.insert("a".into());
    }
    // Text that holds no `/` (a name inside a path the author fixes: `filed::named`).
    v.no_slash.insert("a".into());
    v.variables
        .insert("ACTIOND_ARG_A".into(), ("a".into(), false));
    v.variables.insert("A".into(), ("a".into(), true));
    v
}

fn shell(text: &str, v: &Values) -> Result<(), String> {
    let (_, analysis) = read_shell(text).map_err(|e| e.message)?;
    judge(text, &analysis, v).map_err(|why| why.to_string())
}

fn exec(argv: &[&str], v: &Values) -> Result<(), String> {
    let argv: Vec<String> = argv.iter().map(ToString::to_string).collect();
    judge("", &read_exec(&argv), v).map_err(|why| why.to_string())
}

/// Each row: a `shell:` command with one text argument `a`, and the words of its refusal
/// (`None`: it is data there). Where a row is refused, the same with `type: int` or the
/// author's `choices:` is checked too (`safe`).
fn table() -> Vec<(&'static str, Option<&'static str>)> {
    vec![
        // curl -K: separate, attached, bundled, long, `--long=`, a prefix of the long name.
        ("curl -K {{ a }} https://x", Some("`curl -K`")),
        ("curl -K{{ a }} https://x", Some("`curl -K`")),
        ("curl -sK {{ a }} https://x", Some("`curl -K`")),
        ("curl -fsSK \"$ACTIOND_ARG_A\" https://x", Some("`curl -K`")),
        ("curl --config {{ a }} https://x", Some("`curl -K`")),
        ("curl --config={{ a }} https://x", Some("`curl -K`")),
        ("curl --conf {{ a }} https://x", Some("`curl -K`")),
        (
            "curl -K /etc/actiond/{{ a }}.conf https://x",
            Some("`curl -K`"),
        ),
        // A file the program writes, named by the value from its start.
        ("curl -o {{ a }} https://x", Some("a value makes")),
        ("curl -fsSLo {{ a }} https://x", Some("a value makes")),
        ("curl --output={{ a }} https://x", Some("a value makes")),
        ("curl -c {{ a }} https://x", Some("a value makes")),
        // (`filed::named`: the author fixes a data ending after the value.)
        (
            "curl -o /srv/downloads/{{ a }} https://x",
            Some("a value makes"),
        ),
        (
            "curl -o /srv/downloads/{{ a }}.bin https://x",
            Some("a value makes"),
        ),
        ("curl -o /srv/downloads/{{ a }}.pdf https://x", None),
        ("wget -O {{ a }} https://x", Some("a value makes")),
        ("wget -qO{{ a }} https://x", Some("a value makes")),
        ("wget -P {{ a }} https://x", Some("a value makes")),
        ("wget -O /srv/in/{{ a }} https://x", Some("a value makes")),
        ("wget -O /srv/in/{{ a }}.jpg https://x", None),
        ("sort -o {{ a }} /srv/list.txt", Some("a value makes")),
        ("sort -u /srv/list.txt -o /srv/{{ a }}.txt", None),
        ("curl -T {{ a }} https://x/up", Some("a file curl sends")),
        ("curl -sT{{ a }} https://x/up", Some("a file curl sends")),
        (
            "curl --upload-file={{ a }} https://x/up",
            Some("a file curl sends"),
        ),
        ("curl -b {{ a }} https://x", Some("a file curl sends")),
        (
            "curl --netrc-file {{ a }} https://x",
            Some("a file curl sends"),
        ),
        (
            "curl --etag-compare={{ a }} https://x",
            Some("a file curl sends"),
        ),
        ("curl -w {{ a }} https://x", Some("`--write-out`")),
        ("curl --engine {{ a }} https://x", Some("OpenSSL engine")),
        // Data beside them: a value that is the URL, an output's value, a cookie's value, a
        // format with the author's text first, a value after `-K`'s own word.
        ("curl -fsS {{ a }}", None),
        ("curl -o /tmp/x.txt -sS {{ a }}", None),
        ("curl -b session={{ a }} https://x", None),
        ("curl -w '%{http_code} {{ a }}' https://x", None),
        ("curl -K /etc/actiond/curl.conf {{ a }}", None),
        ("curl -oK.txt {{ a }}", None),
        ("curl -T /srv/report.pdf https://x/{{ a }}", None),
        // wget.
        ("wget -e {{ a }} https://x", Some("`.wgetrc` command")),
        ("wget -qe{{ a }} https://x", Some("`.wgetrc` command")),
        ("wget -i {{ a }}", Some("list of URLs")),
        ("wget --input-file={{ a }}", Some("list of URLs")),
        ("wget --config {{ a }} https://x", Some("list of URLs")),
        (
            "wget --post-file={{ a }} https://x",
            Some("a file wget sends"),
        ),
        (
            "wget --body-file {{ a }} --method PUT https://x",
            Some("a file wget sends"),
        ),
        ("wget -q -O /tmp/x.txt {{ a }}", None),
        ("wget -qO- {{ a }}", None),
        // rsync.
        (
            "rsync -a --files-from={{ a }} / backup:/",
            Some("`--files-from`"),
        ),
        (
            "rsync -a --files-from {{ a }} / backup:/",
            Some("`--files-from`"),
        ),
        ("rsync -aM {{ a }} src backup:/", Some("`--remote-option`")),
        ("rsync --read-batch={{ a }} /srv", Some("`--files-from`")),
        (
            "rsync --password-file {{ a }} src rsync://h/m",
            Some("rsync sends"),
        ),
        ("rsync -av --exclude {{ a }} src backup:/", None),
        // A copy into a directory keeps the source's name, which the value picks (fe30u F5).
        (
            "rsync -av /srv/{{ a }} backup:/srv/",
            Some("keeps the source's name"),
        ),
        ("rsync -av /srv/{{ a }}.txt backup:/srv/", None),
        // ssh and scp.
        ("ssh -F {{ a }} host uptime", Some("`ssh -F`")),
        ("ssh -qF{{ a }} host uptime", Some("`ssh -F`")),
        ("ssh -o {{ a }} host uptime", Some("`ssh -o`")),
        ("ssh -o{{ a }} host uptime", Some("`ssh -o`")),
        ("ssh -I {{ a }} host uptime", Some("`ssh -I`")),
        ("scp -F {{ a }} f host:/tmp/", Some("`ssh -F`")),
        ("scp -o {{ a }} f host:/tmp/", Some("`ssh -o`")),
        ("ssh -o User={{ a }} host uptime", None),
        ("ssh -oUser={{ a }} host uptime", None),
        ("ssh -p 22 -i /root/.ssh/id host -- uptime", None),
        ("scp /srv/f {{ a }}:/tmp/", None),
        // A remote path, which the far side's shell reads (fe30s F4).
        ("scp -O nas:/srv/{{ a }} /dst/", Some("a remote path")),
        ("scp pi@nas:\"/srv/{{ a }}\" /dst/", Some("a remote path")),
        ("rsync -a nas:/music/{{ a }} /dst/", Some("a remote path")),
        (
            "rsync -a --old-args pi@nas:'{{ a }}' /dst/",
            Some("a remote path"),
        ),
        (
            "rsync -a /music/{{ a }} nas:/dst/",
            Some("keeps the source's name"),
        ),
        // tar.
        ("tar -czf /backup/x.tgz -T {{ a }}", Some("`tar -T`")),
        ("tar -cT{{ a }} -f /backup/x.tar", Some("`tar -T`")),
        (
            "tar --files-from={{ a }} -cf /backup/x.tar",
            Some("`tar -T`"),
        ),
        ("tar -czf {{ a }} /srv", Some("`tar -f`")),
        ("tar --file={{ a }} -c /srv", Some("`tar -f`")),
        ("tar -czf /backup/{{ a }}.tgz /srv", None),
        // (The archive tar writes, named by a value: `filed::named`.)
        ("tar --force-local -czf {{ a }} /srv", Some("a value makes")),
        ("tar -czf /backup/x.tgz -C /srv -- {{ a }}", None),
        // (An archive named as data, `tar -xzf /backup/x.tgz`, is `filed::named`'s.)
        ("tar --lzip -xf /backup/x.tar.lz -C /srv", None),
        // logger and mosquitto.
        ("logger -f {{ a }}", Some("copies into the log")),
        ("logger -t app -f{{ a }}", Some("copies into the log")),
        ("logger --journald={{ a }}", Some("copies into the log")),
        ("logger -t app {{ a }}", None),
        ("logger --journald {{ a }}", None),
        ("mosquitto_pub -t t -f {{ a }}", Some("`mosquitto_pub -f`")),
        (
            "mosquitto_pub -t t --tls-engine {{ a }} -m on",
            Some("OpenSSL engine"),
        ),
        (
            "mosquitto_sub -t t --tls-engine={{ a }}",
            Some("OpenSSL engine"),
        ),
        ("mosquitto_pub -t home/{{ a }} -m {{ a }}", None),
        // jq, dig, fping, wakeonlan, hostname, aplay.
        ("jq -f {{ a }} data.json", Some("jq's program")),
        ("jq -L {{ a }} . data.json", Some("jq's program")),
        ("jq -r --arg v {{ a }} '.[$v]' data.json", None),
        ("dig -f {{ a }}", Some("`dig -f`")),
        ("dig +short {{ a }}", None),
        ("fping -f {{ a }}", Some("`fping -f`")),
        ("wakeonlan -f {{ a }}", Some("`wakeonlan -f`")),
        ("wakeonlan {{ a }}", None),
        ("hostname -F {{ a }}", Some("`hostname -F`")),
        (
            "aplay -D {{ a }} /usr/share/sounds/bell.wav",
            Some("`aplay -D`"),
        ),
        (
            "aplay -qD{{ a }} /usr/share/sounds/bell.wav",
            Some("`aplay -D`"),
        ),
        (
            "aplay --device={{ a }} /usr/share/sounds/bell.wav",
            Some("`aplay -D`"),
        ),
        ("aplay -D default /srv/sounds/{{ a }}.wav", None),
        // systemctl.
        ("systemctl start {{ a }}", Some("`systemctl` verb")),
        (
            "systemctl restart --no-block {{ a }}",
            Some("`systemctl` verb"),
        ),
        (
            "systemctl --no-pager enable --now {{ a }}",
            Some("`systemctl` verb"),
        ),
        ("systemctl link {{ a }}", Some("`systemctl` verb")),
        ("systemctl isolate {{ a }}.target", Some("`systemctl` verb")),
        ("systemctl kill {{ a }}", Some("`systemctl kill`")),
        ("systemctl kill -s HUP {{ a }}", Some("`systemctl kill`")),
        (
            "systemctl --signal=HUP kill {{ a }}",
            Some("`systemctl kill`"),
        ),
        ("systemctl set-environment {{ a }}", Some("set-environment")),
        (
            "systemctl set-environment APP_MODE={{ a }}",
            Some("set-environment"),
        ),
        (
            "systemctl import-environment {{ a }}",
            Some("set-environment"),
        ),
        ("systemctl restart app@{{ a }}.service", None),
        ("systemctl status --no-pager {{ a }}", None),
        ("systemctl is-active {{ a }}", None),
        ("journalctl -u {{ a }} -n 50 --no-pager", None),
        // mpc and vcgencmd: the command is picked by the first operand.
        ("mpc {{ a }}", Some("`mpc` or `vcgencmd`")),
        ("mpc -q {{ a }}", Some("`mpc` or `vcgencmd`")),
        ("vcgencmd {{ a }}", Some("`mpc` or `vcgencmd`")),
        ("mpc volume {{ a }}", None),
        ("mpc -h localhost add {{ a }}", None),
        ("vcgencmd measure_temp", None),
        // docker and podman (fe30v F12): the image, container or tag a verb acts on, the
        // archive `load` reads, the file `save` writes; what only shows may show any.
        ("docker pull {{ a }}", Some("`docker`/`podman` verb")),
        (
            "docker tag {{ a }} homeassistant:latest",
            Some("`docker`/`podman` verb"),
        ),
        ("docker tag app:1 {{ a }}", Some("`docker`/`podman` verb")),
        (
            "docker cp /srv/notes/x.txt {{ a }}:/etc/cron.d/job",
            Some("`docker`/`podman` verb"),
        ),
        ("docker restart {{ a }}", Some("`docker`/`podman` verb")),
        ("docker rm -f {{ a }}", Some("`docker`/`podman` verb")),
        ("docker image rm {{ a }}", Some("`docker`/`podman` verb")),
        ("podman stop {{ a }}", Some("`docker`/`podman` verb")),
        (
            "docker commit {{ a }} app:latest",
            Some("`docker`/`podman` verb"),
        ),
        ("docker load -i {{ a }}", Some("`docker load -i`")),
        (
            "docker load --input=/srv/in/{{ a }}.tar",
            Some("`docker load -i`"),
        ),
        ("docker save -o {{ a }} app", Some("`docker save -o`")),
        ("docker pull example/app:{{ a }}", None),
        ("docker restart app-{{ a }}", None),
        ("docker stop -t {{ a }} kodi", None),
        ("docker logs --tail 50 {{ a }}", None),
        ("docker inspect {{ a }}", None),
        ("docker save -o /srv/backup/{{ a }}.tar app", None),
        // mosquitto_pub (fe30v F13): the topic picks the device that acts; a message to a
        // Home Assistant discovery topic defines an entity.
        (
            "mosquitto_pub -t {{ a }} -m on",
            Some("the topic `mosquitto_pub -t`"),
        ),
        (
            "mosquitto_pub --topic={{ a }} -m on",
            Some("the topic `mosquitto_pub -t`"),
        ),
        (
            "mosquitto_pub -L {{ a }} -m on",
            Some("the topic `mosquitto_pub -t`"),
        ),
        (
            "mosquitto_pub -r -t homeassistant/switch/x/config -m {{ a }}",
            Some("discovery topic"),
        ),
        (
            "mosquitto_pub -t homeassistant/light/x/config --message={{ a }}",
            Some("discovery topic"),
        ),
        (
            "mosquitto_pub -L mqtt://localhost/{{ a }} -m on",
            Some("the topic `mosquitto_pub -t`"),
        ),
        (
            "mosquitto_pub --url=mqtt://u@localhost:1883/{{ a }} -m on",
            Some("the topic `mosquitto_pub -t`"),
        ),
        ("mosquitto_pub -L mqtt://localhost/home/{{ a }} -m on", None),
        ("mosquitto_pub -t home/{{ a }}/set -m on", None),
        ("mosquitto_pub -t home/x/set -m {{ a }}", None),
        (
            "mosquitto_pub -r -t homeassistant/switch/x/state -m {{ a }}",
            None,
        ),
        ("mosquitto_sub -t {{ a }} -C 1", None),
        // chmod (fe30v F8): the file it makes executable, the mode from a value.
        (
            "chmod +x {{ a }}",
            Some("the file `chmod` makes executable"),
        ),
        (
            "chmod 755 /srv/in/{{ a }}",
            Some("the file `chmod` makes executable"),
        ),
        (
            "chmod -R a+X {{ a }}",
            Some("the file `chmod` makes executable"),
        ),
        (
            "chmod u+rwx,go+rx {{ a }}",
            Some("the file `chmod` makes executable"),
        ),
        (
            "chmod --reference=/srv/x {{ a }}",
            Some("the file `chmod` makes executable"),
        ),
        ("chmod {{ a }} /srv/x", Some("the mode `chmod` sets")),
        ("chmod 644 {{ a }}", None),
        ("chmod u=rw,go=r {{ a }}", None),
        ("chmod -x {{ a }}", None),
        ("chmod go-w {{ a }}", None),
        ("chmod +x /usr/local/bin/report", None),
        // Behind wrappers and programs actiond does not know, as `own`'s rules are.
        ("sudo systemctl start {{ a }}", Some("`systemctl` verb")),
        ("timeout 5 curl -K {{ a }} https://x", Some("`curl -K`")),
        ("busybox wget -i {{ a }}", Some("list of URLs")),
    ]
}

#[test]
fn a_value_in_a_dangerous_form_of_a_trusted_program_is_refused() {
    let mut wrong = Vec::new();
    for (text, want) in table() {
        let got = shell(text, &values(false, false));
        match (got, want) {
            (Ok(()), None) => {}
            (Err(why), Some(words)) if why.contains(words) => {}
            (got, want) => wrong.push(format!("{text}: got {got:?}, want {want:?}")),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_number_or_the_authors_choices_are_safe_where_a_file_or_unit_is_picked() {
    for (text, want) in table() {
        if want.is_none() {
            continue;
        }
        let code = [
            "`.wgetrc`",
            "`ssh -o`",
            "`ssh -I`",
            "OpenSSL",
            "`aplay -D`",
            "a remote path",
        ];
        let signal = want == Some("`systemctl kill`");
        let env = want == Some("set-environment");
        let chosen = shell(text, &values(false, true));
        let is_code = code.iter().any(|c| want.is_some_and(|w| w.contains(c)));
        // Code and the environment take only numbers; the rest the author's choices.
        assert_eq!(
            chosen.is_ok(),
            !(is_code || env),
            "{text} with choices: {chosen:?}"
        );
        if !signal {
            assert!(shell(text, &values(true, false)).is_ok(), "{text} with int");
        }
    }
}

/// The same forms as `exec:` elements, where each element is one word.
#[test]
fn the_forms_are_read_in_exec_too() {
    let table: &[(&[&str], bool)] = &[
        (&["curl", "-K", "{{ a }}", "https://x"], true),
        (&["curl", "-sK{{ a }}", "https://x"], true),
        (&["curl", "--config={{ a }}", "https://x"], true),
        (&["curl", "-fsS", "{{ a }}"], false),
        (&["ssh", "-o", "{{ a }}", "h", "true"], true),
        (&["ssh", "-o", "User={{ a }}", "h", "true"], false),
        (&["ssh", "-oUser={{ a }}", "h", "true"], false),
        (&["tar", "-cf", "{{ a }}", "/srv"], true),
        (&["tar", "-cf", "/backup/{{ a }}.tar", "/srv"], false),
        (&["systemctl", "restart", "{{ a }}"], true),
        (&["systemctl", "restart", "app@{{ a }}.service"], false),
        (&["systemctl", "set-environment", "X={{ a }}"], true),
        (&["mpc", "{{ a }}"], true),
        (&["mpc", "play", "{{ a }}"], false),
    ];
    for (argv, refused) in table {
        let got = exec(argv, &values(false, false));
        assert_eq!(got.is_err(), *refused, "{argv:?}: {got:?}");
    }
}

/// Every program `known` trusts was audited: it has rules here, or is listed with what was
/// checked as having no dangerous form; never both.
#[test]
fn every_trusted_program_is_audited() {
    let wrong: Vec<String> = super::super::known::NOT_WRAPPERS
        .iter()
        .filter(|name| super::audited(name) == super::NONE.iter().any(|(n, _)| n == *name))
        .map(|name| String::from_utf8_lossy(name).into_owned())
        .collect();
    assert!(wrong.is_empty(), "unaudited or audited twice: {wrong:?}");
    for (name, _) in super::NONE {
        let shown = String::from_utf8_lossy(name);
        assert!(
            super::super::known::NOT_WRAPPERS.contains(name),
            "{shown} is no longer trusted"
        );
    }
}

/// A row of the author's entity file picks what a trusted program acts on as `choices:` do
/// (OliveTin's default config starts and stops the containers `docker ps` listed): the presser
/// picks a row, never a value of their own. Where a value is more than a pick (a program, a
/// file written), an entity field is refused still.
#[test]
fn an_entity_row_may_pick_what_a_trusted_program_acts_on() {
    let v = values(false, false);
    for text in [
        "docker start {{ .CurrentEntity.Names }}",
        "docker stop {{ .CurrentEntity.Names }}",
        "systemctl restart {{ .CurrentEntity.unit }}",
        "mosquitto_pub -t {{ .CurrentEntity.topic }} -m on",
    ] {
        assert!(shell(text, &v).is_ok(), "{text}: {:?}", shell(text, &v));
    }
    for text in [
        "{{ .CurrentEntity.cmd }} x",
        "curl -K {{ .CurrentEntity.file }} https://x",
        "docker save -o {{ .CurrentEntity.file }} app",
    ] {
        assert!(shell(text, &v).is_err(), "{text}");
    }
}
