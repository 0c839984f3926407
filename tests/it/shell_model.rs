//! The shell model through the real binary: templates that once passed the config check
//! and let a value run under dash are now refused at load, with their YAML path and the fix
//! (`exec:` or `"$NAME"`), or, where the model now reads them as the shell does, run with the
//! value intact. Also the placeholders and variables bash would evaluate as arithmetic, and the
//! warning for a password on the command line.

use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{Finished, Server, TempDir, config_with, files_in, run_binary, to_yaml};

const BOUND: Duration = Duration::from_secs(20);

/// An action `t` running `shell` with one argument `v` of type `kind`.
fn action(shell: &str, kind: &str) -> Value {
    json!({
        "id": "t",
        "title": "T",
        "shell": shell,
        "arguments": [{"name": "v", "type": kind}],
    })
}

fn check(config: &Value) -> Finished {
    let dir = TempDir::new();
    let path = dir.path().join("config.yaml");
    std::fs::write(&path, to_yaml(config)).expect("write config");
    run_binary(
        &["--check-config", path.to_str().expect("utf-8 path")],
        dir.path(),
        BOUND,
    )
}

/// The config check refuses `shell` (exit 2) at `actions[0].shell`, saying `why` and how to
/// fix it.
fn assert_refused(shell: &str, kind: &str, why: &str) {
    let run = check(&config_with(vec![action(shell, kind)]));
    let out = format!("{}{}", run.stdout, run.stderr);
    assert_eq!(run.status.code(), Some(2), "{shell:?} was accepted:\n{out}");
    assert!(
        out.contains("actions[0].shell"),
        "{shell:?}: no YAML path:\n{out}"
    );
    assert!(
        out.contains(why),
        "{shell:?}: not refused for {why:?}:\n{out}"
    );
    assert!(
        out.contains("exec:") && out.contains("\"$ACTIOND_ARG_NAME\""),
        "{shell:?}: no fix offered:\n{out}"
    );
}

/// The four templates that passed `--check-config` although a value then ran under dash.
#[test]
fn the_four_templates_that_let_a_value_run_are_refused_or_read_right() {
    // `)` of a case pattern inside `$( )` is not the end of the `$( )`.
    assert_refused(
        "echo \"$(case a in a) echo {{ v }};; esac)\"",
        "very_dangerous_raw_string",
        "inside $( )",
    );
    for (kind, shell) in [
        (
            "url",
            "echo \"Result: $(case \"$MODE\" in fast) curl -sI {{ v }};; *) echo {{ v }};; esac)\"",
        ),
        ("email", "echo \"$(case a in a) echo {{ v }};; esac)\""),
    ] {
        assert_refused(shell, kind, "inside $( )");
    }
    // A backslash-newline in an unquoted here-document body hides the delimiter line.
    assert_refused(
        "cat <<EOF\nx\\\nEOF\n{{ v }}\nEOF",
        "very_dangerous_raw_string",
        "a placeholder inside a here-document",
    );
    // A single quote inside a double-quoted `${ }`: a quote to bash, a character to dash.
    assert_refused(
        "echo \"${x:-'}\" '}{{ v }}'",
        "very_dangerous_raw_string",
        "inside `${ }`",
    );
    // A comment right after `$(`: the model now reads it as the shells do, so the value
    // stands unquoted and is quoted as such. It arrives intact and runs nothing.
    let server = Server::start(config_with(vec![action(
        "printf '[%s]' $(#\"\n)\")\" {{ v }} #\"",
        "very_dangerous_raw_string",
    )]));
    let value = "a\n;touch MARK\n$(touch MARK)'\"`touch MARK`";
    let entry = server.ok(
        "StartActionAndWait",
        json!({"actionId": "t", "arguments": [{"name": "v", "value": value}]}),
    )["logEntry"]
        .clone();
    assert_eq!(entry["stdout"], format!("[)][{value}]"), "{entry}");
    assert_eq!(entry["exitCode"], 0, "{entry}");
    let files = files_in(server.dir());
    assert!(!files.iter().any(|f| f == "MARK"), "a value ran: {files:?}");
}

/// A here-document line that is its delimiter only once a line continuation is removed: bash
/// ends the body there, dash (Debian's `/bin/sh`) and busybox ash read on, so the placeholders
/// below stand in an unquoted body where `$( )` and backticks in a value run. The config check
/// refuses them, saying why and what to do instead.
#[test]
fn a_delimiter_split_by_a_continuation_is_refused() {
    let template = "cat <<EOF\nEO\\\nF\necho {{ site }} {{ mail }}\nEOF";
    let config = config_with(vec![json!({
        "id": "t",
        "title": "T",
        "shell": template,
        "arguments": [
            {"name": "site", "type": "url"},
            {"name": "mail", "type": "email"},
        ],
    })]);
    let run = check(&config);
    let out = format!("{}{}", run.stdout, run.stderr);
    assert_eq!(
        run.status.code(),
        Some(2),
        "{template:?} was accepted:\n{out}"
    );
    for want in [
        "actions[0].shell",
        "{{ site }}",
        "delimiter only once a line continuation is removed",
        "exec:",
        "\"$ACTIOND_ARG_NAME\"",
    ] {
        assert!(out.contains(want), "{want:?} missing:\n{out}");
    }
}

/// Where all four shells remove a continuation (inside a word, an operator, a reserved word, a
/// here-document delimiter, after `$`), the model reads the command as they do and the value
/// arrives intact under the board's `/bin/sh`.
#[test]
fn continuations_the_shells_agree_on_keep_the_value_intact() {
    let server = Server::start(config_with(vec![action(
        "ca\\\nt <\\\n<EO\\\nF\nbody $\\\n(echo x)\nEOF\ntrue &\\\n& x=h; printf '[%s]' \\\n{{ v }} \"$\\\n{x\\\n}{{ v }}\"",
        "very_dangerous_raw_string",
    )]));
    let value = "a\nEOF\n;touch MARK\n$(touch MARK)'\"`touch MARK`\\";
    let entry = server.ok(
        "StartActionAndWait",
        json!({"actionId": "t", "arguments": [{"name": "v", "value": value}]}),
    )["logEntry"]
        .clone();
    assert_eq!(
        entry["stdout"],
        format!("body x\n[{value}][h{value}]"),
        "{entry}"
    );
    let files = files_in(server.dir());
    assert!(!files.iter().any(|f| f == "MARK"), "a value ran: {files:?}");
}

/// `[[ n -eq 1 ]]` makes bash evaluate `n` as arithmetic, where `a[$(cmd)]` runs cmd.
#[test]
fn placeholders_bash_evaluates_as_arithmetic_or_names_are_refused() {
    assert_refused("[[ {{ v }} -eq 1 ]] && echo one", "int", "arithmetic");
    assert_refused("[[ 1 -lt \"{{ v }}\" ]]", "int", "arithmetic");
    assert_refused("read -r {{ v }} </dev/null", "ascii", "`read`");
    assert_refused("printf -v {{ v }} %s x", "ascii", "`printf`");
    assert_refused("(( {{ v }} > 1 ))", "int", "inside (( ))");
    // The same comparison in `[ ]` is plain text to every shell.
    let run = check(&config_with(vec![action(
        "[ {{ v }} -eq 1 ] && echo one",
        "int",
    )]));
    assert_eq!(run.status.code(), Some(0), "{}{}", run.stdout, run.stderr);
}

/// bash evaluates a variable's value inside arithmetic again (`N='a[$(cmd)]'` runs cmd in
/// `$(( N ))`), through the environment too and in a script the command starts: only an
/// argument of `type: int` may be read there, and then the command runs with it.
#[test]
fn a_variable_in_arithmetic_needs_an_int_argument() {
    for shell in [
        "echo $(( V * 2 ))",
        "echo $(( ACTIOND_ARG_V * 2 ))",
        "sh -c 'echo $(( ACTIOND_ARG_V * 2 ))'",
    ] {
        assert_refused(shell, "ascii", "type: int");
        let server = Server::start(config_with(vec![action(shell, "int")]));
        let entry = server.ok(
            "StartActionAndWait",
            json!({"actionId": "t", "arguments": [{"name": "v", "value": "21"}]}),
        )["logEntry"]
            .clone();
        assert_eq!(entry["stdout"], "42\n", "{shell:?}: {entry}");
    }
    // A placeholder inside the script of `sh -c` is code to that shell.
    assert_refused("sh -c \"echo {{ v }}\"", "ascii", "the script of `sh -c`");
}

/// A password on the command line is readable with `ps`: the check warns and names the
/// environment variable to use instead.
#[test]
fn a_password_on_the_command_line_is_a_warning_naming_the_variable() {
    let run = check(&config_with(vec![action(
        "curl -fsS -u admin:{{ v }} http://127.0.0.1/",
        "password",
    )]));
    let out = format!("{}{}", run.stdout, run.stderr);
    assert_eq!(run.status.code(), Some(0), "{out}");
    assert!(
        out.contains("actions[0].shell") && out.contains("\"$V\"") && out.contains("ps"),
        "{out}"
    );
    let mut exec = action("true", "password");
    exec.as_object_mut().unwrap().remove("shell");
    exec["exec"] = json!(["curl", "-uadmin:{{ v }}", "http://127.0.0.1/"]);
    let run = check(&config_with(vec![exec]));
    let out = format!("{}{}", run.stdout, run.stderr);
    assert_eq!(run.status.code(), Some(0), "{out}");
    assert!(
        out.contains("actions[0].exec[1]") && out.contains("environment variable V"),
        "{out}"
    );
    // Read from the environment, it is no warning at all.
    let run = check(&config_with(vec![action(
        "mysql -p\"$V\" -e 'select 1'",
        "password",
    )]));
    let out = format!("{}{}", run.stdout, run.stderr);
    assert!(!out.contains("password on the command line"), "{out}");
}
