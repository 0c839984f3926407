//! Where a write by a relative name lands, for `filed::stored`: the directories the shell may
//! be in when a command runs (`reread::Cwd`), from the action's `workingDirectory` and every
//! `cd`/`pushd` before it (`cd /etc/logrotate.d && echo "$V" > x.txt` writes
//! `/etc/logrotate.d/x.txt`, fe30v F10). The model does not follow which branch runs, so a
//! `cd` anywhere before a command adds its directory to those the command may run in (`cd -`
//! and `popd` add none: they go back to one already counted); a `cd` to a directory an
//! expansion makes (but a variable assigned only plain text, or `$HOME`) makes the directory
//! unknown, and a relative name written after it lands no one knows where. Pure: it reads
//! names, never the file system (a link made before the action is the author's).

use crate::template::reread::Cwd;

/// Where a file written under one name may land.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Landing {
    /// The name it lands at, as the model resolves it (`None`: an expansion makes it).
    Name(Option<Vec<u8>>),
    /// A relative name written after a `cd` to a directory the model cannot resolve.
    Unknown,
}

/// The names a file written as `name` (`None`: an expansion makes it) may land at: an
/// absolute name (`/…`, `~…`) is itself; a relative one is joined with each directory the
/// shell may be in (the start directory, when no `workingDirectory` names it, is the
/// author's: the name as written).
pub fn landings(cwd: &Cwd, name: Option<&[u8]>) -> Vec<Landing> {
    let Some(name) = name else {
        return vec![Landing::Name(None)];
    };
    if name.starts_with(b"/dev/") {
        return vec![Landing::Name(Some(name.to_vec()))];
    }
    let mut out: Vec<Landing> = Vec::new();
    if absolute(name) {
        out.push(Landing::Name(Some(name.to_vec())));
        through_links(cwd, &mut out);
        return out;
    }
    let start = cwd
        .start
        .as_deref()
        .map_or_else(|| name.to_vec(), |s| file_in(s, name));
    out.push(Landing::Name(Some(start)));
    for d in &cwd.dirs {
        let l = Landing::Name(Some(file_in(d, name)));
        if !out.contains(&l) {
            out.push(l);
        }
    }
    through_links(cwd, &mut out);
    // The names the model resolved to a whole path first: the refusal names the first.
    out.sort_by_key(|l| !matches!(l, Landing::Name(Some(n)) if absolute(n)));
    if cwd.unknown {
        out.push(Landing::Unknown);
    }
    out
}

/// Adds to `out` where each name in it lands through a link `ln` made before: the link's
/// target, with the rest of the name below it (`/srv/notes/rot/x.txt` through `rot ->
/// /etc/logrotate.d` is `/etc/logrotate.d/x.txt`), links through links too.
fn through_links(cwd: &Cwd, out: &mut Vec<Landing>) {
    let mut i = 0;
    while i < out.len() && out.len() < 64 {
        if let Landing::Name(Some(n)) = &out[i] {
            let n = normal(n);
            for (link, target) in &cwd.links {
                let rest = if n == *link {
                    Some(&b""[..])
                } else {
                    n.strip_prefix(&link[..]).filter(|r| r.starts_with(b"/"))
                };
                let Some(rest) = rest else { continue };
                let made = Landing::Name(target.as_ref().map(|t| [&t[..], rest].concat()));
                if !out.contains(&made) {
                    out.push(made);
                }
            }
        }
        i += 1;
    }
}

/// Notes the links an `ln` (in `words`, from the command's name on, `None` where an
/// expansion makes a word) makes: its destination, and that joined with each target's name
/// (it may be a directory), each leading to the target (a symbolic link's relative target
/// from the link's directory, a hard link's from where the shell is).
pub fn note_links(cwd: &mut Cwd, words: &[Option<&[u8]>]) {
    let Some(c) = super::copy(words) else {
        return;
    };
    let program = super::programs::chain(words).last().and_then(|&k| words[k]);
    if program.map(super::base) != Some(&b"ln"[..]) {
        return;
    }
    let symbolic = words.iter().flatten().any(|w| {
        *w == b"--symbolic" || (w.len() > 1 && w[0] == b'-' && w[1] != b'-' && w.contains(&b's'))
    });
    let Some(dest) = c.dest else {
        return;
    };
    for target in &c.sources {
        let mut names = vec![dest.to_vec()];
        names.extend(target.map(|t| super::copies::joined(dest, t)));
        if c.target || dest.ends_with(b"/") {
            names.remove(0);
        }
        for name in names {
            for landing in landings(cwd, Some(&name)) {
                let Landing::Name(Some(link)) = landing else {
                    continue;
                };
                let link = normal(&link);
                let leads = target.map(|t| {
                    if absolute(t) || !symbolic {
                        landings(cwd, Some(t))
                            .into_iter()
                            .find_map(|l| match l {
                                Landing::Name(n) => n,
                                Landing::Unknown => None,
                            })
                            .map_or_else(|| t.to_vec(), |n| normal(&n))
                    } else {
                        let cut = link.iter().rposition(|&c| c == b'/');
                        let dir = cut.map_or(&b"."[..], |i| &link[..i]);
                        normal(&[dir, b"/", t].concat())
                    }
                });
                if !cwd.links.contains(&(link.clone(), leads.clone())) {
                    cwd.links.push((link, leads));
                }
            }
        }
    }
}

/// A wrapper that starts its program in another directory (`env -C DIR`, `env --chdir=DIR`,
/// `sudo -D DIR`, `sudo --chdir=DIR`; `words` from the command's name on): that directory joins
/// those the shell may be in (`change`), so that the program's relative names land there (and,
/// the model not following which command runs where, later ones' too).
pub fn wrapper_chdir(cwd: &mut Cwd, words: &[Option<&[u8]>]) {
    let Some(&k) = super::programs::chain(words).last() else {
        return;
    };
    let mut wrapper = false;
    for j in 0..k {
        let Some(w) = words[j] else { continue };
        if matches!(super::base(w), b"env" | b"sudo") {
            wrapper = true;
            continue;
        }
        if !wrapper {
            continue;
        }
        let dir: Option<Option<&[u8]>> = if w == b"-C" || w == b"-D" || w == b"--chdir" {
            Some(words.get(j + 1).copied().flatten())
        } else if let Some(d) = w.strip_prefix(b"--chdir=") {
            Some(Some(d))
        } else if w.len() > 2 && (w.starts_with(b"-C") || w.starts_with(b"-D")) {
            Some(Some(&w[2..]))
        } else {
            None
        };
        if let Some(dir) = dir {
            // An expansion (`EXPANDED`, or no text) makes the directory unknown.
            let dir = dir.filter(|d| !d.contains(&0));
            change(cwd, dir.map(|d| vec![d.to_vec()]));
        }
    }
}

/// Notes that a `cd` (or `pushd`) changes to one of `to` (`None`: a directory the model
/// cannot resolve): each is joined with every directory the shell may be in before.
pub fn change(cwd: &mut Cwd, to: Option<Vec<Vec<u8>>>) {
    let Some(to) = to else {
        cwd.unknown = true;
        return;
    };
    let mut from: Vec<Option<Vec<u8>>> = vec![cwd.start.clone()];
    from.extend(cwd.dirs.iter().cloned().map(Some));
    for d in to {
        for f in &from {
            let made = match f {
                _ if absolute(&d) => normal(&d),
                Some(f) => joined(f, &d),
                // Below the start directory, which is the author's: as written.
                None => normal(&d),
            };
            if !cwd.dirs.contains(&made) {
                cwd.dirs.push(made);
            }
        }
    }
}

/// Notes that the variable `name` is assigned `text` (`None`: anything but plain text), so
/// that `cd "$NAME"` is followed to each plain text it is assigned.
pub fn assign(cwd: &mut Cwd, name: &[u8], text: Option<&[u8]>) {
    let name = String::from_utf8_lossy(name).into_owned();
    let entry = cwd.vars.entry(name).or_insert_with(|| Some(Vec::new()));
    match (entry.as_mut(), text) {
        (Some(texts), Some(t)) => texts.push(t.to_vec()),
        _ => *entry = None,
    }
}

/// The directories `cd "$NAME"` may change to: each plain text `NAME` was assigned, or the
/// home directory for `HOME`; `None` when another assignment (or none) may give it any.
pub fn variable(cwd: &Cwd, name: &str) -> Option<Vec<Vec<u8>>> {
    if name == "HOME" && !cwd.vars.contains_key(name) {
        return Some(vec![b"~".to_vec()]);
    }
    cwd.vars
        .get(name)
        .cloned()
        .flatten()
        .filter(|t| !t.is_empty())
}

fn absolute(name: &[u8]) -> bool {
    name.starts_with(b"/") || name.starts_with(b"~")
}

/// The file `name` (relative) in the directory `dir`: the directory made normal, the name
/// as written (the kernel resolves a `..` in it through links; `data_file` refuses one).
fn file_in(dir: &[u8], name: &[u8]) -> Vec<u8> {
    let mut out = normal(dir);
    if !out.ends_with(b"/") {
        out.push(b'/');
    }
    out.extend_from_slice(name);
    out
}

/// `dir` and `name` joined and made normal (`normal`), as `cd` does.
fn joined(dir: &[u8], name: &[u8]) -> Vec<u8> {
    if absolute(name) {
        return normal(name);
    }
    normal(&[dir, b"/", name].concat())
}

/// `name` with `.`, empty segments and each `..` after a segment it undoes dropped, as `cd`
/// does (`/srv/../etc/x` is `/etc/x`; a `..` at `/` stays `/`; a leading `..` of a relative
/// name stays, and `data_file` refuses it). A trailing `/` stays.
pub fn normal(name: &[u8]) -> Vec<u8> {
    let root = name.starts_with(b"/");
    let mut kept: Vec<&[u8]> = Vec::new();
    for s in name.split(|&c| c == b'/') {
        match s {
            b"" | b"." => {}
            b".." if kept.last().is_some_and(|l| *l != b"..") => {
                // `~` is a directory of its own: `~/..` is not known.
                if kept.len() == 1 && kept[0].starts_with(b"~") {
                    kept.push(s);
                } else {
                    kept.pop();
                }
            }
            b".." if root => {}
            _ => kept.push(s),
        }
    }
    let mut out = if root { b"/".to_vec() } else { Vec::new() };
    out.extend_from_slice(&kept.join(&b'/'));
    if name.ends_with(b"/") && !out.ends_with(b"/") && !out.is_empty() {
        out.push(b'/');
    }
    if out.is_empty() {
        out.push(b'.');
    }
    out
}

/// Why a value written under the relative name `name` after a `cd` the model cannot resolve
/// is refused, with the fix.
pub fn unknown_place(name: Option<&[u8]>, line: usize) -> String {
    format!(
        "the file `{}`, which line {line} writes a value into by a relative name after a `cd` to \
         a directory an expansion makes (`cd \"$DIR\"`): it lands wherever that is \
         (`/etc/logrotate.d`, `~/.bashrc.d`); name the file by its whole path",
        String::from_utf8_lossy(name.unwrap_or_default()),
    )
}

#[cfg(test)]
mod tests;
