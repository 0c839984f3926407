//! The fresh-eyes findings against the shell model, each run in the real shells: the
//! template with the value quoted as the model quotes its context (what a build that
//! accepted it ran) makes the shells named run the value (the marker file, or a file the
//! token run did not make), and the model now refuses it.

use std::collections::BTreeSet;

use super::{PRELUDE, SHELLS, TOKEN, compile, run, scratch};

/// How the model quotes the placeholder's context: `'…'` outside quotes, escaped inside
/// `"…"`.
#[derive(Clone, Copy)]
pub(crate) enum Quoting {
    Single,
    Double,
}

pub(crate) fn quote(value: &str, how: Quoting) -> String {
    match how {
        Quoting::Single => format!("'{}'", value.replace('\'', "'\\''")),
        Quoting::Double => {
            let mut out = String::new();
            for c in value.chars() {
                if matches!(c, '$' | '`' | '"' | '\\') {
                    out.push('\\');
                }
                out.push(c);
            }
            out
        }
    }
}

/// Each row: the template, the value, how its context is quoted, and the shells in which
/// that rendering runs the value (creates a file).
const ROWS: &[(&str, &str, Quoting, &[&str])] = &[
    // 1. bash expands the target of `>&` a second time.
    (
        "p a >&{{ v }}",
        "$(touch MARK)",
        Quoting::Single,
        &["bash", "bash --posix"],
    ),
    // 2. dash reads `||` inside `[[ ]]` as its own: the value names a command. (busybox ash
    // parses `[[` as bash does here, but other operators differ; the model refuses all.)
    (
        "[[ x == y || {{ v }} == MARK ]]",
        "touch",
        Quoting::Single,
        &["dash"],
    ),
    // 3. dash reads `p &> f w` as `p &` and `> f w`.
    (
        "p &> /dev/null {{ v }} MARK",
        "touch",
        Quoting::Single,
        &["dash"],
    ),
    // 4. `for NAME do` without `in` hid `eval` from the rules.
    (
        "set -- x; for i do eval p {{ v }}; done",
        ";touch MARK",
        Quoting::Single,
        &["dash", "bash", "bash --posix", "busybox ash"],
    ),
    // 5. bash evaluates a variable's value in arithmetic again: actiond's own variable for
    // the argument (set here as actiond sets it in the environment), or another.
    (
        "ACTIOND_ARG_V={{ v }}; p $(( ACTIOND_ARG_V ))",
        "a[$(touch MARK)]",
        Quoting::Single,
        &["bash", "bash --posix"],
    ),
    (
        "m={{ v }}; p $(( m ))",
        "a[$(touch MARK)]",
        Quoting::Single,
        &["bash", "bash --posix"],
    ),
    // 6. bash's `time -p` hid `eval` (`bash --posix` reads no option after `time`).
    (
        "time -p eval p {{ v }}",
        ";touch MARK",
        Quoting::Single,
        &["bash"],
    ),
    // 7. Scripts handed to another shell, or split again by `compgen -W`.
    (
        "sh -c \"p {{ v }}\"",
        ";touch MARK",
        Quoting::Double,
        &["dash", "bash", "bash --posix", "busybox ash"],
    ),
    (
        "compgen -W {{ v }} x",
        "$(touch MARK)",
        Quoting::Single,
        &["bash", "bash --posix"],
    ),
    // Found by this branch: a value in the environment of a program the command starts,
    // which bash expands and sources (`BASH_ENV`).
    (
        "BASH_ENV={{ v }} bash -c :",
        "$(touch MARK)",
        Quoting::Single,
        &["dash", "bash", "bash --posix", "busybox ash"],
    ),
    // fe30g F6: what reaches a shell's standard input is its script (here /bin/sh).
    ("echo {{ v }} | sh", "touch MARK", Quoting::Single, &ALL),
    (
        "V={{ v }}; sh <<E\n$V\nE",
        "touch MARK",
        Quoting::Single,
        &ALL,
    ),
    (
        "V={{ v }}; . /dev/stdin <<E\n$V\nE",
        "touch MARK",
        Quoting::Single,
        &ALL,
    ),
    // F8: programs that hand a word to `sh -c`, and `xargs -I` pasting what it reads into one.
    (
        "flock lock -c \"{{ v }}\"",
        "touch MARK",
        Quoting::Double,
        &ALL,
    ),
    (
        "printf '%s\\n' {{ v }} | xargs -I{} sh -c 'echo {}'",
        "x; touch MARK",
        Quoting::Single,
        &ALL,
    ),
    // F10: bash's arithmetic follows `m` to `n` and evaluates `n`'s value.
    (
        "m=n; n={{ v }}; p $(( m ))",
        "a[$(touch MARK)]",
        Quoting::Single,
        &["bash", "bash --posix"],
    ),
    // F11: bash's prompt expansion runs `$( )` in the value.
    (
        "V={{ v }}; p \"${V@P}\"",
        "$(touch MARK)",
        Quoting::Single,
        &["bash", "bash --posix"],
    ),
    // F14: the value is the program.
    ("{{ v }} MARK", "touch", Quoting::Single, &ALL),
    ("command {{ v }} MARK", "touch", Quoting::Single, &ALL),
    // fe30aa: the value is the program a wrapper the model does not know runs (`chrt`,
    // `runuser -u USER --`, `taskset`, `setpriv`), refused as an argument of an unknown
    // program whatever the wrapper.
    ("chrt -i 0 {{ v }} MARK", "touch", Quoting::Single, &ALL),
    (
        // By its path: the shells' PATH here may lack /usr/sbin.
        "/usr/sbin/runuser -u root -- {{ v }} MARK",
        "touch",
        Quoting::Single,
        &ALL,
    ),
    ("taskset 1 {{ v }} MARK", "touch", Quoting::Single, &ALL),
    (
        "setpriv --reuid 0 {{ v }} MARK",
        "touch",
        Quoting::Single,
        &ALL,
    ),
    // fe30aa task 2: a value inside an interpreter's program text is code.
    (
        "python3 -c \"print('{{ v }}')\"",
        "x'+str(__import__('os').system('touch MARK'))+'",
        Quoting::Double,
        &ALL,
    ),
    (
        "perl -e \"print '{{ v }}'\"",
        "x'; system('touch MARK'); print '",
        Quoting::Double,
        &ALL,
    ),
    // A value in a script piped into a shell, traced or not, and bash's `BASH_ENV` naming
    // standard input.
    (
        "V={{ v }}; echo \"rm -f -- /x/$V\" | sh -x",
        "x; touch MARK",
        Quoting::Single,
        &ALL,
    ),
    (
        "V={{ v }}; BASH_ENV=/dev/stdin bash -c true <<E\n$V\nE",
        "touch MARK",
        Quoting::Single,
        &ALL,
    ),
    // bash's arithmetic following actiond's own variable by name, and a subscript.
    (
        "export ACTIOND_ARG_V={{ v }}; bash -c 'm=ACTIOND_ARG_V; echo $(( m ))'",
        "a[$(touch MARK)]",
        Quoting::Single,
        &ALL,
    ),
    (
        "m=n; n={{ v }}; a[m]=1",
        "a[$(touch MARK)]",
        Quoting::Single,
        &["bash", "bash --posix"],
    ),
    // Prompt expansion of an inner shell's `$1`.
    (
        "bash -c 'echo \"${1@P}\"' sh {{ v }}",
        "$(touch MARK)",
        Quoting::Single,
        &ALL,
    ),
    // The trace prompt PS4 is expanded for each line `set -x` traces: by bash always, by
    // dash 0.5.12 and busybox 1.35 ash when it traces a function's body (`p x` here; for a
    // builtin such as `: x` they print "Syntax error" and run nothing).
    (
        "PS4={{ v }}; set -x; p x",
        "$(touch MARK)",
        Quoting::Single,
        &ALL,
    ),
    (
        "PS4=\"+ {{ v }} \"; set -x; p x",
        "$(touch MARK)",
        Quoting::Double,
        &ALL,
    ),
    (
        "PS4={{ v }}; set -x; : x",
        "$(touch MARK)",
        Quoting::Single,
        &["bash", "bash --posix"],
    ),
    (
        "bash -xc 'PS4=$1; :' sh {{ v }}",
        "$(touch MARK)",
        Quoting::Single,
        &ALL,
    ),
    // fe30s F5: bash's indirection through a positional parameter (`${!1}` names the
    // variable by the value) and `${!#}` (the last one itself) in arithmetic.
    (
        "bash -c 'echo \"${!1}\"' sh {{ v }}",
        "a[$(touch MARK)]",
        Quoting::Single,
        &ALL,
    ),
    (
        "bash -c 'echo $(( ${!#} * 60 ))' sh {{ v }}",
        "a[$(touch MARK)]",
        Quoting::Single,
        &ALL,
    ),
];

const ALL: [&str; 4] = ["dash", "bash", "bash --posix", "busybox ash"];

#[test]
#[ignore = "needs dash, bash and busybox: scripts/test.sh runs it (cargo test --test shells -- --ignored)"]
fn each_finding_injected_in_real_shells_and_is_now_refused() {
    let dir = scratch(900);
    let mut wrong = Vec::new();
    for &(text, value, how, want) in ROWS {
        // `sh -c` inside the script: the shell under test's own `p` is not there.
        let script = |v: &str| {
            let body = text.replace("{{ v }}", &quote(v, how));
            format!("{PRELUDE}{}", body.replace("\"p ", "\"printf %s "))
        };
        let mut injected = BTreeSet::new();
        for (name, shell) in SHELLS {
            // A file the token run did not make (named after the value) is the value run.
            let token = run(shell, &script(TOKEN), &dir);
            if run(shell, &script(value), &dir).injected(&token, value) {
                injected.insert(*name);
            }
        }
        let want: BTreeSet<&str> = want.iter().copied().collect();
        if injected != want {
            wrong.push(format!(
                "{text:?} with {value:?} ran in {injected:?}, expected {want:?}"
            ));
        }
        if let Ok(t) = compile(text) {
            wrong.push(format!(
                "{text:?} is accepted: {:?}",
                t.render(&|_| Some(value.to_string()))
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// One live row: a template with `{{ v }}` (and `{dir}` for the scratch directory), the
/// value, how the value's context is quoted, and whether the value runs there.
pub(crate) type Row = (&'static str, &'static str, Quoting, bool);

/// Runs each row in every shell, rendered as the model quotes the value (what a build that
/// accepted it ran), and checks the shells against `runs` and the model against it too: a
/// row that runs the value must be refused, one that does not must load.
pub(crate) fn check_rows(rows: &[Row], worker: usize) {
    let dir = scratch(worker);
    let at = dir.to_str().expect("utf-8 scratch dir");
    let mut wrong = Vec::new();
    for &(text, value, how, runs) in rows {
        let text = text.replace("{dir}", at);
        let script = |v: &str| text.replace("{{ v }}", &quote(v, how));
        for (name, shell) in SHELLS {
            let token = run(shell, &script(TOKEN), &dir);
            let ran = run(shell, &script(value), &dir).injected(&token, value);
            if ran != runs {
                wrong.push(format!("{text:?} with {value:?} in {name}: ran {ran}"));
            }
        }
        match (compile(&text), runs) {
            (Ok(_), true) => wrong.push(format!("{text:?} is accepted")),
            (Err(e), false) => wrong.push(format!("{text:?} is refused: {}", e.message)),
            _ => {}
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
