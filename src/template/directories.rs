//! Where a value picks the directory that the code which runs is taken from: the directory
//! `cd` and `pushd` change to (the commands after them run `./deploy.sh`, `make`, a git hook
//! from there), and the directory options of programs that run what they find in it (`make
//! -C DIR`, `git -C DIR`, `--directory`, `--chdir`, `--work-tree`, `--git-dir`). A value
//! there that holds `..` leads out of the directory the author meant (`/srv/apps/../../tmp/x`
//! runs `/tmp/x/deploy.sh`), as surely as in the program's own path, which is refused. This
//! module finds those words (`words`, from the words alone) and follows what reaches them
//! through copies (`reached`); `config::command` refuses an argument whose type may hold
//! `/` and `..` there, and marks an entity field so that `engine::setup` disables an
//! instance whose field holds a `..` component. Pure: it reads no values.

use super::reread::{Analysis, POSITIONAL, Read, is_positional};
use super::{Placeholder, Template, Values};

/// The place of a directory a command changes to.
pub const CHANGES_TO: &str = "the directory `cd` changes to, from which the commands after it \
                              run programs (`./deploy.sh`, `make`)";

/// The place of a directory option.
pub const DIRECTORY_OPTION: &str = "the directory a program works in and runs what it finds \
                                    there (`make -C`, `git -C`, `--directory`)";

/// Long options that name the directory a program works in.
const LONG: &[&[u8]] = &[b"--directory", b"--chdir", b"--work-tree", b"--git-dir"];

/// The words of a command (from its name on, as far as they are text; `expanded` where a
/// value or an expansion stands in one) that name a directory code is taken from, with what
/// they are: the operand of `cd` and `pushd`, and the word of `-C` (or glued: `-C/srv`,
/// `-C{{ dir }}`) and of the options of `LONG` (or `--directory=…`).
pub fn words(texts: &[&[u8]], expanded: &[bool]) -> Vec<(usize, &'static str)> {
    let mut out = Vec::new();
    let Some(&name) = texts.first() else {
        return out;
    };
    if matches!(name, b"cd" | b"pushd") {
        let mut operands = texts[1..]
            .iter()
            .enumerate()
            .skip_while(|(_, w)| w.len() > 1 && w[0] == b'-' && **w != b"--");
        let first = match operands.next() {
            Some((_, w)) if *w == b"--" => operands.next(),
            other => other,
        };
        out.extend(first.map(|(i, _)| (i + 1, CHANGES_TO)));
        return out;
    }
    for (k, w) in texts.iter().enumerate().skip(1) {
        if *w == b"--" {
            break;
        }
        let next = (k + 1 < texts.len()).then_some((k + 1, DIRECTORY_OPTION));
        let glued = expanded.get(k).copied().unwrap_or(false)
            || w.get(2).is_some_and(|&c| c == b'/' || c == b'.');
        if (*w == b"-C" && !glued) || LONG.contains(w) {
            out.extend(next);
        } else if (w.starts_with(b"-C") && glued)
            || LONG
                .iter()
                .any(|o| w.starts_with(o) && w.get(o.len()) == Some(&b'='))
        {
            out.push((k, DIRECTORY_OPTION));
        }
    }
    out
}

/// What reaches a directory word: the placeholders, and the arguments whose variables it
/// reads (`cd "/srv/$ACTIOND_ARG_APP"`), followed through copies (`d=/srv/{{ x }}; cd
/// "$d"`), each with the place and line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reached {
    pub place: &'static str,
    pub line: usize,
    pub placeholders: Vec<Placeholder>,
    /// A value or an expansion starts the directory's path (`cd {{ dir }}`).
    pub starts: bool,
}

/// Everything that reaches each directory word the model noted.
pub fn reached(analysis: &Analysis, values: &Values) -> Vec<Reached> {
    analysis
        .directories
        .iter()
        .map(|d| {
            let mut found = Reached {
                place: d.place,
                line: d.line,
                placeholders: Vec::new(),
                starts: d.starts,
            };
            let mut seen = Vec::new();
            follow(analysis, values, &d.reads, &mut seen, &mut found);
            found
        })
        .filter(|r| !r.placeholders.is_empty())
        .collect()
}

fn follow(
    analysis: &Analysis,
    values: &Values,
    reads: &[Read],
    seen: &mut Vec<String>,
    found: &mut Reached,
) {
    for read in reads {
        let p = match read {
            Read::Hole(p) => p.clone(),
            Read::Variable(v) => {
                if let Some((argument, _)) = values.variables.get(v) {
                    Placeholder::Argument(argument.clone())
                } else {
                    let key = if is_positional(v) { POSITIONAL } else { v };
                    if !seen.iter().any(|s| s == key) {
                        seen.push(key.to_string());
                        let more = analysis.sources.get(key).cloned().unwrap_or_default();
                        follow(analysis, values, &more, seen, found);
                    }
                    continue;
                }
            }
            // What the model cannot follow (`read`, `$( )`) is not weighed here.
            Read::Unknown(_) | Read::Computed(_) | Read::Stored(_) => continue,
        };
        if !found.placeholders.contains(&p) {
            found.placeholders.push(p);
        }
    }
}

/// Whether a path holds a `..` component (`..`, `../x`, `a/../b`, `x/..`).
pub fn climbs(value: &str) -> bool {
    value.split('/').any(|part| part == "..")
}

/// Whether a value leads out of the directory meant: a `..` component, or, where it starts
/// the path (`starts`), an absolute path (`/tmp/x`).
pub fn leads_out(value: &str, starts: bool) -> bool {
    climbs(value) || (starts && value.starts_with('/'))
}

impl Template {
    /// Notes an entity field that reaches a directory code is taken from (`reached`), and
    /// whether it may start that directory's path.
    pub fn mark_directory(&mut self, p: &Placeholder, starts: bool) {
        match self.directories.iter_mut().find(|(q, _)| q == p) {
            Some((_, s)) => *s |= starts,
            None => self.directories.push((p.clone(), starts)),
        }
    }

    /// The placeholders `mark_directory` noted.
    pub fn directories(&self) -> &[(Placeholder, bool)] {
        &self.directories
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::{read_exec, read_shell};

    #[test]
    fn the_directory_code_is_taken_from_is_found() {
        let table: &[(&[&str], &[usize])] = &[
            (&["cd", "/srv/x"], &[1]),
            (&["cd", "-P", "--", "/srv/x"], &[3]),
            (&["pushd", "x"], &[1]),
            (&["cd"], &[]),
            (&["make", "-C", "/srv/x", "status"], &[2]),
            (&["make", "-C/srv/x"], &[1]),
            (&["make", "-C$", "status"], &[1]),
            (&["git", "-C", "/srv/x", "pull"], &[2]),
            (&["tar", "--directory=/srv/x", "-xf", "a"], &[1]),
            (&["start-stop-daemon", "--chdir", "/srv/x"], &[2]),
            (
                &["git", "--work-tree", "w", "--git-dir=g", "status"],
                &[2, 3],
            ),
            (&["ls", "-Cl", "x"], &[]),
            (&["rm", "--", "-C", "x"], &[]),
            (&["echo", "cd", "x"], &[]),
        ];
        let mut wrong = Vec::new();
        for (w, want) in table {
            let texts: Vec<&[u8]> = w.iter().map(|w| w.as_bytes()).collect();
            let expanded: Vec<bool> = w.iter().map(|w| w.contains('$')).collect();
            let got: Vec<usize> = words(&texts, &expanded)
                .into_iter()
                .map(|(i, _)| i)
                .collect();
            if got != *want {
                wrong.push(format!("{w:?}: {got:?}"));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
        assert!(climbs("..") && climbs("../../x") && climbs("a/../b") && climbs("x/.."));
        assert!(!climbs("a..b") && !climbs("...") && !climbs(".x") && !climbs("web"));
        assert!(leads_out("/tmp/x", true) && !leads_out("/tmp/x", false));
        assert!(leads_out("../x", false) && !leads_out("web/x", true));
    }

    /// Each row: a command, and the placeholders that reach a directory code is taken from
    /// (`{{ a }}` an argument, `$A` its variable).
    #[test]
    fn what_reaches_a_directory_is_followed_through_copies() {
        let mut values = Values::default();
        values
            .variables
            .insert("ACTIOND_ARG_A".into(), ("a".into(), false));
        let e = || Placeholder::Entity("name".into());
        let a = || Placeholder::Argument("a".into());
        let table: Vec<(&str, Vec<Placeholder>)> = vec![
            (
                "cd /srv/apps/{{ .CurrentEntity.name }} && ./deploy.sh",
                vec![e()],
            ),
            ("cd \"/srv/$ACTIOND_ARG_A\"; make", vec![a()]),
            ("d=/srv/{{ a }}; cd \"$d\" || exit; ./x", vec![a()]),
            ("make -C /srv/{{ .CurrentEntity.name }} status", vec![e()]),
            ("git -C \"/srv/{{ a }}\" pull", vec![a()]),
            ("sh -c 'cd \"$1\" && ./x' sh /srv/{{ a }}", vec![a()]),
            ("cd /srv/apps && ./deploy.sh {{ a }}", vec![]),
            ("echo cd {{ a }}", vec![]),
        ];
        let mut wrong = Vec::new();
        for (text, want) in table {
            let (_, analysis) = read_shell(text).expect(text);
            let got: Vec<Placeholder> = reached(&analysis, &values)
                .into_iter()
                .flat_map(|r| r.placeholders)
                .collect();
            if got != want {
                wrong.push(format!("{text:?}: {got:?}"));
            }
        }
        let argv: Vec<String> = ["make", "-C", "/srv/{{ a }}", "status"]
            .iter()
            .map(|s| (*s).to_string())
            .collect();
        let got: Vec<Placeholder> = reached(&read_exec(&argv), &values)
            .into_iter()
            .flat_map(|r| r.placeholders)
            .collect();
        if got != vec![a()] {
            wrong.push(format!("exec {argv:?}: {got:?}"));
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
