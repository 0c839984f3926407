//! Where a value copied out of `$NAME` is split, in the real shells, against what the model
//! flags (`template::unquoted`, which the config check refuses or warns about, and
//! `template::judge`): a variable assigned from the value (`x=$NAME`, `local`, `set --`,
//! `for`, `read`, `$( )`, `${!x}`) is split when it stands unquoted, exactly as `$NAME` is;
//! and once the command sets IFS, a value with no blank splits at IFS's characters
//! (`IFS=.` and `x.-r.victim`). Ordinary commands that quote their variables are split by no
//! shell and flagged by nothing.

use actiond::template::{Template, Values, judge, read_shell, stripped, unquoted};

use super::{PRELUDE, SHELLS, run, scratch};

/// The value of `ascii_sentence` that gives `rm` a `-r`.
const SENTENCE: &str = "old -r victim";
/// The value of `ascii_identifier` that IFS=. turns into `-r`.
const DOTTED: &str = "x.-r.victim";
/// An `email` value that globs (`a@x.y`, a file the row makes, is what splits out).
const GLOB: &str = "*@x.y";

/// Each row: the command (`p` prints each argument as `<arg>`, `{{ name }}` is rendered as
/// actiond renders it unquoted), the value, and the shells in which `-r` reached the program
/// as an argument of its own. The model flags every row that any shell splits, and none of
/// the rest.
const ROWS: &[(&str, &str, &[&str])] = &[
    // F2, a value copied into a variable. dash 0.5.12, bash 5.2 (plain and --posix) and
    // busybox 1.35 ash all printed <old><-r><victim> for each of these.
    ("x=$NAME; p $x", SENTENCE, &ALL),
    ("x={{ name }}; p $x", SENTENCE, &ALL),
    ("x=\"$NAME\"; p $x", SENTENCE, &ALL),
    ("x=${NAME}; p $x", SENTENCE, &ALL),
    ("x=${NAME%.txt}; p $x", SENTENCE, &ALL),
    ("x=${x:-$NAME}; p $x", SENTENCE, &ALL),
    ("y=$NAME; x=$y; p $x", SENTENCE, &ALL),
    ("f() { local x; x=\"$NAME\"; p $x; }; f", SENTENCE, &ALL),
    ("set -- \"$NAME\"; p $1", SENTENCE, &ALL),
    ("set -- \"$NAME\"; p $@", SENTENCE, &ALL),
    ("set -- \"$NAME\"; p $*", SENTENCE, &ALL),
    ("set -- \"$NAME\"; for x do p $x; done", SENTENCE, &ALL),
    ("for x in \"$NAME\"; do p $x; done", SENTENCE, &ALL),
    ("f() { p $1; }; f \"$NAME\"", SENTENCE, &ALL),
    ("read -r x <<E\n$NAME\nE\np $x", SENTENCE, &ALL),
    (
        "printf '%s\\n' \"$NAME\" | { read -r x; p $x; }",
        SENTENCE,
        &ALL,
    ),
    ("x=$(printf %s \"$NAME\"); p $x", SENTENCE, &ALL),
    ("eval 'x=$NAME'; p $x", SENTENCE, &ALL),
    // dash and ash stop at "bad substitution" (no output); bash splits.
    ("y=NAME; p ${!y}", SENTENCE, &["bash", "bash --posix"]),
    // An unquoted command substitution whose command reads the value, the value of
    // `${x:-WORD}`, a copy made by `${x:=WORD}`, a name joined across a line continuation,
    // and an inner shell's `$0`: all four printed <old><-r><victim> (dash 0.5.12, bash 5.2
    // plain and --posix, busybox 1.35 ash).
    ("p $(printf %s \"$NAME\")", SENTENCE, &ALL),
    ("p `printf %s \"$NAME\"`", SENTENCE, &ALL),
    (
        "for f in $(echo \"$NAME\"); do p \"$f\"; done",
        SENTENCE,
        &ALL,
    ),
    ("p ${x:-$NAME}", SENTENCE, &ALL),
    ("x=1; p ${x:+$NAME}", SENTENCE, &ALL),
    (": \"${f:=$NAME}\"; p $f", SENTENCE, &ALL),
    ("x=y; : ${x:+${y:=$NAME}}; p $y", SENTENCE, &ALL),
    ("p ${N\\\nAME}", SENTENCE, &ALL),
    ("p $\\\nNAME", SENTENCE, &ALL),
    ("sh -c 'printf \"<%s>\" $0' \"$NAME\"", SENTENCE, &ALL),
    // `read -s` is bash's and ash's (dash: "Illegal option -s", x stays empty); `mapfile`
    // and `DIRSTACK` are bash's (dash and ash: a syntax error, "bad substitution").
    ("read -rs x <<E\n$NAME\nE\np $x", SENTENCE, &SPLIT_READ_S),
    ("read -r -s x <<E\n$NAME\nE\np $x", SENTENCE, &SPLIT_READ_S),
    (
        "mapfile -t a <<E\n$NAME\nE\np ${a[@]}",
        SENTENCE,
        &["bash", "bash --posix"],
    ),
    (
        "mkdir -p \"$NAME\"; pushd \"$NAME\" >/dev/null 2>&1; p ${DIRSTACK[0]}",
        SENTENCE,
        &["bash", "bash --posix"],
    ),
    // F5, the command sets IFS: all four printed <x><-r><victim>.
    ("IFS=.; p $NAME", DOTTED, &ALL),
    ("export IFS=.; p $NAME", DOTTED, &ALL),
    ("f() { local IFS=.; p $NAME; }; f", DOTTED, &ALL),
    ("IFS=.; x=$NAME; p $x", DOTTED, &ALL),
    ("read -r IFS <<E\n.\nE\np $NAME", DOTTED, &ALL),
    ("for IFS in .; do p $NAME; done", DOTTED, &ALL),
    ("I\\\nFS=.; p $NAME", DOTTED, &ALL),
    // fe30g F7: a script a shell reads from its standard input splits its `$1` (the shell
    // started is /bin/sh, which has no `p`).
    (
        "printf '%s\\n' 'printf \"<%s>\" $1' | sh -s -- \"$NAME\"",
        SENTENCE,
        &ALL,
    ),
    (
        "sh -s -- \"$NAME\" <<'E'\nprintf '<%s>' $1\nE",
        SENTENCE,
        &ALL,
    ),
    (
        "sh /dev/stdin \"$NAME\" <<'E'\nprintf '<%s>' $1\nE",
        SENTENCE,
        &ALL,
    ),
    // F9: xargs splits what it reads, quoted or not.
    (
        "printf '%s\\n' \"$NAME\" | xargs printf '<%s>'",
        SENTENCE,
        &ALL,
    ),
    ("xargs printf '<%s>' <<E\n$NAME\nE", SENTENCE, &ALL),
    // actiond's own `$ACTIOND_ARG_NAME` (exported, as actiond sets it) behind the same
    // constructs: the word of `${x:-…}`, the copy `${x=…}` makes, a name joined across a line
    // continuation, and scripts that other programs hand to a shell: read from standard
    // input, `flock -c`, `script -c`, `trap`, and `xargs -I` pasting into `sh -c`.
    ("p ${x:-${ACTIOND_ARG_NAME}}", SENTENCE, &ALL),
    (": \"${x=$ACTIOND_ARG_NAME}\"; p $x", SENTENCE, &ALL),
    ("p $ACTIOND_ARG_\\\nNAME", SENTENCE, &ALL),
    ("p ${ACTIOND_ARG_\\\nNAME}", SENTENCE, &ALL),
    ("p $\\\nACTIOND_ARG_NAME", SENTENCE, &ALL),
    ("sh <<E\nprintf '<%s>' $NAME\nE", SENTENCE, &ALL),
    ("echo \"printf '<%s>' $NAME\" | sh", SENTENCE, &ALL),
    (
        "sh <<'E'\nprintf '<%s>' $ACTIOND_ARG_NAME\nE",
        SENTENCE,
        &ALL,
    ),
    (
        "echo 'printf \"<%s>\" $ACTIOND_ARG_NAME' | sh",
        SENTENCE,
        &ALL,
    ),
    (
        "flock ./L -c 'printf \"<%s>\" $ACTIOND_ARG_NAME'",
        SENTENCE,
        &ALL,
    ),
    (
        "script -qc 'printf \"<%s>\" $ACTIOND_ARG_NAME' /dev/null",
        SENTENCE,
        &ALL,
    ),
    ("trap 'p $ACTIOND_ARG_NAME' EXIT", SENTENCE, &ALL),
    (
        "printf '%s\\n' \"$NAME\" | xargs -I{} sh -c 'printf \"<%s>\" {}'",
        SENTENCE,
        &ALL,
    ),
    (
        "printf '%s\\n' {{ name }} | xargs printf '<%s>'",
        SENTENCE,
        &ALL,
    ),
    // `read -s` and `mapfile -t` in a shell that has them, whatever shell starts it.
    (
        "printf '%s\\n' \"$NAME\" | busybox sh -c 'read -rs x; printf \"<%s>\" $x'",
        SENTENCE,
        &ALL,
    ),
    (
        "bash -c 'mapfile -t a <<< \"$1\"; printf \"<%s>\" ${a[0]}' sh \"$NAME\"",
        SENTENCE,
        &ALL,
    ),
    // awk's `system()` runs `sh -c` on the string the program built, data and all; a
    // command that reads the value from the environment itself gets it whole.
    (
        "awk -v x=\"$NAME\" 'BEGIN{system(\"printf \\\"<%s>\\\" \" x)}'",
        SENTENCE,
        &ALL,
    ),
    (
        "awk 'BEGIN{system(\"printf \\\"<%s>\\\" \\\"$ACTIOND_ARG_NAME\\\"\")}'",
        SENTENCE,
        &[],
    ),
    // A command substitution that reads no variable, reading what the command wrote to a
    // file or a pipe: `$(< f.txt)` is bash's (dash and busybox ash read nothing).
    (
        "printf %s \"$NAME\" > f.txt; p $(cat f.txt)",
        SENTENCE,
        &ALL,
    ),
    (
        "printf %s \"$NAME\" > f.txt; p $(< f.txt)",
        SENTENCE,
        &["bash", "bash --posix"],
    ),
    (
        "printf %s \"$NAME\" > f.txt; d=$(cat f.txt); p $d",
        SENTENCE,
        &ALL,
    ),
    (
        "printf %s \"$NAME\" | sh -c 'printf \"<%s>\" $(cat)'",
        SENTENCE,
        &ALL,
    ),
    (
        "printf %s \"$NAME\" > f.txt; d=$(cat f.txt); p -- \"$d\" \"$(cat f.txt)\"",
        SENTENCE,
        &[],
    ),
    // Globs in an unquoted substitution's output: `*@x.y` names the files that match.
    ("touch a@x.y b@x.y; p $(printf %s \"$NAME\")", GLOB, &ALL),
    // Ordinary commands that quote: whole in every shell, flagged by nothing.
    ("x=$NAME; p \"$x\"", SENTENCE, &[]),
    ("x=\"$NAME\"; p -- \"$x\"", SENTENCE, &[]),
    ("x={{ name }}; p \"x-$x.txt\"", SENTENCE, &[]),
    ("set -- \"$NAME\"; p \"$1\"", SENTENCE, &[]),
    ("set -- \"$NAME\"; p \"$@\"", SENTENCE, &[]),
    ("for x in \"$NAME\"; do p \"$x\"; done", SENTENCE, &[]),
    ("f() { p \"$1\"; }; f \"$NAME\"", SENTENCE, &[]),
    ("read -r x <<E\n$NAME\nE\np \"$x\"", SENTENCE, &[]),
    (
        "printf '%s\\n' \"$NAME\" | while read -r l; do p \"$l\"; done",
        SENTENCE,
        &[],
    ),
    ("d=/tmp; n=3; p \"$NAME\"$n $d/x", SENTENCE, &[]),
    ("for f in a b; do p \"$NAME\" $f; done", SENTENCE, &[]),
    ("x=$((1 + 2)); p $x \"$NAME\"", SENTENCE, &[]),
    (
        "d=$(date +%F); p $d b-$(date +%F).tar \"$NAME\"",
        SENTENCE,
        &[],
    ),
    (
        "p \"$(printf %s \"$NAME\")\" \"${x:-$NAME}\"",
        SENTENCE,
        &[],
    ),
    ("read -rp '' x <<E\n$NAME\nE\np \"$x\"", SENTENCE, &[]),
    ("IFS=.; p \"$NAME\"", DOTTED, &[]),
    (
        "sh -s -- \"$NAME\" <<'E'\nprintf '<%s>' \"$1\"\nE",
        SENTENCE,
        &[],
    ),
    (
        "printf '%s\\0' \"$NAME\" | xargs -0 printf '<%s>'",
        SENTENCE,
        &[],
    ),
];

const ALL: [&str; 4] = ["dash", "bash", "bash --posix", "busybox ash"];
const SPLIT_READ_S: [&str; 3] = ["bash", "bash --posix", "busybox ash"];

/// One argument `name`, read as `{{ name }}`, `$ACTIOND_ARG_NAME` or `$NAME`.
fn values() -> Values {
    let mut v = Values {
        any: true,
        ..Values::default()
    };
    v.variables
        .insert("ACTIOND_ARG_NAME".into(), ("name".into(), false));
    v.variables.insert("NAME".into(), ("name".into(), true));
    v
}

#[test]
#[ignore = "needs dash, bash and busybox: scripts/test.sh runs it (cargo test --test shells -- --ignored)"]
fn copies_and_ifs_split_where_the_shells_do_and_the_model_flags_them() {
    let dir = scratch(902);
    let mut wrong = Vec::new();
    for &(text, value, want) in ROWS {
        let rendered = text.replace("{{ name }}", &format!("'{value}'"));
        // actiond sets the value in the environment and, for `$NAME`, in the shell.
        let script =
            format!("{PRELUDE}export ACTIOND_ARG_NAME='{value}'\nNAME='{value}'\n{rendered}");
        let mut split = Vec::new();
        for (name, shell) in SHELLS {
            // Split: `-r` reached the program as an argument of its own (or a glob matched).
            let got = run(shell, &script, &dir).stdout;
            let got = String::from_utf8_lossy(&got);
            if got.contains("<-r>") || got.contains("<a@x.y>") {
                split.push(*name);
            }
        }
        if split != want {
            wrong.push(format!("{text:?} split in {split:?}, expected {want:?}"));
        }
        let (_, analysis) = read_shell(text).unwrap_or_else(|e| panic!("{text:?}: {e:?}"));
        // The rows' program `p` is the prelude's printer, which the model does not know (a
        // refusal of its own, `findings`), nor whether it reads its input (the loop's, which
        // holds the value) as code: only the splitting is weighed here.
        let flagged = judge(text, &analysis, &values()).is_err_and(|e| {
            let e = e.to_string();
            !e.contains("a program actiond does not know")
                && !e.contains("the standard input of a program not known to read it")
        }) || !unquoted(&analysis, &values()).is_empty();
        if flagged == want.is_empty() {
            wrong.push(format!("{text:?}: flagged {flagged}"));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// bash's brace expansion puts what follows a group first in a word (`{,x}-rf` is `-rf` and
/// `x-rf`; dash and busybox ash keep `{,x}-rf` as it is), so a value after brace groups may
/// start its word and is checked like one that starts it.
#[test]
#[ignore = "needs dash, bash and busybox: scripts/test.sh runs it (cargo test --test shells -- --ignored)"]
fn a_value_after_a_brace_group_starts_its_word_in_bash() {
    let dir = scratch(903);
    let mut first = Vec::new();
    for (name, shell) in SHELLS {
        let got = run(shell, &format!("{PRELUDE}p {{,x}}'-rf'"), &dir).stdout;
        if String::from_utf8_lossy(&got).starts_with("<-rf>") {
            first.push(*name);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(first, ["bash", "bash --posix"]);
    let t = Template::shell("p {,x}{{ name }}").unwrap();
    assert_eq!(t.leading().count(), 1);
}

/// Each row: a command whose first argument is the value changed by an expansion or by a
/// command substitution's command, an `ascii_identifier` value (which may not start with
/// `-`), and the shells in which the program got `-rf` as its first argument: an option. The
/// model flags (`template::stripped`) every row some shell makes an option of, and none of
/// the rest, where `--` or `./` comes first or nothing reads the value.
const DASHES: &[(&str, &str, &[&str])] = &[
    ("p \"${NAME#*.}\" victim", "backup.-rf", &ALL),
    ("p \"${NAME#x}\"", "x-rf", &ALL),
    ("p \"${NAME##*.}\"", "a.-rf", &ALL),
    ("x=\"$NAME\"; p \"${x#?}\"", "x-rf", &ALL),
    // dash has no `${x//p/r}`: "bad substitution".
    (
        "p \"${NAME//_/-}\"",
        "_rf",
        &["bash", "bash --posix", "busybox ash"],
    ),
    // A command substitution whose command changes the value.
    ("p \"$(printf %s \"$NAME\" | tr _ -)\"", "_rf", &ALL),
    ("p `printf %s \"$NAME\" | tr _ -`", "_rf", &ALL),
    (
        "p -- \"$(printf %s \"$NAME\" | tr _ -)\" \"${NAME#x}\"",
        "x_rf",
        &[],
    ),
    // Through a file the command wrote, and through `read`, which also drops leading blanks
    // (an `ascii_sentence` value may start with one).
    (
        "printf %s \"$NAME\" | tr _ - > f; p \"$(cat f)\"",
        "_rf",
        &ALL,
    ),
    // `$(< f)` is bash's: dash and ash print nothing.
    (
        "printf %s \"$NAME\" | tr _ - > f; x=$(< f); p \"$x\"",
        "_rf",
        &["bash", "bash --posix"],
    ),
    (
        "printf %s \"$NAME\" | tr _ - > f; x=$(cat f); p \"$x\"",
        "_rf",
        &ALL,
    ),
    (
        "printf '%s\\n' \"$NAME\" | tr _ - | while read -r l; do p \"$l\"; done",
        "_rf",
        &ALL,
    ),
    (
        "printf '%s\\n' \"$NAME\" | while read -r l; do p \"$l\"; done",
        " -rf",
        &ALL,
    ),
    ("printf %s \"$NAME\" > f; p -- \"$(cat f)\"", "_rf", &[]),
    // A copy of the part (fe30m F10).
    ("h=${NAME#*.}; p \"$h\"", "x.-rf", &ALL),
    ("h=\"${NAME#*.}\"; p -- \"$h\"", "x.-rf", &[]),
    (
        "echo \"$NAME\"; while read -r l; do p \"$l\"; done < /etc/hostname",
        "_rf",
        &[],
    ),
    ("p ./\"${NAME#*.}\"", "backup.-rf", &[]),
    ("p \"$(date +%F)\" \"$NAME\"", "_rf", &[]),
];

#[test]
#[ignore = "needs dash, bash and busybox: scripts/test.sh runs it (cargo test --test shells -- --ignored)"]
fn a_changed_value_at_the_start_of_an_argument_becomes_an_option_and_is_flagged() {
    let dir = scratch(904);
    let mut wrong = Vec::new();
    for &(text, value, want) in DASHES {
        let script = format!("{PRELUDE}NAME='{value}'\n{text}");
        let mut option = Vec::new();
        for (name, shell) in SHELLS {
            let got = run(shell, &script, &dir).stdout;
            if got.starts_with(b"<-rf>") {
                option.push(*name);
            }
        }
        if option != want {
            wrong.push(format!(
                "{text:?} made -rf in {option:?}, expected {want:?}"
            ));
        }
        let (_, analysis) = read_shell(text).unwrap_or_else(|e| panic!("{text:?}: {e:?}"));
        let flagged = !stripped(&analysis, &values()).is_empty();
        if flagged == want.is_empty() {
            wrong.push(format!("{text:?}: flagged {flagged}"));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
