//! The arguments a file trigger fills in (`execOnFileCreatedInDir`, `execOnFileChangedInDir`):
//! their names and titles, their declarations (added at config load to an action with a file
//! trigger, unless it declares one itself) and their values for one file. The values reach the
//! command through the same checks and quoting as any other argument; this module only names
//! them and never decides when a trigger fires.

use std::path::Path;

use super::{ArgType, Argument, Dash};

/// The arguments a file trigger fills, with OliveTin's names: the file's full path, its name,
/// its directory, its extension (without the dot, "" if none) and its size in bytes.
pub const FILE_ARGUMENTS: [(&str, &str); 5] = [
    ("filepath", "File path"),
    ("filename", "File name"),
    ("filedir", "Directory"),
    ("fileext", "File extension"),
    ("filesizebytes", "File size in bytes"),
];

/// Adds the file arguments an action with a file trigger does not declare itself. They take
/// any text (a file name may hold quotes, `;`, `$( )` or a newline), which the command gets
/// quoted like every other value, but a leading `-` (`-rf`, `--help`): no quoting keeps a
/// program from reading that as an option, so `settle` refuses it (`Dash::Refuse`, honoured
/// for a trigger's values whatever their type) and the file is not run for. An argument the
/// action declares under one of these names keeps its own type and `allowLeadingDash`: a file
/// whose name breaks them is not run for.
pub fn declare_file_arguments(arguments: &mut Vec<Argument>) {
    for (name, title) in FILE_ARGUMENTS {
        if arguments.iter().any(|a| a.name == name) {
            continue;
        }
        arguments.push(Argument {
            name: name.into(),
            title: title.into(),
            rule: ArgType::VeryDangerousRawString,
            default: None,
            choices: Vec::new(),
            description: "Filled in when a file trigger starts the action".into(),
            suggestions: Vec::new(),
            entity: None,
            reject_null: false,
            dash: Dash::Refuse,
            unknown_program: false,
            from_trigger: true,
        });
    }
}

/// The argument values for a file `name` in `dir` of `size` bytes, in `FILE_ARGUMENTS` order.
pub fn file_values(dir: &Path, name: &str, size: u64) -> Vec<(String, String)> {
    let dir_text = dir.to_string_lossy().into_owned();
    let path = dir.join(name).to_string_lossy().into_owned();
    let ext = Path::new(name)
        .extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_default();
    let values = [path, name.to_string(), dir_text, ext, size.to_string()];
    FILE_ARGUMENTS
        .iter()
        .zip(values)
        .map(|((n, _), v)| (n.to_string(), v))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_values_keep_hostile_names_as_text() {
        let cases = [
            ("report.pdf", "/in/report.pdf", "pdf"),
            ("; rm -rf ~", "/in/; rm -rf ~", ""),
            ("a'b\"c $(id).tar.gz", "/in/a'b\"c $(id).tar.gz", "gz"),
            ("line\nbreak", "/in/line\nbreak", ""),
            (".hidden", "/in/.hidden", ""),
        ];
        for (name, path, ext) in cases {
            let v = file_values(Path::new("/in"), name, 42);
            let got: Vec<(&str, &str)> = v.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
            assert_eq!(
                got,
                [
                    ("filepath", path),
                    ("filename", name),
                    ("filedir", "/in"),
                    ("fileext", ext),
                    ("filesizebytes", "42")
                ]
            );
        }
    }

    #[test]
    fn declared_file_arguments_keep_their_own_type() {
        let mut args = Vec::new();
        declare_file_arguments(&mut args);
        let names: Vec<&str> = args.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "filepath",
                "filename",
                "filedir",
                "fileext",
                "filesizebytes"
            ]
        );
        assert!(args.iter().all(|a| !a.reject_null && a.default.is_none()));
        let jpg = ArgType::parse("regex:.*\\.jpg", false).unwrap();
        let mut mine = vec![Argument {
            rule: jpg.clone(),
            ..args[1].clone()
        }];
        declare_file_arguments(&mut mine);
        assert_eq!(mine.len(), 5);
        assert_eq!(mine[0].rule, jpg);
    }
}
