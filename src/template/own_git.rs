//! The words of a `git` command that git runs as commands or keeps as settings (`own`'s
//! part for git): the options of its subcommands that hold a command (`rebase -x`,
//! `--upload-pack`, `--receive-pack`, `clone -u`, `submodule foreach`, `bisect run`,
//! `filter-branch --*-filter`, `difftool -x`, `grep -O`), and every setting it is given
//! (`git config KEY VALUE`, `git config set`, `-c KEY=VALUE`, `--config-env=KEY=VAR`) unless
//! its key is known to be data: git runs many keys as commands, reads files others name
//! (`include.path`), and a list of the dangerous ones is always one short, so the rule names
//! the harmless ones. It holds `Found`, what `own` returns, so `own` alone uses it. Pure and
//! syntactic: it reads words, never values.

use super::reread::Rereading;

/// One word a program reads as its own commands, how, and (for `git --config-env`) the
/// environment variable whose value becomes a setting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub at: usize,
    pub place: &'static str,
    pub how: Rereading,
    pub env: Option<Vec<u8>>,
    /// Only when a value starts the word (`ssh -o {{ v }}`, not `ssh -o User={{ v }}`):
    /// the caller, who knows where the values stand in it, decides.
    pub leading: bool,
}

pub const GIT: &str = "a command git runs (`rebase -x`, `--upload-pack`, `submodule foreach`, \
                       `bisect run`, `filter-branch --*-filter`, `difftool -x`, `grep -O`)";
pub const GIT_CONFIG: &str = "a git setting (`git config KEY VALUE`, `-c KEY=VALUE`, \
                              `--config-env=KEY=VAR`) whose key is not known to be data: git \
                              runs many settings as commands (`core.fsmonitor`, \
                              `core.sshCommand`, `alias.*`) or reads files they name \
                              (`include.path`); name a key known as data (`user.name`, \
                              `user.email`) or keep the value out of git's settings";

/// The place of the url `git clone`, `pull`, `fetch`, `submodule add` fetches a tree from,
/// or `git remote add`/`set-url` keeps for them (`filed::named::CLONED` names it too).
pub const FETCHED: &str = "the url (or remote) `git clone`, `git pull`, `git fetch` or `git \
                           submodule add` fetches a whole tree from (`git remote add NAME URL` \
                           and `set-url` keep one for them), or the host or url of a tree \
                           `rsync` copies from or `wget -r`/`-m` mirrors, which a value picks: \
                           the repository or the host names every file written and holds what \
                           they hold (a `deploy.sh`, a `Makefile`, a hook a later command runs; \
                           `git pull` and `git reset --hard FETCH_HEAD` check it out)";

/// Keys (lower case) whose value git only stores or prints: names, addresses, colours,
/// advice, formats, defaults of branches.
const DATA_KEYS: &[&[u8]] = &[
    b"user.name",
    b"user.email",
    b"author.name",
    b"author.email",
    b"committer.name",
    b"committer.email",
    b"init.defaultbranch",
    b"core.autocrlf",
    b"core.quotepath",
    b"core.abbrev",
    b"pull.rebase",
    b"pull.ff",
    b"push.default",
    b"log.date",
    b"color.ui",
];

/// Prefixes of keys whose value is data (`color.diff.meta`, `advice.detachedHead`).
const DATA_PREFIXES: &[&[u8]] = &[b"color.", b"advice.", b"branch.", b"i18n."];

fn is_data_key(key: &[u8]) -> bool {
    let key = key.to_ascii_lowercase();
    // `branch.NAME.merge` is data; `branch.NAME.*` never names a command. But its remote
    // (`remote`, `pushRemote`) may be a URL: `git pull` then fetches the code it checks out
    // from wherever the value says.
    if key.starts_with(b"branch.") && (key.ends_with(b".remote") || key.ends_with(b".pushremote")) {
        return false;
    }
    DATA_KEYS.contains(&key.as_slice()) || DATA_PREFIXES.iter().any(|p| key.starts_with(p))
}

fn code(at: usize, place: &'static str) -> Found {
    Found {
        at,
        place,
        how: Rereading::Code,
        env: None,
        leading: false,
    }
}

/// `KEY=VALUE` of `-c`: refused when a value is in it and the key is not data.
fn setting(values: &[Option<&[u8]>], texts: &[&[u8]], j: usize, out: &mut Vec<Found>) {
    let Some(&text) = texts.get(j) else { return };
    let key = text.split(|&c| c == b'=').next().unwrap_or(text);
    let value_in_key = values[j].is_none() && !text.contains(&b'=');
    if values[j].is_none() && (value_in_key || !is_data_key(key)) {
        out.push(code(j, GIT_CONFIG));
    }
}

/// `--config-env=KEY=VAR`: the variable's value becomes the setting.
fn config_env(values: &[Option<&[u8]>], texts: &[&[u8]], j: usize, out: &mut Vec<Found>) {
    let Some(&text) = texts.get(j) else { return };
    let mut parts = text.splitn(2, |&c| c == b'=');
    let key = parts.next().unwrap_or_default();
    let var = parts.next();
    if values[j].is_none() || !is_data_key(key) {
        out.push(Found {
            env: var.map(<[u8]>::to_vec),
            ..code(j, GIT_CONFIG)
        });
    }
}

/// The words of `git` (the program at `i`) that it runs or keeps as settings.
pub fn words(values: &[Option<&[u8]>], texts: &[&[u8]], i: usize) -> Vec<Found> {
    let mut out = Vec::new();
    let mut j = i + 1;
    // Git's own options, before the subcommand.
    while let Some(&w) = values.get(j) {
        match w {
            Some(b"-c") => {
                if j + 1 < values.len() {
                    setting(values, texts, j + 1, &mut out);
                }
                j += 2;
            }
            Some(b"--config-env") => {
                if j + 1 < values.len() {
                    config_env(values, texts, j + 1, &mut out);
                }
                j += 2;
            }
            Some(w) if w.starts_with(b"--config-env=") => {
                let rest: Vec<&[u8]> = texts.iter().map(|t| t.get(13..).unwrap_or(t)).collect();
                config_env(values, &rest, j, &mut out);
                j += 1;
            }
            None if texts
                .get(j)
                .is_some_and(|t| t.starts_with(b"--config-env=")) =>
            {
                out.push(code(j, GIT_CONFIG));
                j += 1;
            }
            Some(b"-C" | b"--git-dir" | b"--work-tree" | b"--namespace" | b"--super-prefix") => {
                j += 2;
            }
            Some(w) if w.starts_with(b"-") => j += 1,
            _ => break,
        }
    }
    let Some(&Some(sub)) = values.get(j) else {
        return out;
    };
    let rest = j + 1..values.len();
    let word = |k: usize| values.get(k).copied().flatten();
    // `--NAME WORD`, `--NAME=WORD`, `-X WORD`, `-XWORD`: the index of WORD's word.
    let takes = |long: &[&[u8]], short: &[u8]| -> Vec<usize> {
        let mut found = Vec::new();
        for k in rest.clone() {
            let text = texts[k];
            if let Some(name) = text.strip_prefix(b"--") {
                let key = name.split(|&c| c == b'=').next().unwrap_or(name);
                if long.contains(&key) {
                    found.push(if name.len() > key.len() { k } else { k + 1 });
                }
            } else if text.len() >= 2 && text[0] == b'-' && short.contains(&text[1]) {
                found.push(if text.len() > 2 { k } else { k + 1 });
            }
        }
        found.retain(|&k| k < values.len());
        found
    };
    let commands: Vec<usize> = match sub {
        b"rebase" => takes(&[b"exec"], b"x"),
        b"clone" | b"ls-remote" => takes(&[b"upload-pack", b"receive-pack", b"exec"], b"u"),
        b"fetch" | b"pull" | b"push" | b"fetch-pack" | b"send-pack" | b"archive" => {
            takes(&[b"upload-pack", b"receive-pack", b"exec"], b"")
        }
        b"difftool" => takes(&[b"extcmd"], b"x"),
        b"grep" => takes(&[b"open-files-in-pager"], b"O"),
        b"filter-branch" => takes(
            &[
                b"env-filter",
                b"tree-filter",
                b"index-filter",
                b"parent-filter",
                b"msg-filter",
                b"commit-filter",
                b"tag-name-filter",
                b"setup",
            ],
            b"",
        ),
        // Every word after `foreach` and `run` is the command (run through a shell).
        b"submodule" | b"bisect" => {
            let verb: &[u8] = if sub == b"submodule" {
                b"foreach"
            } else {
                b"run"
            };
            match rest.clone().find(|&k| word(k) == Some(verb)) {
                Some(k) => (k + 1..values.len()).collect(),
                None => Vec::new(),
            }
        }
        b"config" => {
            config(values, j + 1, &mut out);
            Vec::new()
        }
        // `git remote add NAME URL`, `set-url NAME URL`: the setting `remote.NAME.url`, where
        // `git pull` fetches the code it checks out from; every word after the verb.
        b"remote" => match rest
            .clone()
            .find(|&k| word(k).is_some_and(|w| !w.starts_with(b"-")))
        {
            // The remote's name is a setting's; its url picks the tree a later `git pull`
            // fetches (`add NAME URL`, `set-url NAME NEWURL [OLDURL]`): fe30v F7's rule.
            Some(k) if matches!(word(k), Some(b"add" | b"set-url")) => {
                let operands: Vec<usize> = (k + 1..values.len())
                    .filter(|&m| word(m).is_none_or(|w| !w.starts_with(b"-")))
                    .filter(|&m| !matches!(word(m - 1), Some(b"-t" | b"-m")))
                    .collect();
                for (n, &m) in operands.iter().enumerate() {
                    out.push(if n == 0 {
                        code(m, GIT_CONFIG)
                    } else {
                        Found {
                            how: Rereading::Unpacked,
                            ..code(m, FETCHED)
                        }
                    });
                }
                // A value in an option's word (`-t {{ v }}`, `--mirror={{ v }}`).
                out.extend(
                    (k + 1..values.len())
                        .filter(|m| !operands.contains(m))
                        .map(|m| code(m, GIT_CONFIG)),
                );
                Vec::new()
            }
            // A verb from a value may be any.
            Some(k) if word(k).is_none() => {
                out.extend((k..values.len()).map(|m| code(m, GIT_CONFIG)));
                Vec::new()
            }
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    out.extend(commands.into_iter().map(|k| code(k, GIT)));
    out
}

/// `git config [set] [OPTIONS] KEY VALUE`: the value is a setting unless the key is data; a
/// key from a value may be any. Reading, listing and removing (`--get`, `-l`, `--unset`,
/// `get`, `unset`) store nothing.
fn config(values: &[Option<&[u8]>], from: usize, out: &mut Vec<Found>) {
    const READS: &[&[u8]] = &[
        b"get",
        b"list",
        b"unset",
        b"rename-section",
        b"remove-section",
        b"edit",
        b"--get",
        b"--get-all",
        b"--get-regexp",
        b"--get-urlmatch",
        b"--get-color",
        b"--get-colorbool",
        b"-l",
        b"--list",
        b"--unset",
        b"--unset-all",
        b"--rename-section",
        b"--remove-section",
        b"-e",
        b"--edit",
    ];
    const TAKES: &[&[u8]] = &[
        b"-f",
        b"--file",
        b"--blob",
        b"--type",
        b"--comment",
        b"--value",
    ];
    let mut operands = Vec::new();
    let mut k = from;
    while k < values.len() {
        match values[k] {
            Some(w) if READS.contains(&w) => return,
            Some(w) if TAKES.contains(&w) => k += 1,
            Some(b"set") if operands.is_empty() => {}
            Some(w) if w.starts_with(b"-") && w.len() > 1 => {}
            _ => operands.push(k),
        }
        k += 1;
    }
    let Some(&key) = operands.first() else { return };
    let stored = &operands[1..];
    match values[key] {
        None => out.extend(operands.iter().map(|&k| code(k, GIT_CONFIG))),
        Some(name) if !is_data_key(name) => {
            out.extend(stored.iter().map(|&k| code(k, GIT_CONFIG)));
        }
        Some(_) => {}
    }
}
