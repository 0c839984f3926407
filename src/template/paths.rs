//! Where a value is a component of a path, and the one rule for such a value, whatever the
//! program that gets the path: `cd /srv/apps/{{ app }}/{{ part }} && ./deploy.sh`,
//! `exec: [python3, "/srv/{{ app }}/run.py"]`, `make -f /srv/{{ app }}/Makefile`, `git -c
//! include.path=/srv/{{ p }}/gitconfig`. A list of programs and options that take code from a
//! path is never complete (`awk -f`, `npm --prefix`, `unshare --wd=`, `run-parts`, a symlink
//! made to it), so the check does not depend on the program: a value that touches a `/` the
//! author wrote (or that holds `/` itself and starts a word) may not be `.` or hold a `..`
//! component (`..`, `../x`, `x/..`, `a/../b`), which would lead out of the directory the
//! author meant; nor, where it starts the word and the author's `/` follows it
//! (`{{ dir }}/deploy.sh`), an absolute path. The values are checked when a press starts
//! (`engine::start`, for arguments) and when an entity instance is bound (`engine::setup`,
//! for fields). Pure: it reads the compiled parts and the values it is given.

use super::{Lead, Part, Placeholder, Template};

/// How a placeholder stands in a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Component {
    /// A `/` the author wrote touches it (`/srv/{{ x }}`, `{{ x }}/run.py`): any value
    /// there is a path component.
    pub joined: bool,
    /// It may start the word and the author's `/` follows it (`{{ dir }}/deploy.sh`): an
    /// absolute value picks the whole path.
    pub starts: bool,
}

/// Why a value may not stand in a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leads {
    /// `.` or a `..` component: it leads up, out of the directory meant.
    Up,
    /// An absolute path where it starts the path.
    Absolute,
}

impl Template {
    /// Every placeholder with how it stands in a path (see [`Component`]), in order; a
    /// placeholder that stands in no path of the author's is listed with both false (a
    /// value holding `/` there is still a path, weighed by [`leads`]).
    pub fn components(&self) -> Vec<(&Placeholder, Component, bool)> {
        let parts = &self.parts;
        let mut out = Vec::new();
        for (i, part) in parts.iter().enumerate() {
            let Part::Hole(p, _, lead) = part else {
                continue;
            };
            // The author's text nearest on each side, over other placeholders
            // (`{{ a }}/{{ b }}`: both touch the `/`).
            let before = parts[..i].iter().rev().find_map(text);
            let after = parts[i + 1..].iter().find_map(text);
            let slash_before = before.is_some_and(|t| t.ends_with('/'));
            let slash_after = after.is_some_and(|t| t.starts_with('/'));
            let component = Component {
                joined: slash_before || slash_after,
                starts: *lead == Lead::Starts && slash_after,
            };
            out.push((p, component, *lead == Lead::Starts));
        }
        out
    }
}

fn text(part: &Part) -> Option<&str> {
    match part {
        Part::Text(t) => Some(t),
        Part::Hole(..) => None,
    }
}

/// Whether `value` leads out of the path it stands in: `component` is how it stands
/// ([`Template::components`]), `word_start` whether it may start its word. A value that is
/// `.` or holds a `..` component where the author's `/` touches it, or where it holds `/`
/// itself and starts a word (`{{ path }}`, a whole path from the caller); an absolute value
/// where it starts a path the author continues (`{{ dir }}/deploy.sh`). An empty value is
/// the type's business (`rejectNull`).
pub fn leads(value: &str, component: Component, word_start: bool) -> Option<Leads> {
    let up = value == "." || value.split('/').any(|c| c == "..");
    let path = component.joined || (word_start && value.contains('/'));
    if path && up {
        return Some(Leads::Up);
    }
    if component.starts && value.starts_with('/') {
        return Some(Leads::Absolute);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::Template;

    /// Each row: a command, a value for every placeholder in it, and whether it is refused.
    #[test]
    fn a_value_in_a_path_may_not_lead_out_of_it() {
        let table: &[(&str, &str, Option<Leads>)] = &[
            (
                "cd /srv/apps/{{ a }}/{{ b }} && ./deploy.sh",
                "..",
                Some(Leads::Up),
            ),
            ("cd /srv/apps/{{ a }} && ./deploy.sh", ".", Some(Leads::Up)),
            ("cd /srv/apps/{{ a }} && ./deploy.sh", "web", None),
            ("cd /srv/apps/{{ a }} && ./x", "a..b", None),
            ("cd /srv/apps/{{ a }} && ./x", "...", None),
            ("cd /srv/apps/{{ a }} && ./x", ".hidden", None),
            (
                "python3 \"/srv/{{ a }}/run.py\"",
                "../../tmp/x",
                Some(Leads::Up),
            ),
            ("python3 \"/srv/{{ a }}/run.py\"", "x/..", Some(Leads::Up)),
            ("python3 \"/srv/{{ a }}/run.py\"", "a/../b", Some(Leads::Up)),
            ("python3 \"/srv/{{ a }}/run.py\"", "a/b", None),
            ("make -f /srv/{{ a }}/Makefile", "..", Some(Leads::Up)),
            (
                "git -c include.path=/srv/{{ a }}/gitconfig st",
                "..",
                Some(Leads::Up),
            ),
            ("{{ a }}/deploy.sh", "/tmp/x", Some(Leads::Absolute)),
            ("{{ a }}/deploy.sh", "web", None),
            ("cat /srv/{{ a }}", "/etc/passwd", None),
            // A whole word: a path only when the value makes it one.
            ("ls {{ a }}", "..", None),
            ("ls {{ a }}", "../x", Some(Leads::Up)),
            ("ls {{ a }}", "/tmp/x", None),
            ("echo {{ a }}", "main..dev", None),
            // Not touching a `/`, and inside a word: text.
            ("echo --name={{ a }}", "..", None),
            ("echo x{{ a }}", "../y", None),
        ];
        let mut wrong = Vec::new();
        for (text, value, want) in table {
            let t = Template::shell(text).expect(text);
            let got = t
                .components()
                .into_iter()
                .find_map(|(_, c, start)| leads(value, c, start));
            if got != *want {
                wrong.push(format!("{text:?} with {value:?}: {got:?}"));
            }
        }
        let t = Template::literal("/srv/{{ a }}/run.py").unwrap();
        let (_, c, start) = t.components()[0];
        assert_eq!(leads("..", c, start), Some(Leads::Up));
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
