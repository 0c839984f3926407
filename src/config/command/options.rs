//! A `regex:` argument whose pattern may let a value start with `-`, standing where a program
//! reads options (fe30v F14: `find {{ v }} -delete` with `[A-Za-z0-9._-]{1,255}` ran `find
//! -delete`). The free-text types refuse a leading `-` at every press (`arguments::leading_dash`);
//! a pattern says what may start a value, so it is weighed here, once, at load: refused where
//! a placeholder (or the variable holding the value) starts an argument before any `--`,
//! unless the pattern provably starts with no `-` (`arguments`' `Pattern::may_start_with_dash`),
//! the argument allows it (`allowLeadingDash: true`) or its values are the author's choices.
//! It reads what the shell model noted (`Analysis::option_holes`, `Analysis::leading`) and
//! never a value; it must not judge anything else about the command.

use std::collections::BTreeSet;

use super::super::checker::Checker;
use crate::arguments::{ArgType, Argument, Dash};
use crate::template::reread::Analysis;
use crate::template::reread::Read;
use crate::template::{Placeholder, Values};

/// Whether argument `a`'s values may start with `-` where nothing else keeps them out.
fn may_lead(a: &Argument) -> bool {
    matches!(&a.rule, ArgType::Regex(p) if p.may_start_with_dash())
        && a.dash == Dash::Refuse
        && a.choices.is_empty()
}

/// Refuses each `regex:` argument whose value may start an argument with `-` where the
/// program reads options (see the module's rule), once per argument.
pub(super) fn regex_options(
    c: &mut Checker<'_>,
    at: &str,
    analysis: &Analysis,
    arguments: &[Argument],
    values: &Values,
) {
    let holes = analysis
        .option_holes
        .iter()
        .filter_map(|(p, line)| match p {
            Placeholder::Argument(name) => Some((name.as_str(), format!("{p}"), *line)),
            Placeholder::Entity(_) => None,
        });
    let variables = analysis.leading.iter().filter_map(|(v, line)| {
        let (name, _) = values.variables.get(v)?;
        Some((name.as_str(), format!("\"${v}\""), *line))
    });
    // A value copied into a variable that starts an argument (`x=$V; rm "$x"`).
    let copies = copies(analysis, values).into_iter().map(|name| {
        (
            name.clone(),
            format!("a copy of argument {name:?}'s value"),
            0,
        )
    });
    let holes = holes.map(|(n, s, l)| (n.to_string(), s, l));
    let variables = variables.map(|(n, s, l)| (n.to_string(), s, l));
    let mut seen = BTreeSet::new();
    for (name, shown, line) in holes.chain(variables).chain(copies) {
        let Some(a) = arguments.iter().find(|a| a.name == name) else {
            continue;
        };
        if !may_lead(a) || !seen.insert(name.clone()) {
            continue;
        }
        c.error(at, message(&shown, line, a));
    }
}

/// The arguments whose value a variable that starts an argument before `--` may hold through
/// its assignments (`Analysis::starts`, followed through `Analysis::sources`).
fn copies(analysis: &Analysis, values: &Values) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut seen = BTreeSet::new();
    let mut todo: Vec<String> = analysis.starts.iter().cloned().collect();
    while let Some(v) = todo.pop() {
        if !seen.insert(v.clone()) {
            continue;
        }
        if let Some((name, _)) = values.variables.get(&v) {
            out.insert(name.clone());
        }
        for read in analysis.sources.get(&v).into_iter().flatten() {
            match read {
                Read::Hole(Placeholder::Argument(name)) => {
                    out.insert(name.clone());
                }
                Read::Variable(w) => todo.push(w.clone()),
                _ => {}
            }
        }
    }
    out
}

fn message(shown: &str, line: usize, a: &Argument) -> String {
    let pattern = match &a.rule {
        ArgType::Regex(p) => p.source().to_string(),
        _ => String::new(),
    };
    let on = if line == 0 {
        String::new()
    } else {
        format!(" on line {line}")
    };
    format!(
        "{shown} starts an argument{on} before any `--`, where the program reads a \
         value starting with `-` as an option (`find -delete` deletes, `tar -Ireboot` runs a \
         program, `ssh -oProxyCommand=…` too), and the pattern of argument {name:?} \
         (`{pattern}`) may match such a value: write `--` or `./` before it (`rm -- {shown}`; \
         `find` reads an argument after `--` as its expression still: `find ./{shown}`), make the pattern's first character one that is no `-` \
         (`^[A-Za-z0-9][A-Za-z0-9._-]{{0,254}}$`), or set `allowLeadingDash: true` on the \
         argument if the program may read the value as an option",
        name = a.name,
    )
}

#[cfg(test)]
mod tests {
    use crate::config::fixtures::{assert_error, ok};

    fn action(command: &str, pattern: &str, extra: &str) -> String {
        format!(
            "actions:\n  - title: x\n    {command}\n    arguments: [{{name: v, type: 'regex:{pattern}'{extra}}}]\n"
        )
    }

    /// fe30v F14: where a pattern that may start with `-` starts an argument before `--`.
    #[test]
    fn a_pattern_that_may_start_with_a_dash_is_refused_where_options_are_read() {
        let dashy = "^[A-Za-z0-9._-]{1,255}$";
        let refused: &[(&str, &str)] = &[
            (
                "shell: find {{ v }} -name '*.tmp' -delete",
                "actions[0].shell",
            ),
            ("shell: tar -cf x.tar -C /srv {{ v }}", "actions[0].shell"),
            ("shell: ssh {{ v }} uptime", "actions[0].shell"),
            ("shell: rm \"{{ v }}\"", "actions[0].shell"),
            ("shell: rm \"$ACTIOND_ARG_V\"", "actions[0].shell"),
            ("shell: rm \"$V\"", "actions[0].shell"),
            ("shell: x=$V; y=$x; rm \"$y\"", "actions[0].shell"),
            ("shell: find -- {{ v }} -delete", "actions[0].shell"),
            ("shell: ls {{ v }}{{ v }}", "actions[0].shell"),
            ("exec: [rm, '{{ v }}']", "actions[0].exec"),
            ("exec: [find, '{{ v }}', -delete]", "actions[0].exec"),
        ];
        for &(command, path) in refused {
            assert_error(&action(command, dashy, ""), path, "may match such a value");
        }
        let loads: &[(&str, &str, &str)] = &[
            ("shell: rm -- {{ v }}", dashy, ""),
            ("shell: rm -f -- \"$V\"", dashy, ""),
            ("shell: find ./{{ v }} -delete", dashy, ""),
            ("shell: find /srv/{{ v }} -delete", dashy, ""),
            ("shell: rm --file={{ v }}", dashy, ""),
            ("shell: echo {{ v }}", dashy, ""),
            ("exec: [rm, --, '{{ v }}']", dashy, ""),
            ("exec: [rm, 'x{{ v }}']", dashy, ""),
            (
                "shell: find {{ v }} -delete",
                "^[A-Za-z0-9][A-Za-z0-9._-]*$",
                "",
            ),
            ("shell: find {{ v }} -delete", "[a-z]+(?:[._-][a-z]+)*", ""),
            (
                "shell: find {{ v }} -delete",
                dashy,
                ", allowLeadingDash: true",
            ),
            (
                "shell: find {{ v }} -delete",
                dashy,
                ", choices: [{value: a}, {value: b}]",
            ),
        ];
        for &(command, pattern, extra) in loads {
            ok(&action(command, pattern, extra));
        }
    }
}
