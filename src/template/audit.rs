//! The audit of the programs the model trusts (`known::NOT_WRAPPERS`): for each, the options
//! and operand forms whose value the program reads as more than data, checked against the
//! manual of its Debian bookworm version: run as a command or read as code of its own
//! (`wget -e`, `aplay -D 'file:|CMD'`, `ssh -I LIB`), the name of a file it reads as its
//! settings, commands or list of names (`curl -K`, `ssh -F`, `tar -T`, `rsync --files-from`,
//! `wget -i`), the name of a file whose content it sends or copies elsewhere (`curl -T`,
//! `mosquitto_pub -f`, `logger -f`, `tar -f HOST:FILE`), a setting of other programs (`systemctl
//! set-environment`), a pick among everything the program can act on (`systemctl start
//! UNIT`, `mpc CMD`), and the processes it signals (`systemctl kill UNIT`). A value there
//! (`-K {{ v }}`, `-K{{ v }}`, `-sK {{ v }}`, `--config={{ v }}`, `--conf {{ v }}`) is
//! refused by the kind of rereading the rule names, which `judge` weighs. One table and one
//! matcher for all; the forms other modules already read are theirs and not repeated here:
//! an option whose name says it holds a command (`--execute`, `--rsh`, `--to-command`,
//! `rsync -e`, `tar -I`, `scp -S`, `ssh -o ProxyCommand=`) is `launchers`', curl's data
//! and form files (`-d @FILE`, `-F name=@FILE`) and the processes of `kill`/`pkill` are
//! `own`'s, a program's standard input is `own::stdin`'s, a value that starts an argument
//! with `-` is `starts`'. Programs whose reach is too wide to list (`mount`, `ffmpeg`,
//! `ffprobe`) are not trusted at all and so not here. Pure and syntactic like `own`: it
//! reads words, never values, and judges nothing. The trusted programs with no such form are
//! listed in `NONE` with what was checked, and a test holds every trusted entry to be in one
//! of the two lists.

use super::own_git::Found;
use super::reread::Rereading;

/// Where a dangerous value stands.
#[derive(Debug, Clone, Copy)]
enum At {
    /// The value of an option: any of the short letters (alone, bundled, attached) or the
    /// long names (`--name VALUE`, `--name=VALUE`, an unambiguous prefix of the name). A
    /// long name ending in `=` takes its value only attached (`logger --journald=FILE`).
    Option(&'static [u8], &'static [&'static [u8]]),
    /// The first operand (`mpc CMD`, `vcgencmd CMD`).
    First,
    /// Every operand after a first operand that is one of these subcommands (`systemctl
    /// kill UNIT…`).
    After(&'static [&'static [u8]]),
    /// Every operand written as a remote path (`HOST:PATH`, `USER@HOST:PATH`: a `:` before
    /// any `/`), which scp and rsync hand to a shell on the far side.
    Remote,
}

/// One dangerous form of a program.
#[derive(Debug, Clone, Copy)]
struct Rule {
    at: At,
    how: Rereading,
    /// What the program does with a value there, for the refusal.
    place: &'static str,
    /// Only when a value starts the word (`ssh -o {{ v }}`, not `ssh -o User={{ v }}`; `tar
    /// -f {{ v }}`, which may be `HOST:FILE`, not `tar -f /backup/{{ v }}`).
    leading: bool,
    /// Words that make the form harmless when the command has one (`tar --force-local`).
    unless: &'static [&'static [u8]],
}

/// A trusted program and its dangerous forms.
struct Audited {
    names: &'static [&'static [u8]],
    /// The short options that take a value (to read a bundle `-sK` right and skip values).
    takes: &'static [u8],
    rules: &'static [Rule],
}

const fn opt(
    short: &'static [u8],
    long: &'static [&'static [u8]],
    how: Rereading,
    place: &'static str,
) -> Rule {
    Rule {
        at: At::Option(short, long),
        how,
        place,
        leading: false,
        unless: &[],
    }
}

/// A value in a remote path of scp or rsync (`At::Remote`).
const fn remote() -> Rule {
    Rule {
        at: At::Remote,
        how: Code,
        place: REMOTE_PATH,
        leading: false,
        unless: &[],
    }
}

const fn lead(rule: Rule) -> Rule {
    Rule {
        leading: true,
        ..rule
    }
}

use Rereading::{Below, Code, Environment, FileRef, Selection, Sent, Settings, Signal, Written};

const CURL_CONFIG: &str = "the file of `curl -K`/`--config`, which curl reads as its options \
                           (`output = /etc/…`, `upload-file`, `url`)";
const CURL_SENT: &str = "a file curl sends (`-T`/`--upload-file`, `-b`/`--cookie` FILE, \
                         `--netrc-file`'s credentials, `--etag-compare`)";
const CURL_AT: &str = "curl's `--write-out` or `--proxy-header`, which read a file when it \
                       starts with `@`";
const ENGINE: &str = "an OpenSSL engine (`curl --engine`, `mosquitto_pub --tls-engine`), which \
                      may be a shared library to load";
const WGET_CODE: &str = "a `.wgetrc` command of `wget -e` (`use_askpass = CMD` runs a program, \
                         `output_document` writes any file)";
const WGET_LIST: &str = "a file wget reads as its settings or list of URLs (`--config`, `-i`/\
                         `--input-file`)";
const WGET_SENT: &str = "a file wget sends (`--post-file`, `--body-file`, `--load-cookies`)";
const RSYNC_LIST: &str = "a file rsync reads as its list of names, batch of changes or daemon \
                          settings (`--files-from`, `--read-batch`, `--config`), or an option \
                          of the remote rsync (`-M`/`--remote-option`)";
const REMOTE_PATH: &str = "a remote path (`HOST:PATH`) of `scp`/`rsync`, which the shell on the \
                           far side reads as code with the legacy protocols (`scp -O`, OpenSSH \
                           before 9.0, rsync before 3.2.4 or with `--old-args`)";
const RSYNC_SENT: &str = "a file rsync sends to the daemon (`--password-file`, `--early-input`)";
const SSH_CONFIG: &str = "the configuration file of `ssh -F`/`scp -F`, whose settings run \
                          commands (`ProxyCommand`, `LocalCommand`, `Match exec`)";
const SSH_OPTION: &str = "a setting of `ssh -o`/`scp -o` as a whole (`ProxyCommand=CMD`, \
                          `PKCS11Provider=LIB`)";
const SSH_LIBRARY: &str = "the PKCS#11 library of `ssh -I`, which ssh loads and runs";
const TAR_LIST: &str = "the list of names of `tar -T`/`--files-from`, whose lines may be \
                        options (`-C DIR`, `--…`)";
const TAR_FILE: &str = "the archive of `tar -f`/`--file`, which as `HOST:FILE` tar writes or \
                        reads on HOST through its remote shell (`rsh HOST /usr/sbin/rmt`, ssh \
                        on Debian): write a path of your own before the value (`-f \
                        /backup/{{ v }}`)";
const LOGGER_SENT: &str = "a file logger copies into the log (`-f`/`--file`, `--journald=FILE`)";
const MQTT_TOPIC: &str = "the topic `mosquitto_pub -t` (or the url of `-L`) publishes to, which \
                          picks the device that acts (Tasmota's `cmnd/…/Backlog`, zigbee2mqtt's \
                          `bridge/request/…`, Home Assistant's `homeassistant/…/config`)";
/// The place of a message published as a Home Assistant discovery config (`discovery`).
/// A value inside a topic whose type may hold `/` (fe30x F7).
const MQTT_LEVELS: &str = "a part of the topic `mosquitto_pub -t` (or `-L`) publishes to, where a \
                           value holding `/` picks a topic further down (`cmnd/{{ v }}` with \
                           `tasmota/Reset`, `zigbee2mqtt/{{ v }}` with `bridge/request/restart`): \
                           give the argument a type that holds no `/` (`ascii_identifier`) or \
                           `choices:`";
pub const MQTT_DISCOVERY: &str = "the message `mosquitto_pub` publishes to a Home Assistant \
                                  discovery topic (`homeassistant/…/config`), which is no data \
                                  but the definition of an entity, kept by the broker when \
                                  retained: the topics it commands, its templates, its name";
const MOSQUITTO_SENT: &str = "the file `mosquitto_pub -f` sends as the message";
const JQ_FILE: &str = "a file of jq's program (`-f`/`--from-file`) or the directory of its \
                       modules (`-L`)";
const LIST: &str = "a file of names the program reads (`dig -f` queries with their options, \
                    `fping -f`, `wakeonlan -f`)";
const HOSTNAME_SENT: &str = "the file `hostname -F` copies into the host name, which every \
                             program can read";
const ALSA: &str = "the ALSA device of `aplay -D`, where `file:'|CMD'` pipes the sound to a \
                    command";
const SYSTEMCTL_UNIT: &str = "the unit a `systemctl` verb acts on (`start`, `restart`, `enable`, \
                              `isolate`, `link`, `set-property`, …)";
const SYSTEMCTL_KILL: &str = "the units `systemctl kill` signals";
const SYSTEMCTL_ENV: &str = "the environment `systemctl set-environment` or \
                             `import-environment` gives every service the manager starts";
const COMMAND: &str = "the command of `mpc` or `vcgencmd` (its first operand), which picks \
                       what the program does";

const DOCKER_TARGET: &str = "the image, container, tag, volume or network a `docker`/`podman` \
                             verb acts on (`pull`, `tag`, `cp`, `restart`, `rm`, `commit`, \
                             `login`'s server, …): a value picks any the daemon has, such as the \
                             image an app's next start runs (`docker tag {{ v }} app:latest`) or \
                             the container a file is copied into";
const DOCKER_LOAD: &str = "the archive `docker load -i`/`--input` reads images and their tags \
                           from, which replace the images an app's next start runs (an upload, \
                           a file any action downloaded)";
const DOCKER_SAVED: &str = "the file `docker save -o`/`docker export -o` writes (a whole image \
                            or a container's files)";

/// The verbs of `docker` and `podman` (and of their `image`, `network` management commands)
/// whose operands are what they act on. The ones that only show (`logs`, `inspect`, `ps`,
/// `top`, `stats`, `port`, `diff`, `history`) may show any, as `systemctl status` may.
const DOCKER_VERBS: &[&[u8]] = &[
    b"start",
    b"stop",
    b"restart",
    b"kill",
    b"pause",
    b"unpause",
    b"rm",
    b"remove",
    b"rmi",
    b"pull",
    b"push",
    b"tag",
    b"cp",
    b"load",
    b"import",
    b"save",
    b"export",
    b"commit",
    b"update",
    b"rename",
    b"login",
    b"logout",
    b"connect",
    b"disconnect",
    b"prune",
];

/// The verbs of `systemctl` whose operands are units (or unit files) to act on.
const UNIT_VERBS: &[&[u8]] = &[
    b"start",
    b"stop",
    b"reload",
    b"restart",
    b"try-restart",
    b"reload-or-restart",
    b"try-reload-or-restart",
    b"condrestart",
    b"force-reload",
    b"isolate",
    b"clean",
    b"freeze",
    b"thaw",
    b"set-property",
    b"bind",
    b"mount-image",
    b"service-log-level",
    b"service-log-target",
    b"enable",
    b"disable",
    b"reenable",
    b"preset",
    b"mask",
    b"unmask",
    b"link",
    b"revert",
    b"edit",
    b"add-wants",
    b"add-requires",
    b"set-default",
];

/// The table: every trusted program with a dangerous form (the others are in `NONE`, with
/// what was checked).
const AUDITED: &[Audited] = &[
    Audited {
        names: &[b"curl"],
        takes: b"EKCbcdDFPHhmoUQreXYytzTuAw",
        rules: &[
            opt(b"K", &[b"config"], Settings, CURL_CONFIG),
            opt(b"T", &[b"upload-file"], Sent, CURL_SENT),
            lead(opt(b"b", &[b"cookie"], Sent, CURL_SENT)),
            opt(b"", &[b"netrc-file", b"etag-compare"], Sent, CURL_SENT),
            lead(opt(
                b"w",
                &[b"write-out", b"proxy-header"],
                FileRef,
                CURL_AT,
            )),
            opt(b"", &[b"engine"], Code, ENGINE),
        ],
    },
    Audited {
        names: &[b"wget"],
        takes: b"eoaiBtOTwQPUlARDIX",
        rules: &[
            opt(b"e", &[b"execute"], Code, WGET_CODE),
            opt(b"i", &[b"input-file", b"config"], Settings, WGET_LIST),
            opt(
                b"",
                &[b"post-file", b"body-file", b"load-cookies"],
                Sent,
                WGET_SENT,
            ),
        ],
    },
    Audited {
        names: &[b"rsync"],
        takes: b"BefMT",
        rules: &[
            opt(
                b"M",
                &[b"files-from", b"read-batch", b"config", b"remote-option"],
                Settings,
                RSYNC_LIST,
            ),
            opt(b"", &[b"password-file", b"early-input"], Sent, RSYNC_SENT),
            remote(),
        ],
    },
    Audited {
        names: &[b"ssh"],
        takes: b"BbcDEeFIiJLlmOopQRSWw",
        rules: &[
            opt(b"F", &[], Settings, SSH_CONFIG),
            lead(opt(b"o", &[], Code, SSH_OPTION)),
            opt(b"I", &[], Code, SSH_LIBRARY),
        ],
    },
    Audited {
        names: &[b"scp"],
        takes: b"cDFiJloPSX",
        rules: &[
            opt(b"F", &[], Settings, SSH_CONFIG),
            lead(opt(b"o", &[], Code, SSH_OPTION)),
            remote(),
        ],
    },
    Audited {
        names: &[b"tar"],
        takes: b"gCTXfFLbHVIKN",
        rules: &[
            opt(b"T", &[b"files-from"], Settings, TAR_LIST),
            Rule {
                unless: &[b"--force-local"],
                ..lead(opt(b"f", &[b"file"], Sent, TAR_FILE))
            },
        ],
    },
    Audited {
        names: &[b"logger"],
        takes: b"fpStnPu",
        rules: &[opt(b"f", &[b"file", b"journald="], Sent, LOGGER_SENT)],
    },
    Audited {
        names: &[b"mosquitto_pub"],
        takes: b"AfhiIkLmMpPqtuVx",
        rules: &[
            lead(opt(b"tL", &[b"topic", b"url"], Selection, MQTT_TOPIC)),
            opt(b"f", &[b"file"], Sent, MOSQUITTO_SENT),
            opt(b"", &[b"tls-engine"], Code, ENGINE),
        ],
    },
    Audited {
        names: &[b"mosquitto_sub"],
        takes: b"AChiIkLMpPqtTuVWx",
        rules: &[opt(b"", &[b"tls-engine"], Code, ENGINE)],
    },
    Audited {
        names: &[b"jq"],
        takes: b"fL",
        rules: &[opt(b"fL", &[b"from-file"], Settings, JQ_FILE)],
    },
    Audited {
        names: &[b"dig"],
        takes: b"bcfkmpqtxy",
        rules: &[opt(b"f", &[], Settings, LIST)],
    },
    Audited {
        names: &[b"fping"],
        takes: b"bBcCfgHiIOpQrSt",
        rules: &[opt(b"f", &[b"file"], Settings, LIST)],
    },
    Audited {
        names: &[b"wakeonlan"],
        takes: b"ipf",
        rules: &[opt(b"f", &[], Settings, LIST)],
    },
    Audited {
        names: &[b"hostname"],
        takes: b"F",
        rules: &[opt(b"F", &[b"file"], Sent, HOSTNAME_SENT)],
    },
    Audited {
        names: &[b"aplay"],
        takes: b"DtcfrdsFBARTVm",
        rules: &[opt(b"D", &[b"device"], Code, ALSA)],
    },
    Audited {
        names: &[b"systemctl"],
        takes: b"tpPHMnos",
        rules: &[
            lead(Rule {
                at: At::After(UNIT_VERBS),
                how: Selection,
                place: SYSTEMCTL_UNIT,
                leading: false,
                unless: &[],
            }),
            Rule {
                at: At::After(&[b"kill"]),
                how: Signal,
                place: SYSTEMCTL_KILL,
                leading: false,
                unless: &[],
            },
            Rule {
                at: At::After(&[b"set-environment", b"import-environment"]),
                how: Environment,
                place: SYSTEMCTL_ENV,
                leading: false,
                unless: &[],
            },
        ],
    },
    // `known` trusts only the subcommands that run no program (`CONTAINER_KNOWN`). `takes`
    // holds the letters whose value is never a target (`stop -t`, `kill -s`, `logs -n`,
    // `commit -m`, `login -u`); any other word is read as an operand, the safe side.
    Audited {
        names: &[b"docker", b"podman"],
        takes: b"tsnmcu",
        rules: &[
            lead(Rule {
                at: At::After(DOCKER_VERBS),
                how: Selection,
                place: DOCKER_TARGET,
                leading: false,
                unless: &[],
            }),
            opt(b"i", &[b"input"], Selection, DOCKER_LOAD),
            lead(opt(b"o", &[b"output"], Written, DOCKER_SAVED)),
        ],
    },
    // `chmod +x FILE` makes the file a program (`executable`): no option form.
    Audited {
        names: &[b"chmod"],
        takes: b"",
        rules: &[],
    },
    Audited {
        names: &[b"mpc"],
        takes: b"hpf",
        rules: &[lead(Rule {
            at: At::First,
            how: Selection,
            place: COMMAND,
            leading: false,
            unless: &[],
        })],
    },
    Audited {
        names: &[b"vcgencmd"],
        takes: b"",
        rules: &[lead(Rule {
            at: At::First,
            how: Selection,
            place: COMMAND,
            leading: false,
            unless: &[],
        })],
    },
];

/// The trusted programs the audit found no such form in, each with what was checked (a test
/// holds that every entry of `known::NOT_WRAPPERS` is here or in `AUDITED`, so that no entry
/// is trusted unaudited). The shell's builtins are `commands`' (`read`, `let`, `export`,
/// `declare`, `printf -v`, `test -v`, `kill` are read there or by `own`).
// Read by the tests only: the audit's record beside the table the model uses.
#[cfg_attr(not(test), allow(dead_code))]
pub(super) const NONE: &[(&[u8], &str)] = &[
    (b"echo", "builtin: prints its words"),
    (b"printf", "builtin: `-v NAME` is `commands`' (a name)"),
    (b"cd", "builtin: the directory is `directories`'"),
    (b"pushd", "builtin: as `cd`"),
    (b"popd", "builtin: a stack index"),
    (b"test", "builtin: `-v NAME` is `commands`'"),
    (b"[", "builtin: as `test`"),
    (b":", "builtin: does nothing"),
    (b"true", "builtin: does nothing"),
    (b"false", "builtin: does nothing"),
    (b"exit", "builtin: a status"),
    (b"return", "builtin: a status"),
    (b"shift", "builtin: a count (arithmetic is `commands`')"),
    (
        b"set",
        "builtin: options and positional parameters (`starts` reads a leading `-`)",
    ),
    (b"unset", "builtin: names are `commands`'"),
    (b"export", "builtin: the environment is `commands`'"),
    (b"readonly", "builtin: as `export`"),
    (b"local", "builtin: as `export`"),
    (b"declare", "builtin: as `export`"),
    (b"typeset", "builtin: as `export`"),
    (b"read", "builtin: its names are `commands`'"),
    (b"wait", "builtin: process ids it waits for, signals none"),
    (b"kill", "builtin: its processes are `own`'s (`Signal`)"),
    (b"umask", "builtin: a mode"),
    (b"getopts", "builtin: its name is `commands`'"),
    (b"let", "builtin: arithmetic is `commands`'"),
    (b"cat", "files it prints"),
    (
        b"sort",
        "`-o FILE` writes: a name a value makes is `filed::named`'s",
    ),
    (b"ls", "files it lists"),
    (b"rm", "files it removes (a path is `paths`')"),
    (
        b"cp",
        "operands are the files it copies, by design; `-S`, `-t` name files",
    ),
    (b"mv", "as `cp`"),
    (b"mkdir", "directories it makes"),
    (b"rmdir", "directories it removes"),
    (b"touch", "`-r FILE`, `-d DATE` read a time"),
    (b"ln", "links it makes, by design"),
    (b"chown", "`--reference=FILE`, `--from` read owners"),
    (b"chgrp", "as `chown`"),
    (b"stat", "`--printf` is a format of its own"),
    (
        b"du",
        "`--files0-from`, `-X` read names and patterns: the reach of its operands",
    ),
    (b"df", "file systems it lists"),
    (b"head", "files it prints"),
    (b"tail", "files it prints; `--pid` waits"),
    (
        b"wc",
        "`--files0-from` reads names: the reach of its operands",
    ),
    (b"uniq", "files"),
    (b"cut", "files"),
    (b"tr", "sets of characters"),
    (
        b"tee",
        "files it writes (what is written there is `filed`'s)",
    ),
    (b"basename", "text"),
    (b"dirname", "text"),
    (b"realpath", "paths"),
    (b"readlink", "paths"),
    (
        b"date",
        "`-f FILE` prints bad lines (the reach of `cat`); `-s` sets the clock",
    ),
    (b"sleep", "a duration"),
    (b"mktemp", "a template, `-p DIR`"),
    (
        b"md5sum",
        "`-c FILE` reads names of files to check: the reach of its operands",
    ),
    (b"sha1sum", "as `md5sum`"),
    (b"sha256sum", "as `md5sum`"),
    (b"base64", "files"),
    (b"truncate", "`-r FILE` reads a size"),
    (
        b"grep",
        "`-f FILE` reads patterns, `--exclude-from` globs: data",
    ),
    (b"egrep", "as `grep`"),
    (b"fgrep", "as `grep`"),
    (
        b"diff",
        "`--from-file`, `--to-file` are files compared; `-l` runs `pr`, fixed",
    ),
    (b"cmp", "files"),
    (b"file", "`-m` reads magic, `-f` names: data"),
    (b"gzip", "files (`GZIP` in the environment is `commands`')"),
    (b"gunzip", "as `gzip`"),
    (b"zcat", "as `gzip`"),
    (
        b"journalctl",
        "`--file`, `-D`, `--root` read journals it prints; `--vacuum-*` deletes logs",
    ),
    (b"reboot", "its argument is the firmware's reboot mode"),
    (b"poweroff", "flags"),
    (b"shutdown", "a time and a wall message"),
    (b"halt", "flags"),
    (b"pkill", "its words are `own`'s (`Signal`)"),
    (b"pgrep", "as `pkill`"),
    (b"killall", "as `pkill`"),
    (b"pidof", "prints process ids, signals none"),
    (b"uname", "flags"),
    (b"uptime", "flags"),
    (b"free", "flags"),
    (b"id", "a user"),
    (b"whoami", "nothing"),
    (b"sync", "files"),
    (b"umount", "a mount point it detaches (any, by design)"),
    (
        b"amixer",
        "controls and values; `-s` reads commands from its input, `own::stdin`'s",
    ),
    (
        b"ping",
        "a host; `-p` a pattern of bytes, `-I` an interface",
    ),
    (b"ping6", "as `ping`"),
    (b"arping", "a host and an interface; `-f` is a flag"),
    (
        b"traceroute",
        "`-M` picks a built-in method (no module is loaded)",
    ),
    (
        b"nslookup",
        "a name and a server; commands come on its input, `own::stdin`'s",
    ),
    (b"host", "a name and a server"),
    (b"whois", "a query sent to the server it names, by design"),
    (b"etherwake", "an address and an interface"),
    (b"ether-wake", "as `etherwake`"),
];

/// Whether `name` has dangerous forms in the table.
pub fn audited(name: &[u8]) -> bool {
    entry(name).is_some()
}

fn entry(name: &[u8]) -> Option<&'static Audited> {
    AUDITED.iter().find(|a| a.names.contains(&name))
}

/// The words of the program `name` at `i` whose value it reads as more than data, by the
/// table. `values` are the words (`None` where a value or an expansion is in one), `texts`
/// their text as far as it is known (an option's name).
pub fn words(values: &[Option<&[u8]>], texts: &[&[u8]], i: usize, name: &[u8]) -> Vec<Found> {
    let Some(a) = entry(name) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut operands = Vec::new();
    let mut ended = false;
    let mut j = i + 1;
    while j < values.len() {
        let t = texts[j];
        if !ended && t == b"--" {
            ended = true;
        } else if !ended && t.len() > 2 && t.starts_with(b"--") {
            j += long(a, values, texts, j, &mut out);
        } else if !ended && t.len() > 1 && t[0] == b'-' {
            j += short(a, values, texts, j, &mut out);
        } else {
            operands.push(j);
        }
        j += 1;
    }
    for rule in a.rules {
        let picked: &[usize] = match rule.at {
            At::Option(..) => continue,
            At::First => operands.get(..1).unwrap_or_default(),
            At::After(verbs) => operands
                .iter()
                .position(|&k| values[k].is_some_and(|v| verbs.contains(&v)))
                .map_or(&[][..], |p| &operands[p + 1..]),
            At::Remote => {
                let remote = |&&k: &&usize| {
                    let t = texts[k];
                    t.iter()
                        .position(|&c| c == b':')
                        .is_some_and(|c| c > 0 && !t[..c].contains(&b'/'))
                };
                let picked: Vec<usize> = operands.iter().filter(remote).copied().collect();
                out.extend(picked.iter().map(|&k| found(k, rule, false)));
                continue;
            }
        };
        out.extend(picked.iter().map(|&k| found(k, rule, rule.leading)));
    }
    if name == b"mosquitto_pub" {
        out.extend(discovery(values, texts, i));
        out.extend(url_topic(values, texts, i));
        out.extend(topic_levels(values, texts, i));
    }
    if name == b"chmod" {
        out.extend(executable(values, &operands));
    }
    // A rule is disarmed by a word of its `unless` anywhere in the command.
    let has = |w: &[u8]| values.contains(&Some(w));
    out.retain(|f| {
        f.at < values.len()
            && a.rules
                .iter()
                .find(|r| r.place == f.place && r.how == f.how)
                .is_none_or(|r| !r.unless.iter().any(|w| has(w)))
    });
    out
}

/// The message of `mosquitto_pub` (at `i`) when its topic, written out, is a Home Assistant
/// discovery topic (`homeassistant/…/config`): a value there defines an entity (fe30v F13).
/// The topic from a value is `MQTT_TOPIC`'s.
fn discovery(values: &[Option<&[u8]>], texts: &[&[u8]], i: usize) -> Vec<Found> {
    let value_of = |names: &[&[u8]]| -> Vec<usize> {
        let mut out = Vec::new();
        for (j, &t) in texts.iter().enumerate().take(values.len()).skip(i + 1) {
            if names.contains(&t) && j + 1 < values.len() {
                out.push(j + 1);
            } else if names
                .iter()
                .any(|n| n.starts_with(b"--") && t.starts_with(n) && t.get(n.len()) == Some(&b'='))
            {
                out.push(j);
            }
        }
        out
    };
    let discovery = value_of(&[b"-t", b"--topic"]).into_iter().any(|k| {
        values[k].is_some_and(|t| t.starts_with(b"homeassistant/") && t.ends_with(b"/config"))
    });
    if !discovery {
        return Vec::new();
    }
    value_of(&[b"-m", b"--message"])
        .into_iter()
        .map(|at| Found {
            at,
            place: MQTT_DISCOVERY,
            how: Selection,
            env: None,
            leading: false,
        })
        .collect()
}

/// The place of a file `chmod` gives an execute bit (fe30v F8).
pub const EXECUTABLE: &str = "the file `chmod` makes executable (`+x`, `u+x`, `755`, a mode \
                              from a value or `--reference`), which a value picks: an upload \
                              (`{{ filepath }}`) or any file becomes a program that a run-parts \
                              directory, a `PATH` entry or a later command runs";

/// The place of the mode `chmod` sets, when a value makes it.
const CHMOD_MODE: &str = "the mode `chmod` sets, which a value picks (`4755` makes a program run \
                          as its owner, `777` lets anyone write the file)";

/// The files `chmod` (its `operands`: the mode, then the files) gives an execute bit: every
/// file when the mode may add one (an `x`/`X` after `+` or `=`, an odd digit among the last
/// three of a number, a mode from a value, `--reference`).
fn executable(values: &[Option<&[u8]>], operands: &[usize]) -> Vec<Found> {
    let reference = values
        .iter()
        .flatten()
        .any(|w| w.starts_with(b"--reference"));
    // A mode that starts with `-` is read as an option (`chmod -x F`, `chmod -w,u+x F`).
    let dashed = values.iter().flatten().find(|w| {
        w.len() > 1 && w[0] == b'-' && w[1..].iter().all(|c| b"rwxXstugoa+-=,".contains(c))
    });
    let (mode, files) = if reference {
        (None, operands)
    } else if let Some(m) = dashed {
        (Some(Some(*m)), operands)
    } else {
        match operands.split_first() {
            Some((&m, files)) => (Some(values[m]), files),
            None => return Vec::new(),
        }
    };
    // A mode from a value picks any: `4755` runs the file as its owner, `777` lets anyone
    // write it.
    let mut out: Vec<Found> = mode
        .into_iter()
        .filter(|m| m.is_none())
        .map(|_| Found {
            at: operands[0],
            place: CHMOD_MODE,
            how: Selection,
            env: None,
            leading: false,
        })
        .collect();
    let adds = match mode {
        None | Some(None) => true,
        Some(Some(m)) if m.iter().all(u8::is_ascii_digit) => {
            m.iter().rev().take(3).any(|d| (d - b'0') % 2 == 1)
        }
        Some(Some(m)) => m.split(|&c| c == b',').any(|clause| {
            clause
                .iter()
                .position(|&c| c == b'+' || c == b'=')
                .is_some_and(|p| clause[p..].iter().any(|&c| c == b'x' || c == b'X'))
        }),
    };
    if adds {
        out.extend(files.iter().map(|&at| Found {
            at,
            place: EXECUTABLE,
            how: Selection,
            env: None,
            leading: false,
        }));
    }
    out
}

/// The url of `mosquitto_pub -L`/`--url` whose topic a value starts (`mqtt://host/{{ v }}`,
/// where the value is all of the topic): `MQTT_TOPIC`'s rule reads only a value that starts
/// the word.
fn url_topic(values: &[Option<&[u8]>], texts: &[&[u8]], i: usize) -> Vec<Found> {
    let mut out = Vec::new();
    for j in i + 1..values.len() {
        let (at, text) = match texts[j] {
            b"-L" | b"--url" if j + 1 < values.len() => (j + 1, texts[j + 1]),
            t if t.starts_with(b"--url=") => (j, &t[6..]),
            _ => continue,
        };
        if values[at].is_some() {
            continue;
        }
        let known = text
            .windows(2)
            .position(|w| w == b"{{")
            .map_or(text, |k| &text[..k]);
        let Some(scheme) = known.windows(3).position(|w| w == b"://") else {
            continue;
        };
        let rest = &known[scheme + 3..];
        if rest.iter().filter(|&&c| c == b'/').count() == 1 && rest.ends_with(b"/") {
            out.push(Found {
                at,
                place: MQTT_TOPIC,
                how: Selection,
                env: None,
                leading: false,
            });
        }
    }
    out
}

/// The topic of `mosquitto_pub -t` (`--topic`, `-tT`, `--topic=T`) with a value in it: a
/// value that may hold `/` picks a topic further down (`cmnd/{{ v }}`, fe30x F7).
fn topic_levels(values: &[Option<&[u8]>], texts: &[&[u8]], i: usize) -> Vec<Found> {
    let mut out = Vec::new();
    for j in i + 1..values.len() {
        let at = match texts[j] {
            b"-t" | b"--topic" if j + 1 < values.len() => j + 1,
            t if t.starts_with(b"--topic=") || (t.starts_with(b"-t") && t.len() > 2) => j,
            _ => continue,
        };
        // A value that starts the topic is `MQTT_TOPIC`'s (a pick among all, or an entity row).
        let t = texts[at];
        let t = t
            .strip_prefix(b"--topic=")
            .or_else(|| t.strip_prefix(b"-t"))
            .filter(|_| at == j)
            .unwrap_or(t);
        let t = t.strip_prefix(b"\"").unwrap_or(t);
        // (`texts` holds a word's text as far as it is known: nothing when a value starts it.)
        let starts = t.is_empty() || t.starts_with(b"{{") || t.starts_with(b"$");
        if values[at].is_none() && !starts {
            out.push(Found {
                at,
                place: MQTT_LEVELS,
                how: Below,
                env: None,
                leading: false,
            });
        }
    }
    out
}

fn found(at: usize, rule: &Rule, leading: bool) -> Found {
    Found {
        at,
        place: rule.place,
        how: rule.how,
        env: None,
        leading,
    }
}

/// Whether the text after an option, in its own word, starts with the value (nothing known
/// before it: `-o{{ v }}`, `--file=` with the value removed).
fn starts_value(rest: &[u8]) -> bool {
    rest.is_empty() || rest.starts_with(b"{{")
}

/// A long option at `j`: notes the word holding its value when a rule names it, and returns
/// how many words its value takes after it (1 for `--name VALUE` of a rule, else 0: an
/// option not in the table is taken for a flag).
fn long(
    a: &Audited,
    values: &[Option<&[u8]>],
    texts: &[&[u8]],
    j: usize,
    out: &mut Vec<Found>,
) -> usize {
    let t = &texts[j][2..];
    let (name, attached) = match t.iter().position(|&c| c == b'=') {
        Some(e) => (&t[..e], Some(&t[e + 1..])),
        None => (t, None),
    };
    fn bare(l: &[u8]) -> &[u8] {
        l.strip_suffix(b"=").unwrap_or(l)
    }
    // `--conf` is curl's `--config` (getopt and curl take an unambiguous prefix), unless the
    // name is another option's whole (`--file` of tar is no `--files-from`).
    let exact = a.rules.iter().any(|r| match r.at {
        At::Option(_, longs) => longs.iter().any(|l| bare(l) == name),
        _ => false,
    });
    let names = |l: &&&[u8]| {
        let l = bare(l);
        l == name || (!exact && name.len() >= 4 && l.starts_with(name))
    };
    for rule in a.rules {
        let At::Option(_, longs) = rule.at else {
            continue;
        };
        let Some(l) = longs.iter().find(names) else {
            continue;
        };
        match attached {
            Some(rest) if !rule.leading || starts_value(rest) => out.push(found(j, rule, false)),
            Some(_) => {}
            // `--journald` alone takes no value.
            None if l.ends_with(b"=") => {}
            // `--name{{ v }}` in a shell: the value is in this word.
            None if values[j].is_none() => out.push(found(j, rule, false)),
            None => {
                out.push(found(j + 1, rule, rule.leading));
                return 1;
            }
        }
    }
    0
}

/// A word of short options at `j` (`-sK`, `-K{{ v }}`, `-oUser=x`): notes the word holding
/// the value of a rule's letter, and returns how many words its value takes after it.
fn short(
    a: &Audited,
    values: &[Option<&[u8]>],
    texts: &[&[u8]],
    j: usize,
    out: &mut Vec<Found>,
) -> usize {
    let t = texts[j];
    for (k, c) in t.iter().enumerate().skip(1) {
        let rest = &t[k + 1..];
        let last = rest.is_empty() && values[j].is_some();
        let rule = a.rules.iter().find(|r| match r.at {
            At::Option(letters, _) => letters.contains(c),
            _ => false,
        });
        if let Some(rule) = rule {
            if last {
                out.push(found(j + 1, rule, rule.leading));
            } else if !rule.leading || starts_value(rest) {
                out.push(found(j, rule, false));
            }
        }
        if rule.is_some() || a.takes.contains(c) {
            return usize::from(last);
        }
    }
    0
}

#[cfg(test)]
mod tests;
