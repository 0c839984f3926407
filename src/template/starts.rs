//! Which placeholders' values may start an argument through a copy: `dir={{ x }}; du -sh
//! "$dir"` hands `du` the value as a word of its own as surely as `du -sh {{ x }}` does, so a
//! value starting with `-` is an option there. The lexer marks a placeholder that starts its
//! own word (`Lead::Starts`); this module follows the variables whose expansion starts an
//! argument (`Analysis::starts`) back through their assignments (`Analysis::sources`) to the
//! placeholders copied into them, and marks those as starting too, so that the rule for a
//! value that starts a word (an entity field that starts with `-` disables the instance)
//! holds for its copies. Pure: it reads what the model noted, never values.

use std::collections::BTreeSet;

use super::reread::{Analysis, POSITIONAL, Read, is_positional};
use super::{Lead, Part, Placeholder, Template};

/// The placeholders whose value a variable that starts an argument may hold, and whether
/// one may hold a value in a way the model does not follow (`read x`, `$( )`), which may be
/// any placeholder's.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Copied {
    pub placeholders: Vec<Placeholder>,
    pub unknown: bool,
}

/// What the variables of `analysis.starts` may hold, followed through every assignment.
pub fn copied(analysis: &Analysis) -> Copied {
    let mut out = Copied::default();
    let mut seen = BTreeSet::new();
    for variable in &analysis.starts {
        follow(analysis, variable, &mut seen, &mut out);
    }
    out
}

fn follow(analysis: &Analysis, variable: &str, seen: &mut BTreeSet<String>, out: &mut Copied) {
    let key = if is_positional(variable) {
        POSITIONAL
    } else {
        variable
    };
    if !seen.insert(key.to_string()) {
        return;
    }
    for read in analysis.sources.get(key).into_iter().flatten() {
        match read {
            Read::Hole(p) if !out.placeholders.contains(p) => out.placeholders.push(p.clone()),
            Read::Hole(_) => {}
            Read::Variable(v) => follow(analysis, v, seen, out),
            Read::Unknown(_) | Read::Stored(_) => out.unknown = true,
            Read::Computed(_) => {}
        }
    }
}

impl Template {
    /// Marks every placeholder `copied` names as starting its word (and, when a copy may
    /// hold anything, every entity field's: an argument's value is checked whole by its
    /// type wherever it stands).
    pub fn lead_copies(&mut self, copied: &Copied) {
        for part in &mut self.parts {
            if let Part::Hole(p, _, lead) = part {
                let entity = matches!(p, Placeholder::Entity(_));
                if copied.placeholders.contains(p) || (copied.unknown && entity) {
                    *lead = Lead::Starts;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::read_shell;

    /// Each row: a command, and whether `{{ .CurrentEntity.path }}` may start an argument
    /// (directly, as the lexer marks it, or through a copy).
    #[test]
    fn a_copy_that_starts_an_argument_makes_its_value_start_one() {
        let table: &[(&str, bool)] = &[
            ("du -sh {{ .CurrentEntity.path }}", true),
            ("du -sh /srv/{{ .CurrentEntity.path }}", false),
            ("dir={{ .CurrentEntity.path }}; du -sh \"$dir\"", true),
            ("dir=\"{{ .CurrentEntity.path }}\"; du -sh \"$dir\"", true),
            (
                "dir={{ .CurrentEntity.path }}; x=$dir; du -sh \"${x}\"",
                true,
            ),
            ("dir={{ .CurrentEntity.path }}; du -sh \"$dir\"/x", true),
            (
                "dir={{ .CurrentEntity.path }}; set -- \"$dir\"; du \"$1\"",
                true,
            ),
            ("dir={{ .CurrentEntity.path }}; du -sh -- \"$dir\"", false),
            ("dir={{ .CurrentEntity.path }}; du -sh ./\"$dir\"", false),
            // The model does not note where in the assigned text a value stands: a copy
            // counts as starting with it (an instance whose field starts with `-` is
            // disabled where `/srv/-x` would be no option).
            ("dir=/srv/{{ .CurrentEntity.path }}; du -sh \"$dir\"", true),
            ("dir={{ .CurrentEntity.path }}; du -sh \"/srv/$dir\"", false),
            (
                "printf '%s\\n' {{ .CurrentEntity.path }} | { read -r d; du \"$d\"; }",
                true,
            ),
            (
                "read -r d; du \"$d\"; echo /{{ .CurrentEntity.path }}",
                true,
            ),
        ];
        let path = Placeholder::Entity("path".into());
        let mut wrong = Vec::new();
        for &(text, starts) in table {
            let (mut template, analysis) = read_shell(text).expect(text);
            template.lead_copies(&copied(&analysis));
            let got = template.leading().any(|p| *p == path);
            if got != starts {
                wrong.push(format!("{text:?}: {got}"));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
